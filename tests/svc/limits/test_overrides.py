"""The per-tenant limits lookup and the runtime overrides file (LIMITS.md §3)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from prometheus_client import CollectorRegistry

from svc.config import Config, config_from_yaml, validate_config
from svc.limits.merge import merged_limits
from svc.limits.overrides import Overrides, RuntimeConfigError


def _config(tmp_path: Path, *documents: str, extra: str = "") -> Config:
    files = []
    for index, document in enumerate(documents):
        path = tmp_path / f"runtime{index}.yaml"
        path.write_text(document)
        files.append(str(path))
    text = f"runtime_config: {{file: '{','.join(files)}', period: 1s}}\n{extra}"
    return config_from_yaml(text)


def test_tenant_block_starts_from_limits_config(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        "overrides:\n  a:\n    ingestion_rate_mb: 10\n    max_line_size: 1KB\n",
        extra="limits_config: {max_label_names_per_series: 7}",
    )
    overrides = Overrides(config)
    limits = overrides.limits_for("a")
    assert limits.ingestion_rate_mb == 10.0
    assert limits.max_line_size == 1024
    assert limits.max_label_names_per_series == 7  # from limits_config
    assert overrides.limits_for("b") is config.limits_config


def test_files_merge_left_to_right_over_inline_overrides(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        "overrides: {a: {max_line_size: 100}}",
        "overrides: {a: {max_label_names_per_series: 3}, b: {max_line_size: 5}}",
        extra="overrides: {a: {max_line_size: 50, max_streams_per_user: 9}}",
    )
    overrides = Overrides(config)
    a = overrides.limits_for("a")
    assert (a.max_line_size, a.max_label_names_per_series, a.max_streams_per_user) == (100, 3, 9)
    assert overrides.limits_for("b").max_line_size == 5


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param(
            "overrides: {t: {retention_stream: [{selector: '{a=\"b\"}', priority: 1, "
            "period: 12h}]}}",
            "invalid override for tenant t: retention period must be >= 24h was 12h",
            id="short-stream-retention",
        ),
        pytest.param(
            "overrides: {t: {deletion_mode: sometimes}}",
            "invalid override for tenant t: unknown deletion mode: must be one of "
            "disabled|filter-only|filter-and-delete",
            id="deletion-mode",
        ),
        pytest.param(
            "overrides: {t: {retention_stream: [{selector: 'nope', period: 48h}]}}",
            "invalid override for tenant t: invalid labels matchers: ",
            id="bad-selector",
        ),
        pytest.param(
            "overrides: {t: {no_such_limit: 1}}",
            "invalid override for tenant t: field no_such_limit not found in type validation.plain",
            id="unknown-key",
        ),
        pytest.param(
            "overrides: {t: {max_line_size: lots}}",
            "invalid override for tenant t: max_line_size: ",
            id="bad-size",
        ),
        pytest.param("nonsense: 1", "field nonsense not found", id="unknown-top-level-key"),
        pytest.param("configs: {t: {log_everything: true}}", "log_everything", id="bad-configs"),
    ],
)
def test_invalid_file_fails_the_start(tmp_path: Path, document: str, message: str) -> None:
    with pytest.raises(RuntimeConfigError) as caught:
        Overrides(_config(tmp_path, document))
    assert caught.value.message.startswith("failed to load runtime config: load file: ")
    assert message in caught.value.message


def test_missing_file_fails_the_start(tmp_path: Path) -> None:
    config = config_from_yaml(f"runtime_config: {{file: {tmp_path / 'nope.yaml'}}}")
    with pytest.raises(RuntimeConfigError) as caught:
        Overrides(config)
    assert caught.value.message == (
        f'failed to load runtime config: read file "{tmp_path / "nope.yaml"}": '
        f"open {tmp_path / 'nope.yaml'}: no such file or directory"
    )


def test_null_tenant_block_is_skipped(tmp_path: Path) -> None:
    config = _config(tmp_path, "overrides:\n  t:\n")
    assert Overrides(config).limits_for("t") is config.limits_config


def test_reload_applies_changes_and_keeps_the_previous_values_when_broken(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, "overrides: {t: {max_line_size: 100}}")
    registry = CollectorRegistry()
    overrides = Overrides(config, registry)
    path = tmp_path / "runtime0.yaml"

    def gauge() -> float | None:
        return registry.get_sample_value(
            "svc_runtime_config_last_reload_successful", {"config": "svc"}
        )

    assert gauge() == 1.0
    path.write_text("overrides: {t: {max_line_size: 200}}")
    assert overrides.reload()
    assert overrides.limits_for("t").max_line_size == 200
    path.write_text("overrides: {t: {max_line_size: [}")
    assert not overrides.reload()
    assert gauge() == 0.0
    assert overrides.limits_for("t").max_line_size == 200
    path.write_text("overrides: {t: {deletion_mode: never}}")
    assert not overrides.reload()
    assert overrides.limits_for("t").max_line_size == 200
    path.write_text("overrides: {t: {max_line_size: 300}}")
    assert overrides.reload()
    assert gauge() == 1.0
    assert overrides.limits_for("t").max_line_size == 300


def test_runtime_config_page_modes(tmp_path: Path) -> None:
    config = _config(tmp_path, "overrides: {t: {max_line_size: 1MB, ingestion_rate_mb: 8}}")
    overrides = Overrides(config)
    everything = yaml.safe_load(overrides.runtime_yaml(None))
    assert everything["overrides"]["t"]["max_line_size"] == "1MB"
    assert everything["overrides"]["t"]["max_label_names_per_series"] == 15
    assert everything["multi_kv_config"] == {"primary": "", "mirror_enabled": None}
    diff = yaml.safe_load(overrides.runtime_yaml("diff"))
    assert diff == {"overrides": {"t": {"max_line_size": "1MB", "ingestion_rate_mb": 8.0}}}
    assert Overrides(Config()).runtime_yaml(None) == "runtime config file doesn't exist"


def test_limits_config_errors_are_prefixed() -> None:
    config = config_from_yaml("limits_config: {deletion_mode: sometimes}")
    assert validate_config(config) == [
        "CONFIG ERROR: invalid limits_config config: unknown deletion mode: must be one of "
        "disabled|filter-only|filter-and-delete"
    ]


def test_multi_tenant_limits_take_the_smallest_positive_value(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        "overrides:\n"
        "  a: {max_query_series: 10, max_query_lookback: 0s, tsdb_max_query_parallelism: 0}\n"
        "  b: {max_query_series: 20, max_query_lookback: 1h, volume_enabled: false}\n",
    )
    overrides = Overrides(config)
    merged = merged_limits([overrides.limits_for("a"), overrides.limits_for("b")])
    assert merged.max_query_series == 10
    assert merged.max_query_lookback == 3600.0
    assert merged.tsdb_max_query_parallelism == 0
    assert merged.volume_enabled is False

"""The ``compactor:`` block and the retention limits: defaults, the SPEC 7.2 compactor
errors, stream rule checks, and ``-verify-config``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from svc.compactor.config import retention_interval_seconds
from svc.compactor.limits import deletion_mode, retention_period, retention_streams
from svc.config import config_from_yaml, config_to_dict, validate_config
from svc.limits.overrides import Overrides

STORE = {"retention_enabled": True, "delete_request_store": "filesystem"}


def _errors(document: dict[str, Any]) -> list[str]:
    return validate_config(config_from_yaml(yaml.safe_dump(document)))


def test_reference_defaults() -> None:
    block = config_to_dict(config_from_yaml(None))["compactor"]
    assert {k: block[k] for k in (
        "working_directory", "compaction_interval", "apply_retention_interval",
        "retention_enabled", "retention_delete_delay", "retention_delete_worker_count",
        "delete_request_store", "delete_request_store_key_prefix",
        "delete_request_store_db_type", "delete_batch_size", "delete_request_cancel_period",
        "delete_max_interval", "max_compaction_parallelism", "upload_parallelism",
        "horizontal_scaling_mode",
    )} == {
        "working_directory": "", "compaction_interval": "10m", "apply_retention_interval": "0s",
        "retention_enabled": False, "retention_delete_delay": "2h",
        "retention_delete_worker_count": 150, "delete_request_store": "",
        "delete_request_store_key_prefix": "index/", "delete_request_store_db_type": "boltdb",
        "delete_batch_size": 70, "delete_request_cancel_period": "1d",
        "delete_max_interval": "1d", "max_compaction_parallelism": 1,
        "upload_parallelism": 10, "horizontal_scaling_mode": "disabled",
    }  # fmt: skip
    limits = config_to_dict(config_from_yaml(None))["limits_config"]
    assert (limits["deletion_mode"], limits["retention_period"], limits["retention_stream"]) == (
        "filter-and-delete",
        "0s",
        [],
    )


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"compactor": {"retention_enabled": True}},
            "CONFIG ERROR: invalid compactor config: compactor.delete-request-store should be "
            "configured when retention is enabled",
        ),
        (
            {"compactor": {"max_compaction_parallelism": 0}},
            "CONFIG ERROR: invalid compactor config: max compaction parallelism must be >= 1",
        ),
        (
            {"compactor": {"delete_request_store_db_type": "postgres"}},
            "unexpected delete requests store DB type postgres. Supported types: (boltdb, sqlite)",
        ),
        (
            {"compactor": {**STORE, "deletion_marker_object_store_prefix": "markers"}},
            "CONFIG ERROR: invalid compactor config: deletion marker object store prefix must "
            "end with /",
        ),
        (
            {"compactor": {**STORE, "delete_request_store_key_prefix": "/index/"}},
            "CONFIG ERROR: invalid compactor config: validate delete store path prefix: prefix "
            "should never start with a path separator i.e '/'",
        ),
        (
            {"target": "querier", "compactor": STORE},
            "query filtering for deletes requires 'compactor_grpc_address' or "
            "'compactor_address' to be configured",
        ),
        (
            {"limits_config": {"retention_stream": [{"selector": '{a="b"}', "period": "12h"}]}},
            "CONFIG ERROR: invalid limits_config config: retention period must be >= 24h was 12h",
        ),
        (
            {"limits_config": {"retention_stream": [{"selector": "{a", "period": "48h"}]}},
            "CONFIG ERROR: invalid limits_config config: invalid labels matchers: parse error "
            "at line 1, col 3: syntax error: unexpected $end, expecting = or =~ or !~ or !=",
        ),
        (
            {"overrides": {"t": {"retention_stream": [{"selector": '{a="b"}', "period": "1h"}]}}},
            "invalid override for tenant t: retention period must be >= 24h was 1h",
        ),
        ({"compactor": {"compaction_level": 23}}, "compactor.compaction_level must be 1 to 22, not 23"),
    ],
)  # fmt: skip
def test_startup_errors(document: dict[str, Any], message: str) -> None:
    assert _errors(document) == [message]


@pytest.mark.parametrize(
    "document",
    [
        {"compactor": STORE},
        {"target": "querier", "compactor": STORE, "common": {"compactor_address": "c:3100"}},
        {"target": "backend", "compactor": STORE},
        {"target": "querier"},  # no retention: no delete filtering
        {"compactor": {"deletion_marker_object_store_prefix": "markers"}},  # checked with retention
    ],
)
def test_valid_configs(document: dict[str, Any]) -> None:
    assert _errors(document) == []


@pytest.mark.parametrize(
    ("compaction", "apply", "interval"),
    [("10m", "0s", 900.0), ("10m", "10m", 900.0), ("40m", "0s", 3000.0), ("10m", "1h", 3600.0)],
)
def test_retention_interval(compaction: str, apply: str, interval: float) -> None:
    config = config_from_yaml(
        yaml.safe_dump(
            {"compactor": {"compaction_interval": compaction, "apply_retention_interval": apply}}
        )
    )
    assert retention_interval_seconds(config.compactor) == interval


def test_tenant_limits_override_the_global_ones() -> None:
    config = config_from_yaml(
        yaml.safe_dump(
            {
                "limits_config": {
                    "retention_period": "744h",
                    "deletion_mode": "filter-only",
                    "retention_stream": [{"selector": '{a="b"}', "priority": 1, "period": "48h"}],
                },
                "overrides": {
                    "t": {
                        "retention_period": "24h",
                        "retention_stream": [],
                        "deletion_mode": "disabled",
                    },
                    "u": {"retention_period": "0s"},
                },
            }
        )
    )
    limits = Overrides(config).limits_for
    periods = [retention_period(limits(t)) for t in ("t", "u", "v")]
    assert periods == [86400.0, 0.0, 744 * 3600.0]
    assert retention_streams(limits("t")) == []  # its own list replaces the global one
    assert [r.period for r in retention_streams(limits("u"))] == [48 * 3600.0]  # inherited
    assert [deletion_mode(limits(t)) for t in ("t", "u")] == ["disabled", "filter-only"]


def test_verify_config_prints_the_compactor_errors(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump({"compactor": {"retention_enabled": True, "max_compaction_parallelism": 0}})
    )
    done = subprocess.run(
        [sys.executable, "-m", "svc", f"-config.file={path}", "-verify-config"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr == (
        "error: CONFIG ERROR: invalid compactor config: max compaction parallelism must be >= 1\n"
    )

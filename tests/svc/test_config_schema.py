"""``schema_config`` and ``overrides``: parsing, defaults and the SPEC 7.2 start-up errors."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from svc.config import (
    Config,
    ConfigError,
    IndexTablesConfig,
    PeriodConfig,
    active_period,
    config_from_yaml,
    config_to_dict,
    validate_config,
)
from svc.limits.overrides import Overrides

SCHEMA_ERROR = (
    "CONFIG ERROR: schema v13 is required to store Structured Metadata and use native OTLP "
    "ingestion, your schema version is {schema}. Set `allow_structured_metadata: false` in the "
    "`limits_config` section or set the command line argument "
    "`-validation.allow-structured-metadata=false` and restart svc. Then proceed to update to "
    "schema v13 or newer before re-enabling this config, search for 'Storage Schema' in the "
    "docs for the schema update procedure"
)
INDEX_ERROR = (
    "CONFIG ERROR: `tsdb` index type is required to store Structured Metadata and use native "
    "OTLP ingestion, your index type is `{store}` (defined in the `store` parameter of the "
    "schema_config). Set `allow_structured_metadata: false` in the `limits_config` section or "
    "set the command line argument `-validation.allow-structured-metadata=false` and restart "
    "svc. Then proceed to update the schema to use index type `tsdb` before re-enabling this "
    "config, search for 'Storage Schema' in the docs for the schema update procedure"
)


def _period(**values: object) -> dict[str, object]:
    period: dict[str, object] = {
        "from": "2020-10-24",
        "store": "tsdb",
        "object_store": "filesystem",
        "schema": "v13",
        "index": {"prefix": "index_", "period": "24h"},
    }
    period.update(values)
    return period


def _errors(*periods: dict[str, object], allow_structured_metadata: bool = True) -> list[str]:
    document = {
        "schema_config": {"configs": list(periods)},
        "limits_config": {"allow_structured_metadata": allow_structured_metadata},
    }
    return validate_config(config_from_yaml(yaml.safe_dump(document)))


def test_default_is_one_v13_tsdb_period() -> None:
    config = Config()
    assert config.schema_config.configs == [
        PeriodConfig(
            from_="2020-10-24",
            store="tsdb",
            object_store="filesystem",
            schema="v13",
            index=IndexTablesConfig(prefix="index_", period=86400.0),
        )
    ]
    assert validate_config(config) == []


def test_periods_parse_from_yaml_with_defaults_and_round_trip() -> None:
    text = """
schema_config:
  configs:
    - from: 2023-01-05
      store: tsdb
      schema: v13
      index:
        prefix: idx_
        period: 24h
    - from: "2024-04-01"
"""
    config = config_from_yaml(text)
    first, second = config.schema_config.configs
    assert first == PeriodConfig(
        from_="2023-01-05", index=IndexTablesConfig(prefix="idx_", period=86400.0)
    )
    assert second == PeriodConfig(from_="2024-04-01")
    assert validate_config(config) == []
    dumped = config_to_dict(config)["schema_config"]["configs"][0]
    assert dumped == {
        "from": "2023-01-05",
        "store": "tsdb",
        "object_store": "filesystem",
        "schema": "v13",
        "index": {"prefix": "idx_", "period": "1d"},
    }
    assert config_from_yaml(yaml.safe_dump(config_to_dict(config))) == config


@pytest.mark.parametrize(
    ("periods", "expected"),
    [
        pytest.param([_period(schema="v12")], [SCHEMA_ERROR.format(schema="v12")], id="v12"),
        pytest.param([_period(schema="v11")], [SCHEMA_ERROR.format(schema="v11")], id="v11"),
        pytest.param(
            [_period(store="boltdb-shipper")],
            [INDEX_ERROR.format(store="boltdb-shipper")],
            id="boltdb-shipper",
        ),
        pytest.param(
            [_period(store="boltdb-shipper", schema="v12")],
            [SCHEMA_ERROR.format(schema="v12"), INDEX_ERROR.format(store="boltdb-shipper")],
            id="both",
        ),
        pytest.param(
            [_period(schema="v12"), _period(**{"from": "2024-04-01"})], [], id="old-period-v12"
        ),
        pytest.param(
            [_period(), _period(**{"from": "2999-01-01", "schema": "v12"})],
            [],
            id="future-period-not-active-yet",
        ),
        pytest.param(
            [_period(store="cassandra")],
            [INDEX_ERROR.format(store="cassandra")],
            id="legacy-store-is-known",
        ),
        pytest.param(
            [_period(store="sqlite")],
            [
                "unrecognized `store` (index) type `sqlite`, choose one of: tsdb",
                INDEX_ERROR.format(store="sqlite"),
            ],
            id="unknown-store",
        ),
        pytest.param(
            [_period(object_store="ftp")],
            [
                "unrecognized `object_store` type `ftp`, which also does not match any "
                "named_stores. Choose one of: filesystem, aws, alibabacloud, azure, bos, cos, "
                "gcs, s3, swift. Or choose a named_store"
            ],
            id="unknown-object-store",
        ),
        pytest.param(
            [],
            ["invalid schema config: must specify at least one schema configuration"],
            id="no-periods",
        ),
        pytest.param(
            [_period(index={"prefix": "index_", "period": "168h"})],
            ["invalid schema config: tsdb must always have periodic config for index set to 24h"],
            id="tsdb-weekly-index",
        ),
        pytest.param(
            [_period(schema="v14")], ["invalid schema config: invalid schema version"], id="v14"
        ),
        pytest.param(
            [_period(schema="latest")],
            ["invalid schema config: invalid schema version"],
            id="not-a-version",
        ),
        pytest.param(
            [_period(**{"from": "2024-04-01"}), _period(**{"from": "2024-04-01"})],
            [
                "invalid schema config: "
                "from time in schemas must be distinct and in increasing order"
            ],
            id="same-from",
        ),
        pytest.param(
            [_period(**{"from": "April 1st"})],
            [
                'invalid schema config: parsing time "April 1st" as "2006-01-02": '
                "expected a YYYY-MM-DD date"
            ],
            id="bad-from",
        ),
        pytest.param(
            [_period(), _period(**{"from": "2024-13-01"})],
            [
                'invalid schema config: parsing time "2024-13-01" as "2006-01-02": '
                "expected a YYYY-MM-DD date"
            ],
            id="bad-second-from",
        ),
        pytest.param(
            [_period(**{"from": "2024-04-01"}), _period(**{"from": "2023-04-01"})],
            [
                "invalid schema config: "
                "from time in schemas must be distinct and in increasing order"
            ],
            id="decreasing-from",
        ),
    ],
)
def test_schema_validation(periods: list[dict[str, object]], expected: list[str]) -> None:
    assert _errors(*periods) == expected


@pytest.mark.parametrize(
    "period",
    [
        pytest.param(_period(schema="v12"), id="v12"),
        pytest.param(_period(store="boltdb-shipper", schema="v11"), id="boltdb-shipper"),
    ],
)
def test_old_schema_is_fine_without_structured_metadata(period: dict[str, object]) -> None:
    assert _errors(period, allow_structured_metadata=False) == []


def test_active_period_is_the_last_one_started() -> None:
    periods = [
        PeriodConfig(from_="2020-01-01"),
        PeriodConfig(from_="2024-04-01"),
        PeriodConfig(from_="2030-01-01"),
    ]
    assert active_period(periods, datetime.date(2019, 6, 1)) == 0
    assert active_period(periods, datetime.date(2024, 3, 31)) == 0
    assert active_period(periods, datetime.date(2024, 4, 1)) == 1
    assert active_period(periods, datetime.date(2031, 1, 1)) == 2


def test_several_errors_are_reported_together() -> None:
    text = yaml.safe_dump({"schema_config": {"configs": [_period(schema="v12", store="aws")]}})
    with pytest.raises(ConfigError) as caught:
        raise ConfigError(validate_config(config_from_yaml(text)))
    assert (
        str(caught.value).splitlines()[0] == "MULTIPLE CONFIG ERRORS FOUND, PLEASE READ CAREFULLY"
    )


@pytest.mark.parametrize(
    ("document", "message"),
    [
        pytest.param(
            {"schema_config": {"configs": {"from": "2020-10-24"}}},
            "schema_config.configs: expected a list",
            id="configs-not-a-list",
        ),
        pytest.param(
            {"schema_config": {"configs": [{"form": "2020-10-24"}]}},
            "line 3: field form not found in type config.raw",
            id="typo-in-period",
        ),
    ],
)
def test_shape_errors(document: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_from_yaml(yaml.safe_dump(document))
    assert caught.value.errors == [message]


def test_tenant_overrides() -> None:
    text = """
limits_config:
  otlp_promoted_resource_attributes: [service.name, host.name]
overrides:
  team-a:
    otlp_promoted_resource_attributes: [service.name, team.name]
  team-b: {}
"""
    config = config_from_yaml(text)
    assert validate_config(config) == []
    overrides = Overrides(config)
    assert overrides.limits_for("team-a").otlp_promoted_resource_attributes == [
        "service.name",
        "team.name",
    ]
    assert overrides.limits_for("team-b").otlp_promoted_resource_attributes == [
        "service.name",
        "host.name",
    ]
    assert overrides.limits_for("other") is config.limits_config


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param(
            {"a/b": {}},
            "invalid override for tenant a/b: tenant ID 'a/b' contains unsupported character '/'",
            id="bad-tenant",
        ),
        pytest.param(
            {"t": {"otlp_promoted_resource_attributes": "service.name"}},
            "invalid override for tenant t: otlp_promoted_resource_attributes: expected a list",
            id="not-a-list",
        ),
    ],
)
def test_invalid_overrides(overrides: dict[str, object], message: str) -> None:
    config = config_from_yaml(yaml.safe_dump({"overrides": overrides}))
    assert validate_config(config) == [message]


def test_verify_config_prints_the_error_and_fails(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"schema_config": {"configs": [_period(schema="v12")]}}))
    done = subprocess.run(
        [sys.executable, "-m", "svc", f"-config.file={path}", "-verify-config"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr == f"error: {SCHEMA_ERROR.format(schema='v12')}\n"

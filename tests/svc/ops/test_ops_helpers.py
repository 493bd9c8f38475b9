"""Config diffs, route labels, index sync states and cache generations."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import yaml

from svc.compactor.limits import deletion_enabled
from svc.config import Config, config_from_yaml
from svc.limits.overrides import Overrides
from svc.ops.cache_gen import CacheGenerations
from svc.ops.config_view import config_diff, config_yaml
from svc.ops.index_sync import IndexSyncer
from svc.ops.metrics import route_label
from svc.storage.catalog import Catalog


@pytest.mark.parametrize(
    ("defaults", "actual", "diff"),
    [
        ({"a": 1, "b": {"c": 2, "d": 3}}, {"a": 1, "b": {"c": 2, "d": 4}}, {"b": {"d": 4}}),
        ({"a": [1]}, {"a": [1, 2]}, {"a": [1, 2]}),
        ({"a": 1}, {"a": 1, "new": True}, {"new": True}),
        ({"a": {"b": 1}}, {"a": {"b": 1}}, {}),
    ],
)
def test_config_diff(
    defaults: dict[str, object], actual: dict[str, object], diff: dict[str, object]
) -> None:
    assert config_diff(defaults, actual) == diff


def test_config_yaml_modes() -> None:
    config = config_from_yaml("auth_enabled: false\nserver: {log_level: debug}")
    assert yaml.safe_load(config_yaml(config, "diffs")) == {
        "auth_enabled": False,
        "server": {"log_level": "debug"},
    }
    assert yaml.safe_load(config_yaml(config, "diff")) == yaml.safe_load(
        config_yaml(config, "diffs")
    )
    assert yaml.safe_load(config_yaml(config, "defaults"))["auth_enabled"] is True
    assert yaml.safe_load(config_yaml(config, None))["auth_enabled"] is False
    assert config_yaml(Config(), "diffs") == "{}\n"


@pytest.mark.parametrize(
    ("template", "label"),
    [
        ("/svc/api/v1/push", "svc_api_v1_push"),
        ("/loki/api/v1/label/{name:str}/values", "loki_api_v1_label_name_values"),
        ("/ready", "ready"),
        ("/", "root"),
    ],
)
def test_route_label(template: str, label: str) -> None:
    assert route_label(template) == label


def test_index_sync_runs_one_at_a_time() -> None:
    release = threading.Event()
    syncer = IndexSyncer(["tsdb", "boltdb-shipper"], release.wait, resync_interval=0)
    assert syncer.can_sync
    assert syncer.trigger("manual")
    assert not syncer.trigger("manual")
    assert [e["in_progress"] for e in syncer.status()] == [True, True]
    assert "current_duration" in syncer.status()[0]
    release.set()
    deadline = time.monotonic() + 5
    while syncer.in_progress():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert syncer.status()[1] == {
        "name": "boltdb-shipper",
        "in_progress": False,
        "last_trigger": "manual",
        "last_duration": "0s",
    }


def test_index_sync_needs_a_syncable_store() -> None:
    assert not IndexSyncer(["boltdb-shipper"], lambda: None, resync_interval=0).can_sync


def test_cache_generations_grow_and_persist(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    catalog = Catalog(path)
    gens = CacheGenerations(catalog)
    assert gens.get("t") == ""
    first = gens.increase("t")
    second = gens.increase("t")
    assert int(second) > int(first)
    catalog.close()
    reopened = Catalog(path)
    assert CacheGenerations(reopened).get("t") == second
    assert CacheGenerations(reopened).get("other") == ""
    reopened.close()


@pytest.mark.parametrize(
    ("text", "tenant", "enabled"),
    [
        ("", "t", False),
        ("compactor: {retention_enabled: true}", "t", True),
        (
            "compactor: {retention_enabled: true}\nlimits_config: {deletion_mode: disabled}",
            "t",
            False,
        ),
        (
            "compactor: {retention_enabled: true}\noverrides: {t: {deletion_mode: disabled}}",
            "t",
            False,
        ),
        (
            "compactor: {retention_enabled: true}\nlimits_config: {deletion_mode: disabled}\n"
            "overrides: {t: {deletion_mode: filter-only}}",
            "t",
            True,
        ),
    ],
)
def test_deletion_enabled(text: str, tenant: str, enabled: bool) -> None:
    config = config_from_yaml(text)
    limits = Overrides(config).limits_for(tenant)
    assert deletion_enabled(config, limits) is enabled

"""The agent and Grafana examples point at routes svc serves, with the tenant header set."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from svc.api.openapi import OPERATIONS

AGENTS = Path(__file__).parents[2] / "examples" / "agents"
TENANT = "team-a"


def _load(name: str) -> Any:
    return yaml.safe_load((AGENTS / name).read_text())


def _served(path: str) -> bool:
    paths = {op.path for op in OPERATIONS}
    return path in paths or path.replace("/loki/api/v1/", "/svc/api/v1/") in paths


def test_promtail() -> None:
    (client,) = _load("promtail.yaml")["clients"]
    assert client["url"] == "http://localhost:3100/loki/api/v1/push"
    assert client["tenant_id"] == TENANT
    assert _served("/loki/api/v1/push")


def test_vector() -> None:
    sink = _load("vector.yaml")["sinks"]["svc"]
    assert (sink["type"], sink["endpoint"], sink["tenant_id"]) == (
        "loki",
        "http://localhost:3100",
        TENANT,
    )


def test_otel_collector() -> None:
    exporter = _load("otel-collector.yaml")["exporters"]["otlphttp"]
    assert exporter["endpoint"] == "http://localhost:3100/otlp"
    assert exporter["headers"] == {"X-Scope-OrgID": TENANT}
    assert _served("/otlp/v1/logs")


def test_grafana_data_source() -> None:
    (source,) = _load("grafana-datasource.yaml")["datasources"]
    assert (source["type"], source["url"]) == ("loki", "http://localhost:3100")
    assert source["jsonData"]["httpHeaderName1"] == "X-Scope-OrgID"
    assert source["secureJsonData"]["httpHeaderValue1"] == TENANT


def test_alloy_and_fluent_bit() -> None:
    alloy = (AGENTS / "config.alloy").read_text()
    assert re.search(r'url\s*=\s*"http://localhost:3100/loki/api/v1/push"', alloy)
    assert re.search(rf'tenant_id\s*=\s*"{TENANT}"', alloy)
    fluent = dict(
        line.split(None, 1)
        for line in (AGENTS / "fluent-bit.conf").read_text().splitlines()
        if line.startswith("    ")
    )
    assert (fluent["Host"], fluent["Port"], fluent["Uri"]) == (
        "localhost",
        "3100",
        "/loki/api/v1/push",
    )
    assert fluent["Tenant_ID"] == TENANT

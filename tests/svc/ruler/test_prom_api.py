"""``/prometheus/api/v1/rules`` and ``/alerts``: the Prometheus-compatible JSON (RULER.md 4)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.svc.ruler.conftest import Client

H = {"X-Scope-OrgID": "team-a"}
GROUP_B = """
name: b-group
interval: 1s
limit: 5
rules:
  - alert: Always
    expr: vector(1) > 0
    for: 1h
    labels: {severity: "{{ $value }}"}
    annotations: {summary: "value {{ $value }}"}
  - record: one
    expr: vector(1)
    labels: {k: v}
"""
GROUP_A = """
name: a-group
interval: 1s
rules:
  - record: broken
    expr: '{app="x"}'
"""
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


def _setup(client: Client) -> dict[str, Any]:
    assert client.post("/loki/api/v1/rules/ns-b", content=GROUP_B, headers=H).status_code == 202
    assert client.post("/loki/api/v1/rules/ns-a", content=GROUP_A, headers=H).status_code == 202
    deadline = time.monotonic() + 20
    while True:
        body: dict[str, Any] = client.get("/prometheus/api/v1/rules", headers=H).json()
        groups = body["data"]["groups"]
        if len(groups) == 2 and all(r["health"] != "unknown" for g in groups for r in g["rules"]):
            return body
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_rules_document(client: Client) -> None:
    body = _setup(client)
    assert (body["status"], body["errorType"], body["error"]) == ("success", "", "")
    a, b = body["data"]["groups"]
    assert [a["file"], b["file"]] == ["ns-a", "ns-b"]
    assert list(b) == [
        "name",
        "file",
        "rules",
        "interval",
        "limit",
        "lastEvaluation",
        "evaluationTime",
    ]
    assert (b["name"], b["interval"], b["limit"]) == ("b-group", 1, 5)
    assert TIME.fullmatch(b["lastEvaluation"]) and isinstance(b["evaluationTime"], float)
    alerting, recording = b["rules"]
    assert list(alerting) == [
        "state",
        "name",
        "query",
        "duration",
        "labels",
        "annotations",
        "alerts",
        "health",
        "lastError",
        "type",
        "lastEvaluation",
        "evaluationTime",
    ]
    assert {k: alerting[k] for k in ("state", "name", "query", "duration", "type", "health")} == {
        "state": "pending",
        "name": "Always",
        "query": "(vector(1.000000) > 0)",
        "duration": 3600,
        "type": "alerting",
        "health": "ok",
    }
    assert alerting["labels"] == {"severity": "{{ $value }}"}
    (alert,) = alerting["alerts"]
    assert alert["labels"] == {"alertname": "Always", "severity": "1"}
    assert alert["annotations"] == {"summary": "value 1"}
    assert (alert["state"], alert["value"]) == ("pending", "1e+00")
    assert TIME.fullmatch(alert["activeAt"])
    assert list(recording) == [
        "name",
        "query",
        "labels",
        "health",
        "lastError",
        "type",
        "lastEvaluation",
        "evaluationTime",
    ]
    assert (recording["name"], recording["labels"], recording["type"]) == (
        "one",
        {"k": "v"},
        "recording",
    )
    (broken,) = a["rules"]
    assert (broken["health"], broken["lastError"]) == (
        "err",
        "rule result is not a vector or scalar",
    )


@pytest.mark.parametrize(
    ("params", "names"),
    [
        ({"type": "alert"}, ["Always"]),
        ({"type": "RECORD"}, ["broken", "one"]),
        ({"file": "ns-a"}, ["broken"]),
        ({"rule_group": "b-group"}, ["Always", "one"]),
        ({"rule_name": ["one", "broken"]}, ["broken", "one"]),
        ({"file": "ns-a", "type": "alert"}, []),
        ({"rule_name[]": "one"}, ["broken", "Always", "one"]),
    ],
)
def test_filters(client: Client, params: dict[str, Any], names: list[str]) -> None:
    _setup(client)
    body = client.get("/prometheus/api/v1/rules", params=params, headers=H).json()
    assert [r["name"] for g in body["data"]["groups"] for r in g["rules"]] == names


def test_bad_type(client: Client) -> None:
    response = client.get("/prometheus/api/v1/rules", params={"type": "Both"}, headers=H)
    assert response.status_code == 400
    assert response.json() == {
        "status": "error",
        "data": None,
        "errorType": "bad_data",
        "error": 'not supported value "both"',
    }


def test_alerts_and_empty_answers(client: Client) -> None:
    empty = client.get("/prometheus/api/v1/alerts", headers=H)
    assert empty.text == '{"status":"success","data":{"alerts":[]},"errorType":"","error":""}'
    assert client.get("/prometheus/api/v1/rules", headers=H).json()["data"] == {"groups": []}
    _setup(client)
    alerts = client.get("/prometheus/api/v1/alerts", headers=H).json()["data"]["alerts"]
    assert [(a["labels"]["alertname"], a["state"]) for a in alerts] == [("Always", "pending")]
    other = client.get("/prometheus/api/v1/alerts", headers={"X-Scope-OrgID": "team-b"})
    assert other.json()["data"]["alerts"] == []


@pytest.mark.parametrize(
    ("header", "status", "message"),
    [("a|b", 400, "too many org ids found"), ("bad/tenant", 400, "no valid org id found")],
)
def test_tenant_errors(client: Client, header: str, status: int, message: str) -> None:
    for path in ("/prometheus/api/v1/rules", "/prometheus/api/v1/alerts"):
        response = client.get(path, headers={"X-Scope-OrgID": header})
        assert response.status_code == status
        assert response.json()["error"] == message
    assert client.get("/prometheus/api/v1/rules").status_code == 401


def _metric(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith(f"{name}{{{wanted}}} "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name}{{{wanted}}} not in /metrics")


def test_metrics(client: Client) -> None:
    _setup(client)
    text = client.get("/metrics").text
    assert (
        _metric(
            text, "svc_prometheus_rule_evaluations_total", user="team-a", rule_group="ns-b;b-group"
        )
        >= 2
    )
    assert (
        _metric(
            text,
            "svc_prometheus_rule_evaluation_failures_total",
            user="team-a",
            rule_group="ns-a;a-group",
        )
        >= 1
    )
    assert (
        _metric(text, "svc_prometheus_rule_group_rules", user="team-a", rule_group="ns-b;b-group")
        == 2
    )
    assert (
        _metric(
            text,
            "svc_prometheus_rule_group_last_evaluation_timestamp_seconds",
            user="team-a",
            rule_group="ns-b;b-group",
        )
        > 1.7e9
    )
    assert (
        _metric(text, "svc_prometheus_rule_evaluation_duration_seconds_count", user="team-a") >= 3
    )
    assert _metric(text, "svc_prometheus_notifications_queue_length", user="team-a") == 0


def test_metrics_without_the_rule_group_label(make_client: Callable[..., Client]) -> None:
    client = make_client(
        {
            "ruler": {
                "evaluation_interval": "1s",
                "poll_interval": "1s",
                "disable_rule_group_label": True,
            }
        }
    )
    _setup(client)
    text = client.get("/metrics").text
    assert _metric(text, "svc_prometheus_rule_group_rules", user="team-a") == 3
    assert _metric(text, "svc_prometheus_rule_evaluations_total", user="team-a") >= 3


def test_disabled_tenants_are_not_evaluated_and_query_stats(
    make_client: Callable[..., Client],
) -> None:
    ruler = {
        "evaluation_interval": "1s",
        "poll_interval": "1s",
        "disabled_tenants": "team-b, team-c",
        "query_stats_enabled": True,
    }
    client = make_client({"ruler": ruler})
    _setup(client)
    other = {"X-Scope-OrgID": "team-b"}
    assert client.post("/loki/api/v1/rules/ns", content=GROUP_A, headers=other).status_code == 202
    time.sleep(1.5)
    assert client.get("/prometheus/api/v1/rules", headers=other).json()["data"]["groups"] == []
    assert "a-group" in client.get("/loki/api/v1/rules", headers=other).text  # stored all the same
    assert (
        _metric(client.get("/metrics").text, "svc_ruler_queries_seconds_total", user="team-a") > 0
    )

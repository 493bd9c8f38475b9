"""``detected_fields`` and ``detected_field/{name}/values`` over json, logfmt and metadata."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import Entry, now_ns, push

SECOND = 1_000_000_000
FIELDS = "/svc/api/v1/detected_fields"


def _entries(now: int) -> list[Entry]:
    """Oldest first: two logfmt lines, three json lines, metadata on some."""
    lines: list[Entry] = [
        (now - 50 * SECOND, 'level=warn status=404 msg="not found" took=1.5s'),
        (now - 40 * SECOND, "level=error status=500 took=20ms empty=", {"trace_id": "t1"}),
    ]
    for i, level in enumerate(["info", "info", "debug"]):
        document = {
            "level": level,
            "status": 200 + i,
            "latency": f"{i + 1}ms",
            "user": {"id": f"u{i}", "admin": i == 0},
            "size": "10KB",
            "ratio": 0.5 + i,
            "app": "inner",
            "tags": [1, 2],
        }
        lines.append((now - (30 - i) * SECOND, json.dumps(document), {"trace_id": f"t{i + 2}"}))
    return lines


@pytest.fixture
def pushed(app: InProcessApp, tenant: str) -> httpx.Client:
    client = app.client(tenant)
    response = push(client, [({"app": "df"}, _entries(now_ns()))])
    assert response.status_code == 204, response.text
    return client


def _fields(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get(FIELDS, params={"query": '{app="df"}', **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_fields_types_cardinality_parsers(pushed: httpx.Client) -> None:
    body = _fields(pushed)
    assert body["limit"] == 1000
    fields = {f["label"]: f for f in body["fields"]}
    assert [f["label"] for f in body["fields"]] == sorted(fields)
    assert "app" not in fields and "tags" not in fields and "empty" not in fields
    expected = {
        "app_extracted": ("string", 1, ["json"], ["app"]),
        "latency": ("duration", 3, ["json"], ["latency"]),
        "level": ("string", 4, ["json", "logfmt"], ["level"]),
        "msg": ("string", 1, ["logfmt"], None),
        "ratio": ("float", 3, ["json"], ["ratio"]),
        "size": ("bytes", 1, ["json"], ["size"]),
        "status": ("int", 5, ["json", "logfmt"], ["status"]),
        "took": ("duration", 2, ["logfmt"], None),
        "trace_id": ("string", 4, None, None),
        "user_admin": ("boolean", 2, ["json"], ["user", "admin"]),
        "user_id": ("string", 3, ["json"], ["user", "id"]),
    }
    assert set(fields) == set(expected)
    for name, (kind, cardinality, parsers, path) in expected.items():
        record = fields[name]
        assert (record["type"], record["cardinality"], record["parsers"]) == (
            kind,
            cardinality,
            parsers,
        ), name
        assert record.get("jsonPath") == path, name
        assert "sketch" not in record


def test_line_limit_scans_the_newest_lines(pushed: httpx.Client) -> None:
    fields = {f["label"]: f for f in _fields(pushed, line_limit=1)["fields"]}
    assert fields["level"]["cardinality"] == 1
    assert fields["level"]["parsers"] == ["json"]
    assert "took" not in fields


@pytest.mark.parametrize("name", ["limit", "field_limit"])
def test_field_limit(pushed: httpx.Client, name: str) -> None:
    body = _fields(pushed, **{name: 2})
    assert body["limit"] == 2
    assert len(body["fields"]) == 2


def test_pipeline_query(pushed: httpx.Client) -> None:
    body = _fields(pushed, query='{app="df"} | json | level="info"')
    fields = {f["label"]: f for f in body["fields"]}
    assert fields["level"]["cardinality"] == 1
    assert fields["level"]["parsers"] == ["json"]
    assert fields["trace_id"]["parsers"] is None
    assert fields["trace_id"]["cardinality"] == 2
    assert "took" not in fields


def test_post_form_and_loki_path(pushed: httpx.Client) -> None:
    response = pushed.post(
        "/loki/api/v1/detected_fields",
        data={"query": '{app="df"}', "line_limit": "2"},
    )
    assert response.status_code == 200, response.text
    assert {f["label"] for f in response.json()["fields"]} >= {"level", "user_id"}


def test_values(pushed: httpx.Client) -> None:
    response = pushed.get("/svc/api/v1/detected_field/level/values", params={"query": '{app="df"}'})
    assert response.status_code == 200, response.text
    assert response.json() == {"values": ["debug", "error", "info", "warn"], "limit": 1000}
    trace = pushed.post(
        "/loki/api/v1/detected_field/trace_id/values",
        data={"query": '{app="df"}', "limit": "2"},
    ).json()
    assert trace["limit"] == 2
    assert len(trace["values"]) == 2
    missing = pushed.get(
        "/svc/api/v1/detected_field/nope/values", params={"query": '{app="df"}'}
    ).json()
    assert missing == {"values": [], "limit": 1000}


def test_no_data(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        assert _fields(client) == {"fields": [], "limit": 1000}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param({"query": ""}, "parse error : syntax error: unexpected $end", id="no-query"),
        pytest.param(
            {"query": 'rate({app="df"}[1m])'}, "only log selector is supported", id="metric"
        ),
        pytest.param({"line_limit": "0"}, "limit must be a positive value", id="line-limit-0"),
        pytest.param(
            {"line_limit": "x"}, 'strconv.Atoi: parsing "x": invalid syntax', id="line-limit-x"
        ),
        pytest.param({"limit": "-3"}, "limit must be a positive value", id="limit-negative"),
        pytest.param(
            {"field_limit": "1.5"},
            'strconv.Atoi: parsing "1.5": invalid syntax',
            id="field-limit-float",
        ),
        pytest.param(
            {"start": "20", "end": "10"},
            "end timestamp must not be before or equal to start time",
            id="end-before-start",
        ),
        pytest.param(
            {"step": "-1"},
            "zero or negative query resolution step widths are not accepted. "
            "Try a positive integer",
            id="negative-step",
        ),
    ],
)
def test_validation(app: InProcessApp, tenant: str, params: dict[str, str], message: str) -> None:
    with app.client(tenant) as client:
        for path in (FIELDS, "/svc/api/v1/detected_field/level/values"):
            response = client.get(path, params={"query": '{app="df"}', **params})
            assert (response.status_code, response.text) == (400, message)

"""The deprecated /api/prom read endpoints answer in the reference's legacy shapes."""

from __future__ import annotations

import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push, query_range
from tests.timeline import BASE, SECOND

WINDOW = {"start": str(BASE), "end": str(BASE + 600 * SECOND)}


def _push(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(
            client,
            [
                (
                    {"app": "old", "env": "x"},
                    [(BASE, "first <b>"), (BASE + 1_500_000_000, "second")],
                ),
                ({"app": "old", "env": "y"}, [(BASE + 2 * SECOND + 10, "third error")]),
            ],
        )


def test_query_legacy_shape(app: InProcessApp, tenant: str) -> None:
    _push(app, tenant)
    with app.client(tenant) as client:
        response = client.get("/api/prom/query", params={"query": '{app="old"}', **WINDOW})
        v1 = query_range(client, '{app="old"}', **WINDOW)
    assert response.status_code == 200
    assert "\\u003cb\\u003e" in response.text and response.text.endswith("\n")
    body = response.json()
    assert set(body) == {"streams", "stats"}
    assert set(body["stats"]) >= {"summary", "querier", "ingester"}
    assert body["streams"] == [
        {
            "labels": '{app="old", env="x"}',
            "entries": [
                {"ts": "2023-11-14T22:13:21.5Z", "line": "second"},
                {"ts": "2023-11-14T22:13:20Z", "line": "first <b>"},
            ],
        },
        {
            "labels": '{app="old", env="y"}',
            "entries": [{"ts": "2023-11-14T22:13:22.00000001Z", "line": "third error"}],
        },
    ]
    assert len(v1["result"]) == 2


def test_query_regexp_limit_and_direction(app: InProcessApp, tenant: str) -> None:
    _push(app, tenant)
    with app.client(tenant) as client:
        filtered = client.get(
            "/api/prom/query", params={"query": '{app="old"}', "regexp": "err|sec", **WINDOW}
        ).json()
        forward = client.get(
            "/api/prom/query",
            params={"query": '{app="old"}', "limit": "1", "direction": "FORWARD", **WINDOW},
        ).json()
    assert [e["line"] for s in filtered["streams"] for e in s["entries"]] == [
        "second",
        "third error",
    ]
    assert forward["streams"] == [
        {
            "labels": '{app="old", env="x"}',
            "entries": [{"ts": "2023-11-14T22:13:20Z", "line": "first <b>"}],
        }
    ]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"query": 'rate({app="old"}[1m])'}, "legacy endpoints only support streams result type"),
        ({"query": '{app="old"}', "limit": "0"}, "limit must be a positive value"),
        ({"query": '{app="old"}', "direction": "up"}, "invalid direction 'up'"),
        (
            {"query": '{app="old"', "regexp": "x"},
            "parse error at line 1, col 11: syntax error: unexpected $end, expecting } or ,",
        ),
    ],
)
def test_query_errors(app: InProcessApp, tenant: str, params: dict[str, str], message: str) -> None:
    with app.client(tenant) as client:
        response = client.get("/api/prom/query", params=params)
    assert (response.status_code, response.text) == (400, message)


def test_labels_values_and_series(app: InProcessApp, tenant: str) -> None:
    _push(app, tenant)
    with app.client(tenant) as client:
        names = client.get("/api/prom/label", params=WINDOW)
        values = client.get("/api/prom/label/env/values", params=WINDOW)
        none = client.get("/api/prom/label/nope/values", params=WINDOW)
        series = client.get("/api/prom/series", params={"match[]": '{app="old"}', **WINDOW})
        v1_series = client.get("/svc/api/v1/series", params={"match[]": '{app="old"}', **WINDOW})
    assert names.json() == {"values": ["app", "env"]}
    assert values.json() == {"values": ["x", "y"]}
    assert none.json() == {}
    assert series.status_code == 200
    assert series.json() == v1_series.json()

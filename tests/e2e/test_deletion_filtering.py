"""Query-time filtering: from the moment a delete request is accepted, no query endpoint
returns its entries (in files or in memory), and cancelling it brings them back."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode

import httpx
import pyarrow.parquet as pq
import pytest
from websockets.sync.client import connect

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push
from tests.e2e.server import Server

SECOND = 1_000_000_000
RETENTION = {
    "compactor": {"retention_enabled": True, "delete_request_store": "filesystem"},
    "querier": {"multi_tenant_queries_enabled": True},
    "limits_config": {"reject_old_samples": False},
}
T0 = (time.time_ns() - 3_600 * SECOND) // SECOND * SECOND
END = str(time.time_ns() + 60 * SECOND)
WINDOW = {"start": str(T0 - SECOND), "end": END}


HALF = 40
"""Entries per stream in each half of the data set."""


def _streams(offset: int) -> list[tuple[dict[str, str], list[tuple[int, str]]]]:
    """Half of the data set: entries ``offset`` .. ``offset + HALF - 1`` of every stream."""
    secrets = []
    for i in range(offset, offset + HALF):
        if i % 2:
            line = f"login failed for user {1000 + i} secret TOKEN{i}"
        else:
            line = f"login succeeded for user {1000 + i} keep {i}"
        secrets.append((T0 + i * SECOND, line))
    users = [
        (T0 + i * SECOND, json.dumps({"user": "bob" if i % 3 == 0 else "alice", "n": i}))
        for i in range(offset, offset + HALF)
    ]
    gone = [(T0 + i * SECOND, f"all of b {i}") for i in range(offset, offset + HALF)]
    return [
        ({"app": "a", "env": "prod"}, secrets),  # type: ignore[list-item]
        ({"app": "b", "only_b": "yes"}, gone),  # type: ignore[list-item]
        ({"app": "c", "format": "json"}, users),  # type: ignore[list-item]
    ]


DELETES = [
    '{app="a"} |= "secret"',  # line filter: a condition on rows
    '{app="b"}',  # the whole stream
    '{app="c"} | json | user="bob"',  # a pipeline: an anti-join
]
VISIBLE = {"a": HALF, "b": 0, "c": 2 * HALF - len(range(0, 2 * HALF, 3))}
"""Entries left per app: the even ``keep`` lines, no b, alice's."""


def _is_deleted(line: str) -> bool:
    return "secret" in line or line.startswith("all of b") or '"bob"' in line


@pytest.fixture(scope="module")
def filtered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessApp]:
    """Two tenants with the same data; ``t`` has the three delete requests. Half of the
    data is in files, half in memory."""
    app = InProcessApp(tmp_path_factory.mktemp("filtered"), RETENTION).start()
    for tenant in ("t", "u"):
        with app.client(tenant) as client:
            assert push(client, _streams(0)).status_code == 204
    with app.client("t") as client:
        assert client.post("/flush").status_code == 204
    for tenant in ("t", "u"):
        with app.client(tenant) as client:
            assert push(client, _streams(HALF)).status_code == 204
    with app.client("t") as client:
        for query in DELETES:
            response = client.post(
                "/loki/api/v1/delete", params={"query": query, "start": str(T0 // SECOND - 1)}
            )
            assert response.status_code == 204, response.text
    yield app
    app.stop()


def _lines(body: dict[str, Any]) -> list[tuple[dict[str, str], str]]:
    return [(s["stream"], line) for s in body["data"]["result"] for _, line in s["values"]]


def _counts(client: httpx.Client, query: str, path: str = "/loki/api/v1/query") -> dict[str, str]:
    params = (
        {"query": query, "time": END}
        if path.endswith("query")
        else {"query": query, **WINDOW, "step": "7200"}
    )
    body = client.get(path, params=params).json()
    found = {}
    for series in body["data"]["result"]:
        value = series["value"][1] if "value" in series else series["values"][-1][1]
        found[series["metric"].get("app", "")] = value
    return found


def test_log_queries(filtered: InProcessApp) -> None:
    with filtered.client("t") as client:
        for direction in ("backward", "forward"):
            body = client.get(
                "/loki/api/v1/query_range",
                params={"query": '{app=~".+"}', "limit": "1000", "direction": direction, **WINDOW},
            ).json()
            lines = _lines(body)
            assert not [line for _, line in lines if _is_deleted(line)]
            assert len(lines) == sum(VISIBLE.values())
        limited = _lines(
            client.get(
                "/loki/api/v1/query_range",
                params={"query": '{app="a"}', "limit": "3", **WINDOW},
            ).json()
        )
        newest = 2 * HALF - 2
        assert [line.split()[-1] for _, line in limited] == [
            str(newest), str(newest - 2), str(newest - 4)
        ]  # fmt: skip
        legacy = client.get(
            "/api/prom/query", params={"query": '{app="a"}', "limit": "100", **WINDOW}
        )
        assert "secret" not in legacy.text and "keep 0" in legacy.text
        instant = client.get("/loki/api/v1/query", params={"query": '{app="a"}', "time": END})
        assert "secret" not in instant.text


def test_the_other_tenant_is_untouched(filtered: InProcessApp) -> None:
    with filtered.client("u") as client:
        assert _counts(client, 'sum by (app) (count_over_time({app=~".+"}[2h]))') == {
            app: str(2 * HALF) for app in "abc"
        }


def test_multi_tenant_queries_filter_each_tenant(filtered: InProcessApp) -> None:
    with filtered.client("t|u") as client:
        body = client.get(
            "/loki/api/v1/query",
            params={
                "query": 'sum by (__tenant_id__) (count_over_time({app=~".+"}[2h]))',
                "time": END,
            },
        ).json()
    found = {r["metric"]["__tenant_id__"]: r["value"][1] for r in body["data"]["result"]}
    assert found == {"t": str(sum(VISIBLE.values())), "u": str(6 * HALF)}


def test_metric_queries(filtered: InProcessApp) -> None:
    with filtered.client("t") as client:
        expected = {app: str(n) for app, n in VISIBLE.items() if n}
        query = 'sum by (app) (count_over_time({app=~".+"}[2h]))'
        assert _counts(client, query) == expected
        assert _counts(client, query, "/loki/api/v1/query_range") == expected
        bytes_query = 'sum(bytes_over_time({app="a"} |= "TOKEN" [2h]))'
        assert (
            client.get("/loki/api/v1/query", params={"query": bytes_query, "time": END}).json()[
                "data"
            ]["result"]
            == []
        )


def test_series_and_labels_leave_out_fully_deleted_streams(filtered: InProcessApp) -> None:
    with filtered.client("t") as client:
        series = client.get(
            "/loki/api/v1/series", params={"match[]": '{app=~".+"}', **WINDOW}
        ).json()
        assert sorted(s["app"] for s in series["data"]) == ["a", "c"]
        labels = client.get("/loki/api/v1/labels", params=WINDOW).json()["data"]
        assert "only_b" not in labels and "app" in labels
        values = client.get("/loki/api/v1/label/app/values", params=WINDOW).json()["data"]
        assert values == ["a", "c"]
    with filtered.client("u") as client:
        values = client.get("/loki/api/v1/label/app/values", params=WINDOW).json()["data"]
        assert values == ["a", "b", "c"]


def test_index_stats_and_volume_count_visible_entries(filtered: InProcessApp) -> None:
    with filtered.client("t") as client:
        logs = client.get(
            "/loki/api/v1/query_range", params={"query": '{app=~".+"}', "limit": "1000", **WINDOW}
        ).json()
        visible_bytes = sum(len(line.encode()) for _, line in _lines(logs))
        stats = client.get(
            "/loki/api/v1/index/stats", params={"query": '{app=~".+"}', **WINDOW}
        ).json()
        assert stats["streams"] == 2
        assert stats["entries"] == sum(VISIBLE.values())
        assert stats["bytes"] == visible_bytes
        volume = client.get(
            "/loki/api/v1/index/volume",
            params={"query": '{app=~".+"}', "targetLabels": "app", **WINDOW},
        ).json()
        apps = {r["metric"]["app"] for r in volume["data"]["result"]}
        assert apps == {"a", "c"}
        ranged = client.get(
            "/loki/api/v1/index/volume_range",
            params={"query": '{app=~".+"}', "targetLabels": "app", "step": "600", **WINDOW},
        ).json()
        samples = [v for r in ranged["data"]["result"] for v in r.get("values", [r.get("value")])]
        total = sum(int(v[1]) for v in samples)
        assert total == visible_bytes


def test_parquet_results(filtered: InProcessApp) -> None:
    with filtered.client("t") as client:
        response = client.get(
            "/loki/api/v1/query_range",
            params={"query": '{app=~".+"}', "limit": "1000", **WINDOW},
            headers={"Accept": "application/vnd.apache.parquet"},
        )
    assert response.status_code == 200
    lines = pq.read_table(io.BytesIO(response.content))["line"].to_pylist()
    assert len(lines) == sum(VISIBLE.values())
    assert not [line for line in lines if _is_deleted(line)]


def test_detected_fields_and_patterns(filtered: InProcessApp) -> None:
    with filtered.client("t") as client:
        users = client.get(
            "/loki/api/v1/detected_field/user/values", params={"query": '{app="c"}', **WINDOW}
        ).json()
        assert users["values"] == ["alice"]
        patterns = client.get("/loki/api/v1/patterns", params={"query": '{app="a"}', **WINDOW})
        assert patterns.status_code == 200, patterns.text
        found = [p["pattern"] for p in patterns.json()["data"]]
        assert found and all("secret" not in pattern for pattern in found), found


def test_cancelling_brings_entries_back(make_app: Callable[..., InProcessApp]) -> None:
    app = make_app(RETENTION)
    with app.client("t") as client:
        push(client, _streams(0))
        response = client.post(
            "/loki/api/v1/delete", params={"query": DELETES[0], "start": str(T0 // SECOND - 1)}
        )
        identifier = response.headers["x-delete-request-id"]
        query = 'sum(count_over_time({app="a"}[2h]))'
        assert client.get("/loki/api/v1/query", params={"query": query, "time": END}).json()[
            "data"
        ]["result"][0]["value"][1] == str(HALF // 2)
        assert (
            client.delete("/loki/api/v1/delete", params={"request_id": identifier}).status_code
            == 204
        )
        assert client.get("/loki/api/v1/query", params={"query": query, "time": END}).json()[
            "data"
        ]["result"][0]["value"][1] == str(HALF)


def test_disabled_tenants_are_not_filtered(make_app: Callable[..., InProcessApp]) -> None:
    app = make_app(RETENTION)
    with app.client("t") as client:
        push(client, _streams(0))
        assert (
            client.post(
                "/loki/api/v1/delete", params={"query": '{app="a"}', "start": str(T0 // SECOND - 1)}
            ).status_code
            == 204
        )
    app.stop()
    app.overrides = {**RETENTION, "overrides": {"t": {"deletion_mode": "disabled"}}}
    app.start()
    with app.client("t") as client:
        body = client.get(
            "/loki/api/v1/query",
            params={"query": 'sum(count_over_time({app="a"}[2h]))', "time": END},
        ).json()
    assert body["data"]["result"][0]["value"][1] == str(HALF)


def test_tail_history_and_live_entries(make_server: Callable[..., Server]) -> None:
    srv = make_server(RETENTION)
    now = time.time_ns()
    with srv.client("t") as client:
        push(
            client,
            [({"app": "a"}, [(now - 5 * SECOND, "secret old"), (now - 4 * SECOND, "keep old")])],
        )
        assert (
            client.post(
                "/loki/api/v1/delete",
                params={"query": '{app="a"} |= "secret"', "start": str(now // SECOND - 60)},
            ).status_code
            == 204
        )
        url = (
            srv.url.replace("http://", "ws://")
            + "/loki/api/v1/tail?"
            + urlencode({"query": '{app="a"}', "start": str(now - 60 * SECOND)})
        )
        with connect(url, additional_headers={"X-Scope-OrgID": "t"}) as ws:
            history = json.loads(ws.recv(timeout=10))
            assert [v[1] for s in history["streams"] for v in s["values"]] == ["keep old"]
            # Pushed after the request, inside its range: hidden from the live tail too.
            push(
                client,
                [
                    (
                        {"app": "a"},
                        [(now - 3 * SECOND, "secret new"), (now - 2 * SECOND, "keep new")],
                    )
                ],
            )
            live = json.loads(ws.recv(timeout=10))
            assert [v[1] for s in live["streams"] for v in s["values"]] == ["keep new"]


def test_sql_views(filtered: InProcessApp) -> None:
    def sql(query: str) -> list[list[Any]]:
        with filtered.client("t") as client:
            answer = client.post(
                "/svc/api/v1/sql",
                params=WINDOW,
                content=query,
                headers={"Content-Type": "application/sql"},
            )
        assert answer.status_code == 200, answer.text
        rows: list[list[Any]] = answer.json()["data"]["rows"]
        return rows

    counts = sql("SELECT labels['app'] AS app, count(*) FROM logs GROUP BY 1 ORDER BY 1")
    assert counts == [[app, n] for app, n in sorted(VISIBLE.items()) if n]
    deleted = sql(
        "SELECT count(*) FROM logs WHERE contains(line, 'secret') "
        "OR contains(line, '\"bob\"') OR starts_with(line, 'all of b')"
    )
    assert deleted == [[0]]

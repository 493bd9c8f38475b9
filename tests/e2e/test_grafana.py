"""The requests Grafana 12's Loki data source and Logs Drilldown send, replayed against a real
server with the default discovery settings, and the shape of every answer.

Data is pushed as agents push it, with only ``app`` (and ``namespace``) labels: Logs
Drilldown's service list needs ``service_name`` and its volume histogram's colours need
``detected_level``, both found at ingest.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.clients import now_ns, push
from tests.e2e.server import DISCOVERY, Server

SECOND = 1_000_000_000
TENANT = "grafana"
# What Grafana adds to every request (they must be ignored).
HEADERS = {
    "X-Grafana-Org-Id": "1",
    "X-Grafana-User": "admin",
    "X-Query-Tags": "Source=grafana-explore",
    "Accept-Encoding": "gzip, deflate",
    "User-Agent": "Grafana/12.0.0",
}
CATEGORIZE = {"X-Loki-Response-Encoding-Flags": "categorize-labels"}
LEVELS = ("info", "warn", "error", "debug")


@pytest.fixture(scope="module")
def grafana(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, int]]:
    """A server with the default discovery, a client with Grafana's headers, the push time."""
    srv = Server(tmp_path_factory.mktemp("grafana"), {"limits_config": DISCOVERY}).start()
    now = now_ns() - 60 * SECOND
    web = [
        (now - i * SECOND, f"level={LEVELS[i % 4]} method=GET path=/item/{i} status=200 took={i}ms")
        for i in range(300)
    ]
    api = [
        (now - i * SECOND, json.dumps({"lvl": LEVELS[i % 2], "msg": f"job {i} done", "n": i}))
        for i in range(100)
    ]
    with srv.client(TENANT) as client:
        response = push(
            client,
            [({"app": "web"}, web), ({"app": "api", "namespace": "prod"}, api)],
            path="/loki/api/v1/push",
        )
        assert response.status_code == 204, response.text
    client = httpx.Client(
        base_url=srv.url, headers={**HEADERS, "X-Scope-OrgID": TENANT}, timeout=30
    )
    yield client, now
    client.close()
    srv.stop()


Get = Callable[..., dict[str, Any]]


@pytest.fixture
def get(grafana: tuple[httpx.Client, int]) -> Get:
    client, now = grafana

    def call(path: str, headers: dict[str, str] | None = None, **params: Any) -> dict[str, Any]:
        window = {"start": str(now - 3600 * SECOND), "end": str(now + SECOND)}
        response = client.get(f"/loki/api/v1/{path}", params={**window, **params}, headers=headers)
        assert response.status_code == 200, (path, response.text)
        body: dict[str, Any] = response.json()
        return body

    return call


def _success(body: dict[str, Any]) -> Any:
    assert body["status"] == "success"
    return body["data"]


def test_health_check(get: Get, grafana: tuple[httpx.Client, int]) -> None:
    data = _success(get("query", query="vector(1)+vector(1)", time=str(grafana[1])))
    assert data["resultType"] == "vector"
    assert [sample["value"][1] for sample in data["result"]] == ["2"]
    assert data["result"][0]["metric"] == {}
    assert {"summary", "querier", "ingester"} <= set(data["stats"])


def test_explore_logs_categorized(get: Get) -> None:
    body = get(
        "query_range",
        CATEGORIZE,
        query='{service_name="web"}',
        limit="1000",
        direction="backward",
        step="2s",
    )
    data = _success(body)
    assert data["resultType"] == "streams"
    assert data["encodingFlags"] == ["categorize-labels"]
    streams = data["result"]
    assert {tuple(sorted(s["stream"].items())) for s in streams} == {
        (("app", "web"), ("service_name", "web"))
    }
    levels = set()
    for stream in streams:
        for ts, line, categories in stream["values"]:
            assert ts.isdigit() and line.startswith("level=")
            assert list(categories) == ["structuredMetadata"]
            levels.add((line.split()[0][6:], categories["structuredMetadata"]["detected_level"]))
    assert levels == {(level, level) for level in LEVELS}
    assert sum(len(s["values"]) for s in streams) == 300


def test_volume_histogram_has_level_colours(get: Get) -> None:
    query = 'sum by (level, detected_level) (count_over_time({service_name="web"} | drop __error__[1m]))'
    data = _success(get("query_range", query=query, step="60"))
    assert data["resultType"] == "matrix"
    series = {s["metric"]["detected_level"]: s for s in data["result"]}
    assert sorted(series) == sorted(LEVELS)
    for item in data["result"]:
        assert set(item["metric"]) == {"detected_level"}
        assert all(isinstance(t, int) and isinstance(v, str) for t, v in item["values"])
    assert sum(int(v) for s in data["result"] for _, v in s["values"]) == 300


def test_infinite_scroll_and_log_context(get: Get, grafana: tuple[httpx.Client, int]) -> None:
    now = grafana[1]
    first = _success(get("query_range", query='{app="web"}', limit="100", direction="backward"))
    oldest = min(int(ts) for s in first["result"] for ts, _ in s["values"])
    older = _success(
        get("query_range", query='{app="web"}', limit="100", direction="backward", end=str(oldest))
    )
    times = [int(ts) for s in older["result"] for ts, _ in s["values"]]
    assert len(times) == 100 and max(times) <= oldest
    # Log context: the lines after one entry, forward, from its own stream's labels.
    context = _success(
        get(
            "query_range",
            query='{app="web", service_name="web"}',
            limit="10",
            direction="forward",
            start=str(now - 20 * SECOND),
            end=str(now + SECOND),
        )
    )
    # One stream per detected_level: the entries come back split by it.
    times = sorted(int(ts) for s in context["result"] for ts, _ in s["values"])
    assert times == sorted(now - i * SECOND for i in range(11, 21))


def test_labels_values_series(get: Get) -> None:
    assert _success(get("labels")) == ["app", "namespace", "service_name"]
    assert _success(get("label/service_name/values")) == ["api", "web"]
    assert _success(get("label/app/values", query='{namespace="prod"}')) == ["api"]
    assert _success(get("series", **{"match[]": '{service_name=~".+"}'})) == [
        {"app": "api", "namespace": "prod", "service_name": "api"},
        {"app": "web", "service_name": "web"},
    ]


def test_stats_and_volume(get: Get) -> None:
    stats = get("index/stats", query='{service_name="web"}')
    assert list(stats) == ["streams", "chunks", "bytes", "entries"]
    assert stats["streams"] == 1 and stats["entries"] == 300
    # Logs Drilldown's service list.
    volume = _success(
        get(
            "index/volume",
            query='{service_name=~".+"}',
            limit="5000",
            targetLabels="service_name",
        )
    )
    assert volume["resultType"] == "vector"
    assert sorted(r["metric"]["service_name"] for r in volume["result"]) == ["api", "web"]
    assert all(set(r["metric"]) == {"service_name"} for r in volume["result"])
    ranged = _success(get("index/volume_range", query='{service_name="web"}', step="60"))
    assert ranged["resultType"] == "matrix"


def test_detected_labels(get: Get) -> None:
    body = get("detected_labels", query='{service_name=~".+"}')
    assert body == {
        "detectedLabels": [
            {"label": "app", "cardinality": 2},
            {"label": "namespace", "cardinality": 1},
            {"label": "service_name", "cardinality": 2},
        ]
    }
    assert get("detected_labels", query='{service_name="nothing"}') == {}


def test_detected_fields_and_values(get: Get) -> None:
    body = get("detected_fields", query='{service_name="web"}', limit="1000", line_limit="1000")
    assert list(body) == ["fields", "limit"]
    fields = {f["label"]: f for f in body["fields"]}
    assert {"method", "path", "status", "took", "detected_level"} <= set(fields)
    assert fields["took"]["type"] == "duration" and fields["took"]["parsers"] == ["logfmt"]
    assert fields["detected_level"]["parsers"] is None
    values = get("detected_field/method/values", query='{service_name="web"}')
    assert values == {"values": ["GET"], "limit": 1000}


def test_patterns(get: Get) -> None:
    data = _success(get("patterns", query='{service_name="web"}', step="60s"))
    assert sorted((p["pattern"], p["level"]) for p in data) == [
        (f"level={level} method=GET path=<_> status=200 took=<_>", level)
        for level in sorted(LEVELS)
    ]
    for item in data:
        assert list(item) == ["pattern", "level", "samples"]
        assert all(isinstance(t, int) and isinstance(n, int) for t, n in item["samples"])


def test_format_query(get: Get) -> None:
    body = get("format_query", query='{app="web"}|="x"')
    assert body == {"status": "success", "data": '{app="web"} |= "x"'}


def test_large_answers_are_gzipped(grafana: tuple[httpx.Client, int]) -> None:
    client, now = grafana
    params = {"query": '{app="web"}', "limit": "300", "start": str(now - 3600 * SECOND)}
    with client.stream("GET", "/loki/api/v1/query_range", params=params) as response:
        assert response.headers["content-encoding"] == "gzip"
        raw = b"".join(response.iter_raw())
    streams = json.loads(gzip.decompress(raw))["data"]["result"]
    assert sum(len(stream["values"]) for stream in streams) == 300
    plain = client.get("/loki/api/v1/query_range", params=params, headers={"Accept-Encoding": ""})
    assert "content-encoding" not in plain.headers
    assert len(plain.content) > 5 * len(raw)

"""index/stats, index/volume and index/volume_range against counts computed from the push."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import Streams, push
from tests.timeline import BASE, SECOND

WINDOW = {"start": str(BASE), "end": str(BASE + 3600 * SECOND)}


def _corpus() -> Streams:
    return [
        (
            {"app": "web", "env": "prod"},
            [(BASE + i * SECOND, f"GET /{'x' * i} 200") for i in range(20)],
        ),
        ({"app": "web", "env": "dev"}, [(BASE + i * 2 * SECOND, "POST /c 201") for i in range(7)]),
        ({"app": "db", "env": "prod"}, [(BASE + 5 * SECOND, 'slow query "x" <&>')]),
        ({"team": "ops"}, [(BASE + 9 * SECOND, "unrelated")]),
    ]


def _expected(
    corpus: Streams, keep: Callable[[dict[str, str]], bool], start: int, end: int
) -> dict[str, int]:
    streams = entries = size = 0
    for labels, values in corpus:
        inside = [e for e in values if start <= e[0] < end]
        if keep(labels) and inside:
            streams += 1
            entries += len(inside)
            size += sum(len(e[1].encode()) for e in inside)
    return {"streams": streams, "entries": entries, "bytes": size}


def _stats(client: httpx.Client, query: str, **params: str) -> dict[str, Any]:
    response = client.get("/loki/api/v1/index/stats", params={"query": query, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _is_web(labels: dict[str, str]) -> bool:
    return labels.get("app") == "web"


def test_stats_shape_and_figures_from_the_head(app: InProcessApp, tenant: str) -> None:
    corpus = _corpus()
    with app.client(tenant) as client:
        assert push(client, corpus).status_code == 204
        raw = client.get("/svc/api/v1/index/stats", params={"query": '{app="web"}', **WINDOW})
        body = _stats(client, '{app=~".+"}', **WINDOW)
    assert raw.status_code == 200
    assert list(raw.json()) == ["streams", "chunks", "bytes", "entries"]
    assert raw.json() == {
        **_expected(corpus, _is_web, BASE, BASE + 3600 * SECOND),
        "chunks": 2,
    }
    assert body == {
        **_expected(corpus, lambda s: "app" in s, BASE, BASE + 3600 * SECOND),
        "chunks": 3,
    }


def test_stats_are_the_same_after_a_flush(app: InProcessApp, tenant: str) -> None:
    corpus = _corpus()
    with app.client(tenant) as client:
        push(client, corpus)
        before = _stats(client, '{env="prod"}', **WINDOW)
        assert client.post("/flush").status_code == 204
        after = _stats(client, '{env="prod"}', **WINDOW)
    expected = _expected(corpus, lambda s: s.get("env") == "prod", BASE, BASE + 3600 * SECOND)
    assert before == after == {**expected, "chunks": 2}


def test_stats_count_only_entries_inside_the_range(app: InProcessApp, tenant: str) -> None:
    # Fixed-width lines: entries are exact at the range edges, and so are the bytes.
    corpus: Streams = [
        ({"app": "edge"}, [(BASE + i * SECOND, f"line{i:03d}") for i in range(100)]),
        ({"app": "other"}, [(BASE + i * SECOND, f"line{i:03d}") for i in range(0, 100, 10)]),
    ]
    start, end = BASE + 25 * SECOND, BASE + 60 * SECOND
    window = {"start": str(start), "end": str(end)}
    with app.client(tenant) as client:
        push(client, corpus)
        head = _stats(client, '{app="edge"}', **window)
        client.post("/flush")
        flushed = _stats(client, '{app="edge"}', **window)
        both = _stats(client, '{app=~"edge|other"}', **window)
    assert head == flushed == {"streams": 1, "chunks": 1, "entries": 35, "bytes": 35 * 7}
    assert both == {"streams": 2, "chunks": 2, "entries": 35 + 3, "bytes": 38 * 7}


def test_stats_limit_zero_is_rejected_but_volume_takes_the_default(
    app: InProcessApp, tenant: str
) -> None:
    with app.client(tenant) as client:
        stats = client.get("/loki/api/v1/index/stats", params={"query": '{a="b"}', "limit": "0"})
        volume = client.get(
            "/loki/api/v1/index/volume_range", params={"query": '{a="b"}', "limit": "0"}
        )
    assert (stats.status_code, stats.text) == (400, "limit must be a positive value")
    assert volume.status_code == 200


def test_stats_for_no_match_and_post_form(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(client, _corpus())
        nothing = _stats(client, '{app="nope"}', **WINDOW)
        posted = client.post(
            "/svc/api/v1/index/stats",
            data={"query": '{team="ops"}', **WINDOW},
        )
    assert nothing == {"streams": 0, "chunks": 0, "bytes": 0, "entries": 0}
    assert posted.status_code == 200
    assert posted.json() == {"streams": 1, "chunks": 1, "bytes": 9, "entries": 1}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"query": '{app="a"}', "start": "20", "end": "10"},
            "end timestamp must not be before or equal to start time",
        ),
        ({"query": '{app="a"}', "limit": "-3"}, "limit must be a positive value"),
        ({"query": '{app="a"}', "direction": "sideways"}, "invalid direction 'sideways'"),
        (
            {"query": '{app="a"}', "step": "0"},
            "zero or negative query resolution step widths are not accepted. Try a positive integer",
        ),
        ({"query": '{app="a"}', "interval": "-1"}, "interval must be >= 0"),
        ({"query": '{app="a"} |= "x"'}, "only label matchers are supported"),
        ({"query": 'rate({app="a"}[1m])'}, "only label matchers are supported"),
        (
            {"query": '{app="a"'},
            "parse error at line 1, col 9: syntax error: unexpected $end, expecting } or ,",
        ),
    ],
)
@pytest.mark.parametrize("path", ["/index/stats", "/index/volume_range"])
def test_range_parameter_errors(
    app: InProcessApp, tenant: str, path: str, params: dict[str, str], message: str
) -> None:
    with app.client(tenant) as client:
        response = client.get("/loki/api/v1" + path, params=params)
    assert response.status_code == 400
    assert response.text == message
    assert response.headers["content-type"].startswith("text/plain")


# volume ---------------------------------------------------------------------------------


def _volume(client: httpx.Client, path: str, query: str, **params: str) -> dict[str, Any]:
    response = client.get(f"/loki/api/v1/index/{path}", params={"query": query, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == "success"
    assert set(body["data"]) == {"resultType", "result", "stats"}
    return body["data"]  # type: ignore[no-any-return]


def _bytes_by(corpus: Streams, key: Callable[[dict[str, str]], str | None]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for labels, values in corpus:
        name = key(labels)
        if name is not None:
            out[name] += sum(len(e[1].encode()) for e in values)
    return dict(out)


def test_volume_aggregates_into_the_selector_labels(app: InProcessApp, tenant: str) -> None:
    corpus = _corpus()
    with app.client(tenant) as client:
        push(client, corpus)
        data = _volume(client, "volume", '{app=~".+"}', **WINDOW)
    expected = _bytes_by(corpus, lambda s: s.get("app"))
    assert data["resultType"] == "vector"
    end_seconds = (BASE + 3600 * SECOND) // SECOND
    assert data["result"] == [
        {"metric": {"app": "web"}, "value": [end_seconds, str(expected["web"])]},
        {"metric": {"app": "db"}, "value": [end_seconds, str(expected["db"])]},
    ]


def test_volume_target_labels_limit_and_labels_aggregation(app: InProcessApp, tenant: str) -> None:
    corpus = _corpus()
    with app.client(tenant) as client:
        push(client, corpus)
        client.post("/flush")
        by_env = _volume(client, "volume", '{app=~".+"}', targetLabels="env", **WINDOW)
        limited = _volume(
            client, "volume", '{app=~".+"}', targetLabels="app,env", limit="1", **WINDOW
        )
        by_label = _volume(client, "volume", '{app=~".+"}', aggregateBy="labels", **WINDOW)
        zero = _volume(client, "volume", '{app=~".+"}', limit="0", **WINDOW)
    env_bytes = _bytes_by([c for c in corpus if "app" in c[0]], lambda s: s.get("env"))
    assert [(r["metric"], r["value"][1]) for r in by_env["result"]] == sorted(
        (({"env": k}, str(v)) for k, v in env_bytes.items()), key=lambda x: -int(x[1])
    )
    top = max(corpus[:3], key=lambda c: sum(len(e[1]) for e in c[1]))
    assert [r["metric"] for r in limited["result"]] == [top[0]]
    app_streams = [c for c in corpus if "app" in c[0]]
    total = sum(_bytes_by(app_streams, lambda s: "all").values())
    assert [(r["metric"], r["value"][1]) for r in by_label["result"]] == [
        ({"app": ""}, str(total)),
        ({"env": ""}, str(total)),
    ]
    assert len(zero["result"]) == 2  # limit=0 means the default


def test_volume_range_buckets_by_step(app: InProcessApp, tenant: str) -> None:
    corpus: Streams = [
        ({"app": "r"}, [(BASE + i * SECOND, "abcd") for i in range(25)]),
        ({"app": "s"}, [(BASE + 12 * SECOND, "zz")]),
    ]
    end = BASE + 30 * SECOND
    with app.client(tenant) as client:
        push(client, corpus)
        data = _volume(
            client, "volume_range", '{app=~"r|s"}', start=str(BASE), end=str(end), step="10s"
        )
        single = _volume(
            client, "volume_range", '{app="r"}', start=str(BASE), end=str(end), step="60s"
        )
    t0 = BASE // SECOND

    def ms(offset_ms: int) -> float:
        return (t0 * 1000 + offset_ms) / 1000

    assert data["resultType"] == "matrix"
    assert data["result"] == [
        {
            "metric": {"app": "r"},
            "values": [[ms(9_999), "40"], [ms(19_999), "40"], [t0 + 30, "20"]],
        },
        {"metric": {"app": "s"}, "values": [[ms(19_999), "2"]]},
    ]
    # As the reference decides: one sample per series makes a vector, even for a range.
    assert single["resultType"] == "vector"
    assert single["result"] == [{"metric": {"app": "r"}, "value": [t0 + 30, "100"]}]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"aggregateBy": "streams"}, "invalid aggregation option"),
        ({"limit": "-1"}, "limit must be a positive value"),
        ({"direction": "up"}, "invalid direction 'up'"),
        ({"start": "20", "end": "10"}, "end timestamp must not be before or equal to start time"),
    ],
)
def test_volume_parameter_errors(
    app: InProcessApp, tenant: str, params: dict[str, str], message: str
) -> None:
    with app.client(tenant) as client:
        response = client.get("/svc/api/v1/index/volume", params={"query": '{app="a"}', **params})
    assert (response.status_code, response.text) == (400, message)


def test_volume_disabled_answers_not_found(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"limits_config": {"volume_enabled": False}})
    with srv.client("t") as client:
        for path in ("volume", "volume_range"):
            response = client.get(f"/loki/api/v1/index/{path}", params={"query": '{a="b"}'})
            assert (response.status_code, response.text) == (404, "not found")
        assert (
            client.get("/loki/api/v1/index/stats", params={"query": '{a="b"}'}).status_code == 200
        )


def test_volume_post_form(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        push(client, _corpus())
        response = client.post("/svc/api/v1/index/volume", data={"query": '{team="ops"}', **WINDOW})
    assert response.status_code == 200
    assert response.json()["data"]["result"][0]["metric"] == {"team": "ops"}


def test_volume_match_any_aggregates_full_label_sets(app: InProcessApp, tenant: str) -> None:
    corpus = _corpus()
    with app.client(tenant) as client:
        push(client, corpus)
        data = _volume(client, "volume", "{}", **WINDOW)
    expected = sorted(
        ((labels, sum(len(e[1].encode()) for e in values)) for labels, values in corpus),
        key=lambda item: -item[1],
    )
    assert [(r["metric"], int(r["value"][1])) for r in data["result"]] == expected

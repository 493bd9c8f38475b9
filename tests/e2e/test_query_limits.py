"""Query limits through real HTTP (LIMITS.md §2, §2.2): each row's status and exact message.

One server holds the cases; the runtime overrides file gives each tenant the limit its test
needs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from tests.e2e.clients import push
from tests.e2e.server import Server
from tests.timeline import BASE, SECOND, WINDOW

HOUR = 3600 * SECOND
OVERRIDES: dict[str, dict[str, Any]] = {
    "length": {"max_query_length": "1h"},
    "lookback": {"max_query_lookback": "1h"},
    "series": {"max_query_series": 2},
    "entries": {"max_entries_limit_per_query": 10},
    "matchers": {"max_streams_matchers_per_query": 2},
    "range": {"max_query_range": "1h"},
    "disabled": {"tsdb_max_query_parallelism": 0},
    "bytes": {"max_query_bytes_read": "1KB"},
    "querier-bytes": {"max_querier_bytes_read": "1KB"},
    "small-a": {"max_query_series": 3},
    "small-b": {"max_query_series": 1},
}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("query-limits")
    runtime = root / "runtime.yaml"
    runtime.write_text(yaml.safe_dump({"overrides": OVERRIDES}))
    srv = Server(
        root,
        {
            "runtime_config": {"file": str(runtime)},
            "querier": {"multi_tenant_queries_enabled": True},
        },
    ).start()
    yield srv
    srv.stop()


def _get(srv: Server, tenant: str, path: str, **params: Any) -> httpx.Response:
    with srv.client(tenant) as client:
        return client.get(path, params=params)


def _error(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert not response.text.endswith("\n")  # query errors have no trailing newline
    return response.text


def _push(srv: Server, tenant: str, streams: list[Any]) -> None:
    with srv.client(tenant) as client:
        assert push(client, streams).status_code == 204


def test_max_query_length(limited: Server) -> None:
    response = _get(
        limited,
        "length",
        "/svc/api/v1/query_range",
        query='{a="b"}',
        start=str(BASE),
        end=str(BASE + 2 * HOUR),
    )
    assert _error(response, 400) == (
        "the query time range exceeds the limit (query length: 2h0m0s, limit: 1h)"
    )
    labels = _get(
        limited, "length", "/svc/api/v1/labels", start=str(BASE), end=str(BASE + 2 * HOUR)
    )
    assert labels.status_code == 400


def test_max_query_length_is_checked_after_the_lookback_clamp(limited: Server) -> None:
    now = time.time_ns()
    response = _get(
        limited,
        "lookback",
        "/svc/api/v1/query_range",
        query='{a="b"}',
        start=str(now - 800 * HOUR),
        end=str(now),
    )
    assert response.status_code == 200


def test_max_query_lookback(limited: Server) -> None:
    now = time.time_ns()
    _push(
        limited, "lookback", [({"a": "b"}, [(now - 2 * HOUR, "old"), (now - 60 * SECOND, "new")])]
    )
    window = {"start": str(now - 3 * HOUR), "end": str(now + SECOND)}
    data = _get(limited, "lookback", "/svc/api/v1/query_range", query='{a="b"}', **window).json()
    assert [v[1] for s in data["data"]["result"] for v in s["values"]] == ["new"]
    older = {"start": str(now - 5 * HOUR), "end": str(now - 4 * HOUR)}
    empty = _get(limited, "lookback", "/svc/api/v1/query_range", query='{a="b"}', **older).json()
    assert (empty["status"], empty["data"]["result"]) == ("success", [])
    metric = _get(
        limited,
        "lookback",
        "/svc/api/v1/query_range",
        query='count_over_time({a="b"}[10m])',
        step="60",
        **older,
    ).json()
    assert (metric["data"]["resultType"], metric["data"]["result"]) == ("matrix", [])
    stats = _get(limited, "lookback", "/svc/api/v1/index/stats", query='{a="b"}', **window)
    assert stats.json()["entries"] == 1
    labels = _get(limited, "lookback", "/svc/api/v1/labels", **older)
    assert labels.json() == {"status": "success"}


def test_max_query_series(limited: Server) -> None:
    _push(limited, "series", [({"a": str(i)}, [(BASE + i, "x")]) for i in range(3)])
    response = _get(
        limited,
        "series",
        "/svc/api/v1/query_range",
        query='count_over_time({a=~".+"}[1m])',
        **WINDOW,
    )
    assert _error(response, 400) == (
        "maximum number of series (2) reached for a single query; consider reducing query "
        "cardinality by adding more specific stream selectors, reducing the time range, or "
        "aggregating results with functions like sum(), count() or topk()"
    )


def test_multi_tenant_queries_take_the_smallest_limit(limited: Server) -> None:
    for tenant in ("small-a", "small-b"):
        _push(limited, tenant, [({"a": "x"}, [(BASE, "x")])])
    query = 'count_over_time({a="x"}[1m])'
    alone = _get(limited, "small-a", "/svc/api/v1/query_range", query=query, **WINDOW)
    assert alone.status_code == 200
    both = _get(limited, "small-a|small-b", "/svc/api/v1/query_range", query=query, **WINDOW)
    assert _error(both, 400).startswith("maximum number of series (1) reached")


def test_max_entries_limit_per_query(limited: Server) -> None:
    response = _get(
        limited, "entries", "/svc/api/v1/query_range", query='{a="b"}', limit="11", **WINDOW
    )
    assert _error(response, 400) == (
        "max entries limit per query exceeded, limit > max_entries_limit_per_query (11 > 10)"
    )
    metric = _get(
        limited,
        "entries",
        "/svc/api/v1/query_range",
        query='count_over_time({a="b"}[1m])',
        limit="11",
        **WINDOW,
    )
    assert metric.status_code == 200  # metric queries are exempt


def test_max_streams_matchers_per_query(limited: Server) -> None:
    response = _get(
        limited,
        "matchers",
        "/svc/api/v1/query_range",
        query='sum(count_over_time({a="b", c="d", e="f"}[1m]))',
        **WINDOW,
    )
    assert _error(response, 400) == (
        "max streams matchers per query exceeded, matchers-count > limit (3 > 2)"
    )


def test_max_query_range(limited: Server) -> None:
    response = _get(
        limited, "range", "/svc/api/v1/query", query='count_over_time({a="b"}[2h])', time=str(BASE)
    )
    assert _error(response, 400) == "[interval] value exceeds limit: [2h] > [1h]"


def test_zero_parallelism_disables_queries(limited: Server) -> None:
    for path in ("/svc/api/v1/query_range", "/svc/api/v1/labels", "/svc/api/v1/series"):
        response = _get(limited, "disabled", path, query='{a="b"}', **{"match[]": '{a="b"}'})
        assert _error(response, 429) == (
            "querying is disabled, please contact your the service operator"
        )


def test_max_query_bytes_read_is_estimated_before_reading(limited: Server) -> None:
    _push(limited, "bytes", [({"a": "b"}, [(BASE + i * SECOND, "x" * 100) for i in range(30)])])
    _push(limited, "bytes", [({"a": "other"}, [(BASE + i * SECOND, "y" * 100) for i in range(30)])])
    response = _get(limited, "bytes", "/svc/api/v1/query_range", query='{a="b"}', **WINDOW)
    assert _error(response, 400) == (
        "the query would read too many bytes (query: 2.9 KiB, limit: 1.0 KiB); consider "
        "adding more specific stream selectors or reduce the time range of the query"
    )
    small = _get(
        limited,
        "bytes",
        "/svc/api/v1/query_range",
        query='{a="b"}',
        start=str(BASE),
        end=str(BASE + 5 * SECOND),  # 5 entries: 500 bytes
    )
    assert small.status_code == 200


def test_max_querier_bytes_read(limited: Server) -> None:
    _push(limited, "querier-bytes", [({"a": "b"}, [(BASE + i, "x" * 100) for i in range(30)])])
    response = _get(limited, "querier-bytes", "/svc/api/v1/query_range", query='{a="b"}', **WINDOW)
    assert _error(response, 400) == (
        "query too large to execute on a single querier: (query: 2.9 KiB, limit: 1.0 KiB); "
        "consider adding more specific stream selectors, reduce the time range of the query, "
        "or adjust parallelization settings"
    )


def test_actor_path_deeper_than_the_hierarchy_is_500(limited: Server) -> None:
    with limited.client("series") as client:
        response = client.get(
            "/svc/api/v1/query_range",
            params={"query": '{a="b"}', **WINDOW},
            headers={"X-Service-Actor-Path": "a|b|c|d"},
        )
        fine = client.get(
            "/svc/api/v1/query_range",
            params={"query": '{a="b"}', **WINDOW},
            headers={"X-Loki-Actor-Path": "a|b|c"},
        )
    assert _error(response, 500) == (
        "desired queue level exceeds maxium depth of queue hierarchy: The header "
        "X-Service-Actor-Path with value 'a|b|c|d' would result in a sub-queue which is nested "
        "4 levels deep, however only 3 levels are allowed based on the configuration setting "
        "-query-scheduler.max-queue-hierarchy-levels"
    )
    assert fine.status_code == 200


def test_hierarchy_off_ignores_the_header(make_server: Any) -> None:
    srv = make_server({"query_scheduler": {"max_queue_hierarchy_levels": 0}})
    with srv.client("t") as client:
        response = client.get(
            "/svc/api/v1/query_range",
            params={"query": '{a="b"}', **WINDOW},
            headers={"X-Service-Actor-Path": "a|b|c|d|e"},
        )
    assert response.status_code == 200

"""Every query endpoint of SPEC 4.3 with two tenants in ``X-Scope-OrgID`` (``a|b``).

What the reference's multi-tenant querier (``pkg/querier/multi_tenant_querier.go``) does,
beyond queries (which see every stream with ``__tenant_id__``, test_multi_tenant.py):

- ``labels``: each tenant's label names merged, plus ``__tenant_id__``.
- ``label/__tenant_id__/values``: the queried tenants, sorted.
- ``series``: each tenant's series, each given ``__tenant_id__`` unless it has one.
- ``index/volume`` and ``index/volume_range``: each tenant's volumes, merged (here the
  series carry ``__tenant_id__``, so the same labels in two tenants stay apart).
- ``index/stats``: the tenants' stats added up.
- ``detected_fields``, ``detected_field/<name>/values``, ``patterns``: over both tenants.
- ``tail`` refuses several tenants (400).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.e2e.clients import push
from tests.e2e.server import Server

SEC = 10**9
BASE = 1_700_000_000 * SEC
WINDOW = {"start": str(BASE - SEC), "end": str(BASE + 600 * SEC)}


@pytest.fixture
def srv(make_server: Callable[..., Server]) -> Server:
    server = make_server(
        {"querier": {"multi_tenant_queries_enabled": True}, "pattern_ingester": {"enabled": True}}
    )
    lines = {"a": ("level=info took=1s", "level=error took=2s"), "b": ("level=warn took=3s",)}
    for tenant, texts in lines.items():
        with server.client(tenant) as client:
            entries = [(BASE + i * SEC, text) for i, text in enumerate(texts)]
            response = push(client, [({"app": "web", "only": tenant}, entries)])
            assert response.status_code == 204, response.text
    return server


def _get(client: httpx.Client, path: str, **params: Any) -> Any:
    response = client.get("/svc/api/v1" + path, params=params)
    assert response.status_code == 200, (path, response.status_code, response.text)
    return response.json()


def test_query_range_and_query(srv: Server) -> None:
    with srv.client("a|b") as client:
        logs = _get(client, "/query_range", query='{app="web"}', direction="forward", **WINDOW)
        assert [s["stream"]["__tenant_id__"] for s in logs["data"]["result"]] == ["a", "b"]
        metric = _get(
            client,
            "/query_range",
            query='sum by (__tenant_id__) (count_over_time({app="web"}[10m]))',
            step="600",
            **WINDOW,
        )
        counts = {
            s["metric"]["__tenant_id__"]: s["values"][-1][1] for s in metric["data"]["result"]
        }
        assert counts == {"a": "2", "b": "1"}
        instant = _get(
            client,
            "/query",
            query='sum(count_over_time({app="web"}[10m]))',
            time=str(BASE + 60 * SEC),
        )
        assert instant["data"]["result"][0]["value"][1] == "3"


def test_labels_list_the_tenant_label(srv: Server) -> None:
    with srv.client("a|b") as client:
        assert _get(client, "/labels", **WINDOW)["data"] == ["__tenant_id__", "app", "only"]
        assert _get(client, "/label/only/values", **WINDOW)["data"] == ["a", "b"]
        assert _get(client, "/label/__tenant_id__/values", **WINDOW)["data"] == ["a", "b"]
    with srv.client("b|a") as client:
        assert _get(client, "/label/__tenant_id__/values", **WINDOW)["data"] == ["a", "b"]


def test_series_name_their_tenant(srv: Server) -> None:
    with srv.client("a|b") as client:
        data = _get(client, "/series", **{"match[]": '{app="web"}'}, **WINDOW)["data"]
    assert data == [
        {"__tenant_id__": "a", "app": "web", "only": "a"},
        {"__tenant_id__": "b", "app": "web", "only": "b"},
    ]


def test_index_stats_add_up(srv: Server) -> None:
    with srv.client("a|b") as client:
        stats = _get(client, "/index/stats", query='{app="web"}', **WINDOW)
    assert (stats["streams"], stats["entries"]) == (2, 3)
    assert stats["bytes"] == sum(
        len(t) for t in ("level=info took=1s", "level=error took=2s", "level=warn took=3s")
    )


def test_volume_and_volume_range(srv: Server) -> None:
    a_bytes = len("level=info took=1s") + len("level=error took=2s")
    b_bytes = len("level=warn took=3s")
    with srv.client("a|b") as client:
        volume = _get(client, "/index/volume", query='{app="web"}', **WINDOW)["data"]
        assert volume["resultType"] == "vector"
        assert [(r["metric"], r["value"][1]) for r in volume["result"]] == [
            ({"__tenant_id__": "a", "app": "web"}, str(a_bytes)),
            ({"__tenant_id__": "b", "app": "web"}, str(b_bytes)),
        ]
        ranged = _get(client, "/index/volume_range", query='{app="web"}', step="1", **WINDOW)
        assert ranged["data"]["resultType"] == "matrix"
        series = {r["metric"]["__tenant_id__"]: r["values"] for r in ranged["data"]["result"]}
        assert sorted(series) == ["a", "b"]
        assert sum(int(v) for _, v in series["a"]) == a_bytes


def test_detected_fields_and_values(srv: Server) -> None:
    with srv.client("a|b") as client:
        fields = _get(client, "/detected_fields", query='{app="web"}', **WINDOW)
        assert {f["label"] for f in fields["fields"]} >= {"level", "took"}
        values = _get(client, "/detected_field/level/values", query='{app="web"}', **WINDOW)
        assert values["values"] == ["error", "info", "warn"]


def test_patterns_and_format_query(srv: Server) -> None:
    with srv.client("a|b") as client:
        patterns = _get(client, "/patterns", query='{app="web"}', **WINDOW)
        assert patterns["status"] == "success"
        formatted = _get(client, "/format_query", query='{app="web"}|logfmt')
        assert formatted["data"] == '{app="web"} | logfmt'


def test_tail_refuses_two_tenants(srv: Server) -> None:
    url = srv.url.replace("http", "ws") + "/svc/api/v1/tail?query=%7Bapp%3D%22web%22%7D"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers={"X-Scope-OrgID": "a|b"}).close()
    assert refused.value.response.status_code == 400

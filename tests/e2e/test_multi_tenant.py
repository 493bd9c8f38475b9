"""Queries across tenants with ``X-Scope-OrgID: a|b`` (SPEC 5.6)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push, query_range, stream_values
from tests.e2e.server import Server
from tests.timeline import BASE, WINDOW

MULTI_TENANT = {"querier": {"multi_tenant_queries_enabled": True}}


@pytest.fixture
def srv(make_app: Callable[..., InProcessApp]) -> InProcessApp:
    server = make_app(MULTI_TENANT)
    for tenant in ("a", "b", "c"):
        with server.client(tenant) as client:
            push(client, [({"app": "x"}, [(BASE, f"line of {tenant}")])])
    with server.client("b") as client:
        push(client, [({"app": "y", "__tenant_id__": "spoof"}, [(BASE + 1, "spoofed")])])
    return server


def test_streams_carry_their_tenant_and_no_third_tenant_leaks(srv: InProcessApp) -> None:
    with srv.client("a|b") as client:
        data = query_range(client, '{app=~".+"}', direction="forward", **WINDOW)
    assert stream_values(data) == [
        ({"__tenant_id__": "a", "app": "x"}, [[str(BASE), "line of a"]]),
        ({"__tenant_id__": "b", "app": "x"}, [[str(BASE), "line of b"]]),
        (
            {"__tenant_id__": "b", "app": "y", "original___tenant_id__": "spoof"},
            [[str(BASE + 1), "spoofed"]],
        ),
    ]


def test_parsed_labels_keep_the_tenant(srv: InProcessApp) -> None:
    """``| json`` across tenants: the tenant label stays, a line field named like it
    becomes ``__tenant_id___extracted``, and non-JSON lines carry the parser error."""
    with srv.client("a") as client:
        push(client, [({"app": "j"}, [(BASE + 2, '{"__tenant_id__":"z","k":"v"}')])])
    with srv.client("a|b") as client:
        data = query_range(client, '{app=~"j|y"} | json', direction="forward", **WINDOW)
    error = {
        "__error__": "JSONParserErr",
        "__error_details__": "Value looks like object, but can't find closing '}' symbol",
    }
    assert stream_values(data) == [  # streams sorted by their label string
        (
            {"__tenant_id__": "b", "app": "y", "original___tenant_id__": "spoof", **error},
            [[str(BASE + 1), "spoofed"]],
        ),
        (
            {"__tenant_id__": "a", "__tenant_id___extracted": "z", "app": "j", "k": "v"},
            [[str(BASE + 2), '{"__tenant_id__":"z","k":"v"}']],
        ),
    ]


def test_selector_can_match_the_tenant(srv: InProcessApp) -> None:
    with srv.client("a|b|c") as client:
        data = query_range(client, '{__tenant_id__=~"a|c", app="x"}', **WINDOW)
    assert [s["stream"]["__tenant_id__"] for s in data["result"]] == ["a", "c"]


def test_metric_aggregation_spans_tenants(srv: InProcessApp) -> None:
    with srv.client("a|b") as client:
        response = client.get(
            "/svc/api/v1/query",
            params={
                "query": 'sum by (__tenant_id__) (count_over_time({app=~".+"}[1h]))',
                "time": str((BASE + 10 * 10**9) // 10**9),
            },
        )
        total = client.get(
            "/svc/api/v1/query",
            params={
                "query": 'sum(count_over_time({app="x"}[1h]))',
                "time": str((BASE + 10 * 10**9) // 10**9),
            },
        )
    assert [(r["metric"], r["value"][1]) for r in response.json()["data"]["result"]] == [
        ({"__tenant_id__": "a"}, "1"),
        ({"__tenant_id__": "b"}, "2"),
    ]
    assert total.json()["data"]["result"][0]["value"][1] == "2"


def test_push_refuses_several_tenants(srv: InProcessApp) -> None:
    with srv.client("a|b") as client:
        pushed = push(client, [({"app": "x"}, [(BASE, "x")])])
    assert (pushed.status_code, pushed.text) == (400, "multiple org IDs present\n")


def test_tail_refuses_several_tenants(make_server: Callable[..., Server]) -> None:
    srv = make_server(MULTI_TENANT)
    url = srv.url.replace("http", "ws") + "/loki/api/v1/tail?query=%7Bapp%3D%22x%22%7D"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, additional_headers={"X-Scope-OrgID": "a|b"}).close()
    assert refused.value.response.status_code == 400
    assert b"multiple org IDs present" in refused.value.response.body


def test_disabled_by_default(app: InProcessApp) -> None:
    with app.client("a|b") as client:
        response = client.get("/svc/api/v1/query_range", params={"query": '{app="x"}'})
    assert (response.status_code, response.text) == (400, "multiple org IDs present")

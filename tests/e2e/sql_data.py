"""A real server holding SQL test data, shared by the SQL end-to-end tests.

Tenant ``a``: 30 JSON entries of ``{app="api"}`` flushed to Parquet, then 5 plain entries of
``{app="web"}`` in the head. Tenant ``b``: 7 flushed entries, 1 in the head. Each hostile
tenant ID: one flushed and one head entry saying whose secret it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.clients import push
from tests.e2e.server import Server
from tests.timeline import BASE, SECOND, WINDOW

__all__ = [
    "API_ENTRIES",
    "HOSTILE_TENANTS",
    "SQL_OVERRIDES",
    "WEB_ENTRIES",
    "rows",
    "sql",
    "sql_server",
    "warm",
]

HOSTILE_TENANTS = ["*", "a*", "'", "a')--", "(x)", "..a", "_.-"]
API_ENTRIES = 30
WEB_ENTRIES = 5
SQL_OVERRIDES: dict[str, Any] = {
    "querier": {"multi_tenant_queries_enabled": True},
    "sql": {"timeout": "4s", "memory_limit": "128MiB", "max_rows": 50, "threads": 1},
}


def api_line(i: int) -> str:
    """The ``i``th flushed entry of tenant ``a``."""
    status = 500 if i % 5 == 0 else 200
    return json.dumps({"status": str(status), "latency_ms": i * 10, "msg": f"request {i}"})


@pytest.fixture(scope="module")
def sql_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The server with the data of the module docstring."""
    srv = Server(tmp_path_factory.mktemp("sql"), SQL_OVERRIDES).start()
    flushed = {
        "a": [
            ({"app": "api", "env": "prod"}, [(BASE + i * SECOND, api_line(i)) for i in range(30)])
        ],
        "b": [
            ({"app": "api", "env": "dev"}, [(BASE + i * SECOND, f"b line {i}") for i in range(7)])
        ],
    }
    for tenant in HOSTILE_TENANTS:
        flushed[tenant] = [({"app": "x"}, [(BASE, f"flushed secret of {tenant}")])]
    for tenant, streams in flushed.items():
        with srv.client(tenant) as client:
            assert push(client, streams).status_code == 204
    with srv.client() as client:
        assert client.post("/flush").status_code == 204
    head = {
        "a": [({"app": "web"}, [(BASE + (100 + i) * SECOND, f"GET /page/{i}") for i in range(5)])],
        "b": [({"app": "web"}, [(BASE + 100 * SECOND, "b head line")])],
    }
    for tenant in HOSTILE_TENANTS:
        head[tenant] = [({"app": "x"}, [(BASE + SECOND, f"head secret of {tenant}")])]
    for tenant, streams in head.items():
        with srv.client(tenant) as client:
            assert push(client, streams).status_code == 204
    warm(srv)
    yield srv
    srv.stop()


def warm(server: Server) -> None:
    """Wait until a worker process is ready: the first query starts them, which takes a
    second or two on a busy machine, counted in that query's time."""
    for _ in range(20):
        if sql(server, "warm", "SELECT 1").status_code == 200:
            return
    raise AssertionError("no SQL worker became ready")


def sql(
    server: Server, tenant: str | None, query: str, *, accept: str | None = None, **params: str
) -> httpx.Response:
    """POST ``query`` as ``application/sql`` over the test window (or ``params``)."""
    headers = {"Content-Type": "application/sql"}
    if accept:
        headers["Accept"] = accept
    with server.client(tenant) as client:
        return client.post(
            "/svc/api/v1/sql", params={**WINDOW, **params}, content=query, headers=headers
        )


def rows(response: httpx.Response) -> list[list[Any]]:
    """The rows of a successful JSON answer."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "success"
    result: list[list[Any]] = body["data"]["rows"]
    return result

"""No endpoint lets one tenant see another's data, whatever the tenant IDs look like."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import Service, push, query_range, stream_values
from tests.timeline import BASE, WINDOW

# Valid tenant IDs made of every glob, quote and path character the spec allows.
HOSTILE_TENANTS = ["*", "a*", "'", "a')--", "(x)", "!", "..a", "a..", "_.-", "A"]


def _everything(server: Service, tenant: str) -> dict[str, object]:
    with server.client(tenant) as client:
        return {
            "query": stream_values(query_range(client, '{app=~".+"}', **WINDOW)),
            "labels": client.get("/svc/api/v1/labels", params=WINDOW).json(),
            "values": client.get("/svc/api/v1/label/app/values", params=WINDOW).json(),
            "series": client.get("/svc/api/v1/series", params={"match[]": "{}", **WINDOW}).json(),
        }


@pytest.mark.parametrize("flush", [False, True], ids=["head", "parquet"])
def test_hostile_tenants_see_only_their_own_data(
    make_app: Callable[..., InProcessApp], flush: bool
) -> None:
    srv = make_app()
    tenants = ["a", *HOSTILE_TENANTS]
    for tenant in tenants:
        with srv.client(tenant) as client:
            assert (
                push(client, [({"app": tenant}, [(BASE, f"line of {tenant}")])]).status_code == 204
            )
    if flush:
        srv.restart()
        lake = srv.data_dir / "lake"
        names = sorted(p.name for p in lake.iterdir())
        assert all("*" not in n and "'" not in n and "(" not in n for n in names), names
        assert len(names) == len(tenants)
    for tenant in tenants:
        seen = _everything(srv, tenant)
        assert seen["query"] == [({"app": tenant}, [[str(BASE), f"line of {tenant}"]])], tenant
        assert seen["values"] == {"status": "success", "data": [tenant]}
        assert seen["series"] == {"status": "success", "data": [{"app": tenant}]}
    fresh = _everything(srv, "nobody")
    assert fresh["query"] == []
    assert fresh["labels"] == {"status": "success"}


def test_label_values_with_sql_fragments_stay_data(app: InProcessApp, tenant: str) -> None:
    value = "x' OR 1=1; DROP TABLE streams; --"
    with app.client(tenant) as client:
        push(client, [({"app": value}, [(BASE, "one")]), ({"app": "other"}, [(BASE, "two")])])
        data = query_range(client, '{app="x\' OR 1=1; DROP TABLE streams; --"}', **WINDOW)
        regex = query_range(client, '{app=~"x\' OR 1=1.*"}', **WINDOW)
    assert stream_values(data) == [({"app": value}, [[str(BASE), "one"]])]
    assert stream_values(regex) == stream_values(data)

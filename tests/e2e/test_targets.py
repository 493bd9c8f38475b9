"""``-target``: each instance serves exactly the endpoint groups of the components it runs
(SPEC 4.1), answers 404 for the others, and lists its members in ``/services``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from svc.targets import TARGETS, components
from tests.e2e.app import InProcessApp

DELETION = {
    "compactor": {"retention_enabled": True, "delete_request_store": "filesystem"},
    "common": {"compactor_address": "http://127.0.0.1:1"},
}

# group -> (the components exposing it, one request of the group)
GROUPS: dict[str, tuple[frozenset[str], tuple[str, str]]] = {
    "ingest": (frozenset({"distributor"}), ("POST", "/loki/api/v1/push")),
    "otlp": (frozenset({"distributor"}), ("POST", "/otlp/v1/logs")),
    "query": (frozenset({"querier", "query-frontend"}), ("GET", "/loki/api/v1/query_range")),
    "volume": (frozenset({"querier", "query-frontend"}), ("GET", "/loki/api/v1/index/volume")),
    "labels": (frozenset({"querier"}), ("GET", "/loki/api/v1/labels")),
    "series": (frozenset({"querier"}), ("GET", "/loki/api/v1/series")),
    "flush": (frozenset({"ingester"}), ("POST", "/flush")),
    "prepare_shutdown": (frozenset({"ingester"}), ("GET", "/ingester/prepare_shutdown")),
    "index-gateway": (frozenset({"index-gateway"}), ("GET", "/sync-indexes")),
    "rules": (frozenset({"ruler"}), ("GET", "/loki/api/v1/rules")),
    "deletion": (frozenset({"compactor"}), ("GET", "/loki/api/v1/delete")),
}
COMMON = ["/ready", "/services", "/metrics", "/config", "/log_level",
          "/loki/api/v1/status/buildinfo", "/loki/api/v1/format_query?query={a=%22b%22}"]  # fmt: skip


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_target_serves_exactly_its_groups(
    make_app: Callable[..., InProcessApp], target: str
) -> None:
    app = make_app({"target": target, **DELETION})
    members = components(target)
    with app.client("t") as client:
        for path in COMMON:
            assert client.get(path).status_code == 200, path
        for group, (exposed_by, (method, path)) in GROUPS.items():
            response = client.request(method, path, params={"query": '{a="b"}'})
            if exposed_by & members:
                # (the rules API answers its own 404 when a tenant has no rule group)
                assert response.text != "404 page not found\n", group
            else:
                assert (response.status_code, response.text) == (404, "404 page not found\n"), group
        services = client.get("/services").text
    listed = {line.split(" => ")[0] for line in services.splitlines()}
    assert members <= listed, services
    assert not (listed - members) - {"store", "wal", "query-engine", "ingester"}, services
    assert ("ingester" in listed) == bool(members & {"distributor", "ingester"})

"""Operational endpoints through HTTP against real processes: log level, metrics, config,
flush, index sync, cache generation numbers, ring pages and exposure by target."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push, query_range
from tests.e2e.server import Server

BASE = 1_700_000_000_000_000_000
WINDOW = {"start": str(BASE - 10**9), "end": str(BASE + 3600 * 10**9)}


def _samples(srv: Server) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = httpx.get(srv.url + "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    out = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def _value(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


# log level -------------------------------------------------------------------------------


def test_log_level_changes_what_is_logged(make_server: Callable[..., Server]) -> None:
    srv = make_server()
    with srv.client("t") as client:
        assert client.get("/log_level").json() == {"message": "Current log level is info"}
        client.get("/ready")
        assert "path=/ready org_id=t status=200" not in srv.log_path.read_text()

        response = client.post("/log_level", data={"log_level": "debug"})
        assert response.status_code == 200
        assert response.json() == {"status": "success", "message": "Log level set to debug"}
        assert client.get("/log_level").json() == {"message": "Current log level is debug"}
        client.get("/ready")
        # the request line is logged after the response is sent
        deadline = time.monotonic() + 5
        while not re.search(
            r"level=debug .*path=/ready org_id=t status=200", srv.log_path.read_text()
        ):
            assert time.monotonic() < deadline, srv.log_path.read_text()
            time.sleep(0.02)
        assert "log_level: debug" in client.get("/config").text

        assert client.post("/log_level", params={"log_level": "warn"}).status_code == 200
        before = srv.log_path.read_text()
        assert push(client, [({"app": "a"}, [(BASE, "x")])]).status_code == 204
        assert client.post("/flush").status_code == 204  # logs "flushed head" at info
        after = srv.log_path.read_text()[len(before) :]
        assert "flushed head" not in after and "level=debug" not in after

        bad = client.post("/log_level", data={"log_level": "verbose"})
        assert (bad.status_code, bad.json()) == (400, {"message": "Invalid log level: verbose"})
        assert client.get("/log_level").json() == {"message": "Current log level is warn"}


# metrics ---------------------------------------------------------------------------------


def test_metrics_move_with_pushes_queries_and_flushes(server: Server, tenant: str) -> None:
    lines = ["alpha", "beta", "gamma!"]
    before = _samples(server)
    with server.client(tenant) as client:
        streams = [({"app": "m"}, [(BASE + i, line) for i, line in enumerate(lines)])]
        assert push(client, streams).status_code == 204
        assert query_range(client, '{app="m"}', **WINDOW)["result"]
        middle = _samples(server)
        assert client.post("/flush/tenant").status_code == 204
    after = _samples(server)

    def delta(name: str, **labels: str) -> float:
        return _value(middle, name, **labels) - _value(before, name, **labels)

    assert delta("svc_distributor_lines_received_total", tenant=tenant) == 3
    assert delta("svc_distributor_bytes_received_total", tenant=tenant) == sum(map(len, lines))
    push_route = {"method": "POST", "route": "svc_api_v1_push", "status_code": "204", "ws": "false"}
    assert delta("svc_request_duration_seconds_count", **push_route) == 1
    query_route = {"method": "GET", "route": "svc_api_v1_query_range", "ws": "false"}
    assert delta("svc_request_duration_seconds_count", status_code="200", **query_route) == 1
    assert delta("svc_ingester_wal_fsync_duration_seconds_count") >= 1
    assert _value(middle, "svc_ingester_memory_streams", tenant=tenant) == 1
    assert _value(middle, "svc_ingester_head_bytes") >= sum(map(len, lines))
    assert _value(middle, "svc_query_queue_length") == 0
    assert _value(after, "svc_ingester_flushes_total") > _value(
        middle, "svc_ingester_flushes_total"
    )
    assert _value(after, "svc_store_files", tenant=tenant) >= 1
    assert _value(after, "svc_store_bytes", tenant=tenant) > 0
    assert _value(after, "svc_ingester_memory_streams", tenant=tenant) == 0
    assert _value(after, "svc_service_state", service="ingester", state="Running") == 1
    assert not any(name.endswith("_created") for name, _ in after)


# config ----------------------------------------------------------------------------------


def test_config_modes(server: Server) -> None:
    full = yaml.safe_load(httpx.get(server.url + "/config").text)
    assert full["auth_enabled"] is True
    assert full["server"]["http_listen_port"] == server.port
    assert full["ingester"]["lifecycler"]["min_ready_duration"] == "0s"

    diffs = httpx.get(server.url + "/config", params={"mode": "diffs"})
    assert diffs.headers["content-type"].startswith("text/plain")
    assert yaml.safe_load(diffs.text) == {
        "server": {"http_listen_address": "127.0.0.1", "http_listen_port": server.port},
        "common": {"path_prefix": str(server.data_dir)},
        "limits_config": {
            "reject_old_samples": False,
            "ingestion_rate_mb": 1024.0,
            "ingestion_burst_size_mb": 1024.0,
            "per_stream_rate_limit": "1GB",
            "per_stream_rate_limit_burst": "1GB",
            "discover_service_name": [],
            "discover_log_levels": False,
        },
    }
    defaults = yaml.safe_load(httpx.get(server.url + "/config?mode=defaults").text)
    assert defaults["server"]["http_listen_port"] == 3100
    assert defaults["common"]["path_prefix"] == "./data"


def test_services_is_plain_text(server: Server) -> None:
    response = httpx.get(server.url + "/services")
    assert response.text.endswith("\n")
    assert "ingester => Running\n" in response.text


# flush -----------------------------------------------------------------------------------


def test_flush_tenant_is_synchronous_and_checks_its_input(server: Server, tenant: str) -> None:
    with server.client(tenant) as client:
        assert push(client, [({"app": "f"}, [(BASE, "to disk")])]).status_code == 204
        response = client.post("/flush/tenant", params={"streams": '{app="f"}'})
        assert response.status_code == 204
    lake = server.data_dir / "lake"
    assert [p for p in lake.iterdir() if p.name == f"tenant={tenant}"]
    with server.client() as anonymous:
        missing = anonymous.post("/flush/tenant")
    assert (missing.status_code, missing.text) == (401, "no org id")
    with server.client(tenant) as client:
        bad = client.post("/flush/tenant", data={"streams": '{app="f"'})
        assert (bad.status_code, bad.text) == (
            400,
            "parse error at line 1, col 9: syntax error: unexpected $end, expecting } or ,",
        )
        pipeline = client.post("/flush/tenant", params={"streams": '{app="f"} |= "x"'})
        assert (pipeline.status_code, pipeline.text) == (
            400,
            'invalid streams selector: {app="f"} |= "x": only a stream selector',
        )
        assert client.post("/flush").status_code == 204
        assert client.get("/flush").status_code == 204


# index sync ------------------------------------------------------------------------------


def test_sync_indexes_states_and_conflict(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"storage_config": {"tsdb_shipper": {"min_sync_duration": "2s"}}})
    with srv.client() as client:
        idle = client.get("/sync-indexes")
        assert idle.status_code == 200
        assert idle.json() == [
            {
                "name": "tsdb",
                "in_progress": False,
                "last_trigger": "never_triggered",
                "last_duration": "0s",
            }
        ]
        assert client.put("/sync-indexes").status_code == 202
        second = client.put("/sync-indexes")
        assert second.status_code == 409
        [running] = client.get("/sync-indexes").json()
        assert running["in_progress"] is True
        assert running["last_trigger"] == "manual"
        assert re.fullmatch(r"[0-9]+s", running["current_duration"])
        assert client.post("/sync-indexes").status_code == 405
        deadline = time.monotonic() + 10
        while client.get("/sync-indexes").json()[0]["in_progress"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        [done] = client.get("/sync-indexes").json()
        assert done == {
            "name": "tsdb",
            "in_progress": False,
            "last_trigger": "manual",
            "last_duration": "2s",
        }
        assert client.put("/sync-indexes").status_code == 202  # idle again


def test_sync_indexes_resyncs_periodically(make_app: Callable[..., InProcessApp]) -> None:
    periods = [
        {"from": "2020-10-24", "store": "tsdb", "object_store": "filesystem", "schema": "v13"},
        {"from": "2024-01-01", "store": "tsdb", "object_store": "filesystem", "schema": "v13"},
    ]
    srv = make_app(
        {
            "schema_config": {"configs": periods},
            "storage_config": {"tsdb_shipper": {"resync_interval": "1s"}},
        }
    )
    deadline = time.monotonic() + 10
    while True:
        entries = srv.client().get("/sync-indexes").json()
        if entries[0]["last_trigger"] == "periodic":
            break
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert [e["name"] for e in entries] == ["tsdb", "tsdb"]


def test_sync_indexes_unavailable_without_a_syncable_store(
    make_app: Callable[..., InProcessApp],
) -> None:
    periods = [
        {
            "from": "2020-10-24",
            "store": "boltdb-shipper",
            "object_store": "filesystem",
            "schema": "v12",
        }
    ]
    srv = make_app(
        {
            "schema_config": {"configs": periods},
            "limits_config": {"allow_structured_metadata": False},
        }
    )
    assert srv.client().get("/sync-indexes").status_code == 503
    assert srv.client().put("/sync-indexes").status_code == 503


# cache generation numbers ----------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["/svc/api/v1", "/loki/api/v1"])
def test_cache_generation_numbers_need_retention(server: Server, tenant: str, prefix: str) -> None:
    # Without compactor.retention_enabled the reference registers no deletion route.
    with server.client(tenant) as client:
        for response in (
            client.get(prefix + "/cache/generation_numbers"),
            client.post(prefix + "/cache/generation_numbers/increase"),
        ):
            assert response.status_code == 404


def test_cache_generation_numbers_increase(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app(
        {
            "compactor": {"retention_enabled": True},
            "overrides": {"off": {"deletion_mode": "disabled"}},
        }
    )
    path = "/svc/api/v1/cache/generation_numbers"
    with srv.client("off") as client:
        response = client.get(path)
        assert (response.status_code, response.text) == (
            403,
            "deletion is not available for this tenant\n",
        )
        assert response.headers["x-content-type-options"] == "nosniff"
    with srv.client("on") as client:
        assert client.get(path).json() == ""
        assert client.post(path + "/increase").status_code == 204
        first = client.get(path).json()
        assert first.isdigit()
        assert client.post("/loki/api/v1/cache/generation_numbers/increase").status_code == 204
        second = client.get("/loki/api/v1/cache/generation_numbers").json()
        assert int(second) > int(first)
    srv.restart()
    with srv.client("on") as client:
        assert client.get(path).json() == second
    with srv.client() as client:
        assert client.get(path).status_code == 401


# rings and exposure ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/ring", "/distributor/ring", "/indexgateway/ring", "/ruler/ring", "/compactor/ring"]
)
def test_ring_pages(server: Server, path: str) -> None:
    response = httpx.get(server.url + path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    for text in ("Ring Status", "ACTIVE", "HEALTHY", "Last Heartbeat", socket.gethostname()):
        assert text in response.text
    assert re.search(r"[0-9]+s ago", response.text)


def test_memberlist_page(server: Server) -> None:
    response = httpx.get(server.url + "/memberlist")
    assert response.status_code == 200
    assert "Memberlist Status" in response.text


def test_exposure_follows_the_target(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"target": "read"})
    for method, path in [
        ("POST", "/flush"),
        ("POST", "/ingester/shutdown"),
        ("GET", "/ingester/prepare_shutdown"),
        ("PUT", "/sync-indexes"),
        ("GET", "/svc/api/v1/cache/generation_numbers"),
    ]:
        assert srv.client().request(method, path).status_code == 404, path
    for path in ("/ready", "/metrics", "/config", "/services", "/log_level", "/ring"):
        assert srv.client().get(path).status_code == 200, path

"""Service lifecycle through HTTP against real processes: /services, /ready, shutdown,
prepare-shutdown with a real SIGTERM, and what is on disk afterwards."""

from __future__ import annotations

import re
import signal
from collections.abc import Callable
from pathlib import Path

import httpx
import pyarrow.parquet as pq

from svc.storage.wal_records import SEGMENT_HEADER
from tests.e2e.clients import push, query_range, stream_values
from tests.e2e.server import Server
from tests.e2e.waiting import wait_for

BASE = 1_700_000_000_000_000_000
WINDOW = {"start": str(BASE - 10**9), "end": str(BASE + 3600 * 10**9), "limit": "5000"}
SERVICES = (
    "store",
    "wal",
    "distributor",
    "ingester",
    "querier",
    "query-frontend",
    "query-scheduler",
    "index-gateway",
    "compactor",
    "ruler",
)
STREAMS = [({"app": "a"}, [(BASE + i, f"line {i}") for i in range(20)])]


def _services(srv: Server) -> dict[str, str]:
    response = httpx.get(srv.url + "/services")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    lines = response.text.splitlines()
    assert all(re.fullmatch(r"[a-z-]+ => [A-Z][a-z]+", line) for line in lines), lines
    return dict(line.split(" => ") for line in lines)


def _parquet_rows(srv: Server) -> int:
    lake = srv.data_dir / "lake"
    return (
        sum(pq.read_metadata(f).num_rows for f in lake.rglob("*.parquet")) if lake.exists() else 0
    )


def _wal_bytes(srv: Server) -> int:
    """Bytes of WAL records (each segment starts with a header that holds none)."""
    segments = list((srv.data_dir / "wal").glob("*.wal"))
    return sum(f.stat().st_size for f in segments) - len(SEGMENT_HEADER) * len(segments)


def _exit_code(srv: Server, timeout: float = 30.0) -> int:
    assert srv.process is not None
    code = srv.process.wait(timeout)
    srv.process = None
    return code


def _lines(srv: Server, tenant: str = "t") -> list[str]:
    with srv.client(tenant) as client:
        data = query_range(client, '{app="a"}', **WINDOW)
    return sorted(line for _, values in stream_values(data) for _, line in values)


def test_every_service_runs_and_ready_says_so(server: Server) -> None:
    assert _services(server) == dict.fromkeys(SERVICES, "Running")
    response = httpx.get(server.url + "/ready")
    assert (response.status_code, response.text) == (200, "ready\n")


def test_min_ready_duration_delays_readiness(make_server: Callable[..., Server]) -> None:
    srv = make_server({"ingester": {"lifecycler": {"min_ready_duration": "2s"}}}, start=False)
    srv.start(wait=False)
    seen: list[tuple[int, str]] = []

    def ready() -> bool:
        response = httpx.get(srv.url + "/ready", timeout=1)
        seen.append((response.status_code, response.text))
        return response.status_code == 200

    wait_for(ready, ignoring=(httpx.HTTPError,))
    assert (503, "Ingester not ready: waiting for 2s after startup\n") in seen
    assert seen[-1] == (200, "ready\n")


def _corrupt_wal(data_dir: Path) -> None:
    # A segment that cannot be read at all (damage inside a readable one only degrades
    # the service, see tests/reliability): replay fails and so does the wal service.
    (data_dir / "wal" / f"{1:016d}.wal").mkdir(parents=True)


def test_failed_service_shows_in_services_and_ready(make_server: Callable[..., Server]) -> None:
    srv = make_server(start=False)
    _corrupt_wal(srv.data_dir)
    srv.start(wait=False)
    # every service that can start has (the distributor, the compactor and the ruler depend on
    # the WAL: they stay New)
    wait_for(lambda: _services(srv)["wal"] == "Failed", ignoring=(httpx.HTTPError,))
    wait_for(lambda: _services(srv)["index-gateway"] == "Running", ignoring=(httpx.HTTPError,))
    assert _services(srv) == {
        "store": "Running",
        "wal": "Failed",
        "distributor": "New",
        "ingester": "New",
        "querier": "Running",
        "query-frontend": "Running",
        "query-scheduler": "Running",
        "index-gateway": "Running",
        "compactor": "New",
        "ruler": "New",
    }
    response = httpx.get(srv.url + "/ready")
    assert response.status_code == 503
    assert response.text == "Some services are not Running:\nNew: 4\nRunning: 5\nFailed: 1\n\n"
    with srv.client("t") as client:
        pushed = push(client, STREAMS)
    assert (pushed.status_code, pushed.text) == (
        503,
        "Ingester not ready: ingester not ready: New\n",  # push errors end with a newline
    )
    assert srv.stop() == 0


def test_shutdown_flushes_and_terminates(make_server: Callable[..., Server]) -> None:
    srv = make_server()
    with srv.client("t") as client:
        assert push(client, STREAMS).status_code == 204
        response = client.post("/ingester/shutdown")
    assert response.status_code == 204 and response.content == b""
    assert _exit_code(srv) == 0
    assert _parquet_rows(srv) == 20
    assert _wal_bytes(srv) == 0  # every record is in Parquet: the WAL holds nothing
    srv.start()
    assert _lines(srv) == sorted(f"line {i}" for i in range(20))


def test_shutdown_without_flush_leaves_the_head_in_the_wal(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server()
    with srv.client("t") as client:
        assert push(client, STREAMS).status_code == 204
        response = client.get("/ingester/shutdown", params={"flush": "false"})
    assert response.status_code == 204
    assert _exit_code(srv) == 0
    assert _parquet_rows(srv) == 0
    assert _wal_bytes(srv) > 0
    srv.start()  # replayed from the WAL
    assert _lines(srv) == sorted(f"line {i}" for i in range(20))


def test_shutdown_without_terminate_keeps_serving(make_server: Callable[..., Server]) -> None:
    srv = make_server()
    with srv.client("t") as client:
        assert push(client, STREAMS).status_code == 204
        response = client.post(
            "/ingester/shutdown", params={"terminate": "false", "delete_ring_tokens": "true"}
        )
        assert response.status_code == 204
        assert srv.process is not None and srv.process.poll() is None
        assert _services(srv)["ingester"] == "Terminated"
        ready = client.get("/ready")
        assert (ready.status_code, ready.text) == (
            503,
            "Some services are not Running:\nRunning: 9\nTerminated: 1\n\n",
        )
        refused = push(client, STREAMS)
        assert (refused.status_code, refused.text) == (500, "Ingester is shutting down\n")
        again = client.post("/ingester/shutdown")
        assert (again.status_code, again.text) == (503, "Ingester is stopping or already stopped.")
        assert "The ring is empty." in client.get("/ring").text
    assert _parquet_rows(srv) == 20
    assert _lines(srv) == sorted(f"line {i}" for i in range(20))  # reads still work
    assert srv.stop() == 0


def test_deprecated_flush_shutdown_flushes_and_keeps_the_process(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server({"ingester": {"flush_on_shutdown": False}})
    with srv.client("t") as client:
        assert push(client, STREAMS).status_code == 204
        assert client.get("/ingester/flush_shutdown").status_code == 405
        assert client.post("/ingester/flush_shutdown").status_code == 204
        assert _services(srv)["ingester"] == "Terminated"
        assert client.post("/ingester/flush_shutdown").status_code == 204
    assert _parquet_rows(srv) == 20
    assert srv.process is not None and srv.process.poll() is None
    assert srv.stop() == 0


def test_prepare_shutdown_then_sigterm_flushes(make_server: Callable[..., Server]) -> None:
    srv = make_server({"ingester": {"flush_on_shutdown": False}})
    marker = srv.data_dir / "shutdown-requested.txt"
    with srv.client("t") as client:
        assert client.get("/ingester/prepare_shutdown").text == "unset"
        response = client.post("/ingester/prepare_shutdown")
        assert response.status_code == 204 and response.content == b""
        assert client.get("/ingester/prepare_shutdown").text == "set"
        assert "svc_ingester_shutdown_marker 1.0" in client.get("/metrics").text
        assert push(client, STREAMS).status_code == 204
    assert marker.is_file()
    assert _parquet_rows(srv) == 0
    assert srv.stop() == 0  # a real SIGTERM
    assert _parquet_rows(srv) == 20
    assert _wal_bytes(srv) == 0
    assert not marker.exists()  # consumed by the shutdown it prepared


def test_prepare_shutdown_undone_restores_the_configured_shutdown(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server({"ingester": {"flush_on_shutdown": False}})
    with srv.client("t") as client:
        assert client.post("/ingester/prepare_shutdown").status_code == 204
        assert client.delete("/ingester/prepare_shutdown").status_code == 204
        assert client.get("/ingester/prepare_shutdown").text == "unset"
        assert push(client, STREAMS).status_code == 204
    assert srv.stop() == 0
    assert _parquet_rows(srv) == 0  # flush_on_shutdown is false again
    srv.start()
    assert _lines(srv) == sorted(f"line {i}" for i in range(20))


def test_prepare_shutdown_survives_a_crash(make_server: Callable[..., Server]) -> None:
    srv = make_server({"ingester": {"flush_on_shutdown": False}})
    with srv.client("t") as client:
        assert client.post("/ingester/prepare_shutdown").status_code == 204
        assert push(client, STREAMS).status_code == 204
    srv.kill()
    srv.start()
    with srv.client("t") as client:
        assert client.get("/ingester/prepare_shutdown").text == "set"
    srv.process.send_signal(signal.SIGINT)  # type: ignore[union-attr]
    assert _exit_code(srv) == 0
    assert _parquet_rows(srv) == 20


def test_sigterm_makes_ready_report_stopping(make_server: Callable[..., Server]) -> None:
    srv = make_server({"shutdown_delay": "3s"})
    assert srv.process is not None
    srv.process.send_signal(signal.SIGTERM)
    seen: list[tuple[int, str]] = []

    def stopping() -> bool:
        response = httpx.get(srv.url + "/ready", timeout=1)
        seen.append((response.status_code, response.text))
        return response.status_code == 503

    wait_for(stopping, timeout=3, ignoring=(httpx.HTTPError,))
    assert seen[-1] == (503, "Application is stopping\n")
    assert _services(srv)["ingester"] == "Running"  # still serving during the delay
    assert _exit_code(srv) == 0

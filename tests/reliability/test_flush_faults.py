"""A flush that fails keeps its entries queryable and in the WAL, and a later flush writes
them before anything newer (issue 12: a failed flush followed by a successful one retired
the WAL of the failed one; 1,000 of 1,250 acknowledged lines were lost at restart)."""

from __future__ import annotations

from collections.abc import Callable

from tests.e2e.server import Server
from tests.e2e.waiting import wait_for
from tests.reliability.helpers import (
    assert_once,
    line_counts,
    metric,
    push_lines,
    set_faults,
)


def _parquet_files(srv: Server) -> int:
    return len(list((srv.data_dir / "lake").rglob("*.parquet")))


FAULTS = [
    "lake.write enospc",
    "lake.write short",  # a Parquet file cut in half
    "lake.sync eio",
    "catalog.commit enospc",  # files written, never listed
    "wal.open enospc",  # no new WAL segment: the flush cannot even start
]


def test_failed_flush_then_successful_flush_loses_nothing(
    faulty_server: Callable[..., Server],
) -> None:
    # The flusher would retry on its own (next test): here only /flush flushes.
    srv = faulty_server({"ingester": {"flush_on_shutdown": False, "flush_check_period": "1h"}})
    acknowledged: list[str] = []
    with srv.client("t") as client:
        for number, fault in enumerate(FAULTS, start=1):
            first = [f"{fault} first {i}" for i in range(200)]
            assert push_lines(client, first, offset=len(acknowledged)).status_code == 204
            acknowledged += first
            files = _parquet_files(srv)
            set_faults(srv, fault)
            failed = client.post("/flush")
            assert failed.status_code == 503
            assert failed.text.startswith(
                "flush failed, the entries stay in memory and in the WAL and are retried: "
            )
            assert metric(srv, "svc_ingester_flush_failures_total") == number
            assert _parquet_files(srv) == files  # nothing half-written is left
            assert_once(line_counts(client), acknowledged)  # still served from memory
            set_faults(srv)
            second = [f"{fault} second {i}" for i in range(50)]
            assert push_lines(client, second, offset=len(acknowledged)).status_code == 204
            acknowledged += second
            assert client.post("/flush").status_code == 204
            assert _parquet_files(srv) > files
            assert_once(line_counts(client), acknowledged)
    srv.kill()
    srv.start()
    with srv.client("t") as client:
        assert_once(line_counts(client), acknowledged)


def test_the_flusher_retries_a_failed_flush_by_itself(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server({"ingester": {"max_chunk_age": "300ms"}})
    lines = [f"line {i}" for i in range(300)]
    set_faults(srv, "lake.write eio")
    with srv.client("t") as client:
        assert push_lines(client, lines).status_code == 204
        wait_for(lambda: metric(srv, "svc_ingester_flush_failures_total") >= 1)
        assert_once(line_counts(client), lines)
        set_faults(srv)
        wait_for(lambda: metric(srv, "svc_ingester_flushes_total") >= 1)
        assert _parquet_files(srv) == 1
        assert_once(line_counts(client), lines)
    srv.kill()
    srv.start()
    with srv.client("t") as client:
        assert_once(line_counts(client), lines)


def test_crash_while_a_flush_keeps_failing_loses_nothing(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server({"ingester": {"flush_on_shutdown": False, "flush_check_period": "1h"}})
    with srv.client("t") as client:
        assert push_lines(client, ["a"]).status_code == 204
        set_faults(srv, "lake.write enospc")
        assert client.post("/flush").status_code == 503
        assert push_lines(client, ["b"], offset=1).status_code == 204
        assert client.post("/flush").status_code == 503
    srv.kill()
    set_faults(srv)
    srv.start()
    with srv.client("t") as client:
        assert line_counts(client) == {"a": 1, "b": 1}
        assert client.post("/flush").status_code == 204
    srv.kill()
    srv.start()
    with srv.client("t") as client:
        assert line_counts(client) == {"a": 1, "b": 1}

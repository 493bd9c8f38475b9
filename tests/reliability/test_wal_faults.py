"""A WAL write that fails acknowledges nothing, leaves the WAL as it was, and the pushes
after the fault are kept (issue 12: a partial record followed by acknowledged records
made replay drop 2,000 of 10,100 acknowledged lines)."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.e2e.server import Server
from tests.reliability.helpers import assert_once, line_counts, metric, push_lines, set_faults

FAULTS = [
    ("wal.write enospc", "no space left on device"),
    ("wal.write eio", "input/output error"),
    ("wal.write short", "no space left on device"),  # half the batch lands, then ENOSPC
    ("wal.sync eio", "input/output error"),  # the batch is written, its fdatasync fails
]


def test_failed_wal_writes_lose_nothing_acknowledged(faulty_server: Callable[..., Server]) -> None:
    srv = faulty_server({"ingester": {"flush_on_shutdown": False}})
    acknowledged: list[str] = []

    def push_acknowledged(client: httpx.Client, name: str) -> None:
        for batch in range(3):
            lines = [f"{name} {batch} {i}" for i in range(100)]
            assert push_lines(client, lines, offset=len(acknowledged)).status_code == 204
            acknowledged.extend(lines)

    with srv.client("t") as client:
        push_acknowledged(client, "first")
        for number, (fault, reason) in enumerate(FAULTS, start=1):
            set_faults(srv, fault)
            refused = push_lines(client, [f"refused {number} {i}" for i in range(100)])
            assert (refused.status_code, refused.text) == (
                503,
                f"wal write failed, the push was not stored: {reason}\n",
            )
            assert metric(srv, "svc_wal_write_failures_total") == number
            assert client.get("/ready").status_code == 200  # the service stays up
            set_faults(srv)
            push_acknowledged(client, f"after {fault}")
    srv.kill()
    srv.start()
    with srv.client("t") as client:
        found = line_counts(client)
    assert_once(found, acknowledged)
    assert not any(line.startswith("refused") for line in found)


def test_a_batch_that_cannot_be_cut_back_moves_to_a_new_segment(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server({"ingester": {"flush_on_shutdown": False}})
    with srv.client("t") as client:
        assert push_lines(client, ["kept 1"]).status_code == 204
        set_faults(srv, "wal.write short", "wal.truncate eio")
        assert push_lines(client, ["x" * 500], offset=1).status_code == 503
        set_faults(srv)
        assert push_lines(client, ["kept 2"], offset=2).status_code == 204
    srv.kill()
    srv.start()
    with srv.client("t") as client:
        assert line_counts(client) == {"kept 1": 1, "kept 2": 1}
    assert metric(srv, "svc_wal_corrupt_records_total") == 0  # a torn tail, not damage

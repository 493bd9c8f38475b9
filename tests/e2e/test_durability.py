"""Acknowledged pushes survive restarts, flushes and kill -9."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import httpx
import pyarrow.parquet as pq

from tests.e2e.app import InProcessApp
from tests.e2e.clients import push, query_range, stream_values
from tests.e2e.server import Server
from tests.timeline import BASE, WINDOW

WINDOW_ALL = {**WINDOW, "limit": "5000"}


def _lines(client: httpx.Client, query: str = '{app=~".+"}') -> list[str]:
    data = query_range(client, query, **WINDOW_ALL)
    return sorted(line for _, values in stream_values(data) for _, line in values)


def test_restart_keeps_everything_and_flush_changes_no_answer(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server()
    streams = [
        ({"app": "a", "env": "prod"}, [(BASE + i, f"a{i}") for i in range(50)]),
        ({"app": "b"}, [(BASE + 86_400 * 10**9 // 2 + i, f"b{i}") for i in range(50)]),
    ]
    with srv.client("t") as client:
        assert push(client, streams).status_code == 204
        before = query_range(client, '{app=~".+"} |= "1"', **WINDOW_ALL)
    assert (
        not list((srv.data_dir / "lake").rglob("*.parquet"))
        if (srv.data_dir / "lake").exists()
        else True
    )

    assert srv.stop() == 0  # SIGTERM flushes the head to Parquet
    files = list((srv.data_dir / "lake").rglob("*.parquet"))
    assert files, "a clean shutdown flushes the head"
    assert sum(pq.read_metadata(f).num_rows for f in files) == 100
    assert all("tenant=t" in str(f) and "day=2023-11-1" in str(f) for f in files)

    srv.start()
    with srv.client("t") as client:
        after = query_range(client, '{app=~".+"} |= "1"', **WINDOW_ALL)
        labels = client.get("/svc/api/v1/labels", params=WINDOW_ALL).json()
    assert stream_values(after) == stream_values(before)
    assert labels["data"] == ["app", "env"]


def test_query_spans_parquet_and_head(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app()
    with srv.client("t") as client:
        push(client, [({"app": "x"}, [(BASE + 1, "flushed")])])
    srv.restart()
    with srv.client("t") as client:
        push(client, [({"app": "x"}, [(BASE + 2, "in head")])])
        data = query_range(client, '{app="x"}', **WINDOW_ALL)
    assert stream_values(data) == [
        ({"app": "x"}, [[str(BASE + 2), "in head"], [str(BASE + 1), "flushed"]])
    ]
    # One entry came from a Parquet file, the other from the head.
    assert data["stats"]["querier"]["store"]["totalChunksRef"] == 1
    assert data["stats"]["querier"]["store"]["chunk"]["decompressedLines"] == 1
    assert data["stats"]["ingester"]["totalLinesSent"] == 1


def test_kill_9_loses_no_acknowledged_push(make_server: Callable[..., Server]) -> None:
    srv = make_server({"ingester": {"flush_on_shutdown": False}})
    acknowledged: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(worker: int) -> None:
        with srv.client("t") as client:
            for i in range(100_000):
                if stop.is_set():
                    return
                line = f"w{worker}-{i}"
                try:
                    response = push(client, [({"app": "k", "w": str(worker)}, [(BASE + i, line)])])
                except httpx.HTTPError:
                    return
                if response.status_code == 204:
                    with lock:
                        acknowledged.append(line)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    # Kill in the middle of the traffic: once enough pushes were acknowledged, not after
    # a fixed time (which on a slow machine may come before the first one).
    deadline = time.monotonic() + 30
    while len(acknowledged) < 200 and time.monotonic() < deadline:
        time.sleep(0.01)
    srv.kill()
    stop.set()
    for thread in threads:
        thread.join()
    assert len(acknowledged) > 20
    srv.start()
    with srv.client("t") as client:
        found = set(_lines(client, '{app="k"}'))
    missing = set(acknowledged) - found
    assert not missing, f"{len(missing)} acknowledged entries lost, e.g. {sorted(missing)[:5]}"


def test_wal_replay_then_flush_keeps_entries_once(make_server: Callable[..., Server]) -> None:
    srv = make_server({"ingester": {"flush_on_shutdown": False}})
    with srv.client("t") as client:
        push(client, [({"app": "r"}, [(BASE + i, f"r{i}") for i in range(10)])])
    srv.kill()
    srv.start()  # replays the WAL
    srv.stop()  # flushes the replayed head
    srv.start()  # nothing left to replay
    with srv.client("t") as client:
        assert _lines(client, '{app="r"}') == sorted(f"r{i}" for i in range(10))


def test_limited_queries_stop_reading_older_files(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"querier": {"log_scan_group_rows": 1}})
    for hour in range(4):
        with srv.client("t") as client:
            entries = [(BASE + hour * 3600 * 10**9 + i, f"h{hour} e{i}") for i in range(5)]
            push(client, [({"app": "s"}, entries)])
        srv.restart()  # one Parquet file per hour
    with srv.client("t") as client:
        window = {"start": str(BASE), "end": str(BASE + 5 * 3600 * 10**9)}
        newest = query_range(client, '{app="s"} |= "e"', limit="3", **window)
        oldest = query_range(
            client, '{app="s"} | logfmt | __error__=""', limit="2", direction="forward", **window
        )
        everything = query_range(client, '{app="s"}', limit="100", **window)
    assert [v[1] for v in stream_values(newest)[0][1]] == ["h3 e4", "h3 e3", "h3 e2"]
    assert [v[1] for v in stream_values(oldest)[0][1]] == ["h0 e0", "h0 e1"]
    scanned = lambda data: data["stats"]["querier"]["store"]["totalChunksRef"]  # noqa: E731
    assert (scanned(newest), scanned(oldest), scanned(everything)) == (1, 1, 4)

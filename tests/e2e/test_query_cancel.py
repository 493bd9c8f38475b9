"""Timeouts, client disconnects and queue limits on a real server: the running DuckDB work
stops at once (the process's CPU time stops growing), the request is answered (504) or
logged (499), and a full queue refuses with 429.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.e2e.clients import push
from tests.e2e.server import Server

SECOND = 1_000_000_000
BASE = 1_700_000_000 * SECOND
HEAVY = {
    # every entry is in 3600 one-second steps' hour-long windows, whose quantiles are
    # sorted over and over: about ten seconds of work
    "query": 'quantile_over_time(0.5, {app="heavy"} | regexp `line (?P<n>\\d+)` | unwrap n [1h])',
    "start": str(BASE),
    "end": str(BASE + 3 * 3600 * SECOND),
    "step": "1",
}
CLIENT_CLOSED = "the request was cancelled by the client"


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _fill(srv: Server, tenant: str) -> None:
    entries = [(BASE + i * 120_000_000, f"line {i}") for i in range(30_000)]
    with srv.client(tenant) as client:
        for offset in range(0, len(entries), 5000):
            assert (
                push(client, [({"app": "heavy"}, entries[offset : offset + 5000])]).status_code
                == 204
            )


def _assert_cpu_stops(srv: Server) -> None:
    """The process soon uses (almost) no CPU for a second and a half (the interrupted
    statements take a moment to unwind, longer on a busy machine)."""
    assert srv.process is not None
    time.sleep(0.3)
    deadline = time.monotonic() + 8
    while True:
        before = _cpu_seconds(srv.process.pid)
        time.sleep(1.5)
        used = _cpu_seconds(srv.process.pid) - before
        if used < 0.3:
            return
        assert time.monotonic() < deadline, f"the server kept working: {used:.2f} CPU-s in 1.5 s"


def _wait_for_cpu(pid: int, since: float, seconds: float) -> None:
    """Until the process has used ``seconds`` of CPU more than ``since``."""
    deadline = time.monotonic() + 30
    while _cpu_seconds(pid) - since < seconds:
        assert time.monotonic() < deadline, "the query did not get to work"
        time.sleep(0.05)


def _request_count(srv: Server, status: str) -> float:
    text = httpx.get(srv.url + "/metrics").text
    total = 0.0
    for line in text.splitlines():
        if line.startswith("svc_request_duration_seconds_count{") and (
            f'status_code="{status}"' in line and "query_range" in line
        ):
            total += float(line.rsplit(" ", 1)[1])
    return total


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("cancel"), {"querier": {"max_concurrent": 2}}).start()
    _fill(srv, "t")
    yield srv
    srv.stop()


def test_client_disconnect_interrupts_the_query(busy: Server) -> None:
    assert busy.process is not None
    started = _cpu_seconds(busy.process.pid)
    target = httpx.URL(busy.url + "/svc/api/v1/query_range", params=HEAVY)
    with socket.create_connection(("127.0.0.1", busy.port)) as sock:
        sock.sendall(
            f"GET {target.raw_path.decode()} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "X-Scope-OrgID: t\r\n\r\n".encode()
        )
        _wait_for_cpu(busy.process.pid, started, 0.5)  # the query is at work: go away
    _assert_cpu_stops(busy)
    deadline = time.monotonic() + 5
    while _request_count(busy, "499") < 1:
        assert time.monotonic() < deadline, "the cancelled request was not counted as 499"
        time.sleep(0.1)
    assert CLIENT_CLOSED in busy.log_path.read_text()
    # the workers are free again
    with busy.client("t") as client:
        quick = client.get(
            "/svc/api/v1/query_range",
            params={"query": '{app="heavy"}', "start": str(BASE), "end": str(BASE + SECOND)},
        )
    assert quick.status_code == 200


def test_query_timeout_answers_504_and_stops_the_work(make_server: Any) -> None:
    srv = make_server({"limits_config": {"query_timeout": "1s"}})
    _fill(srv, "t")
    started = time.monotonic()
    with srv.client("t") as client:
        response = client.get("/svc/api/v1/query_range", params=HEAVY)
    assert time.monotonic() - started < 5
    assert (response.status_code, response.text) == (
        504,
        "request timed out, decrease the duration of the request or add more label matchers "
        "(prefer exact match over regex match) to reduce the amount of data processed",
    )
    _assert_cpu_stops(srv)


def test_full_queue_answers_429(make_server: Any) -> None:
    srv = make_server(
        {
            "querier": {"max_concurrent": 1},
            "query_scheduler": {"max_outstanding_requests_per_tenant": 2},
            "limits_config": {"split_queries_by_interval": "0s"},
        }
    )
    _fill(srv, "t")
    answers: list[httpx.Response] = []

    def heavy() -> None:
        with (
            httpx.Client(base_url=srv.url, headers={"X-Scope-OrgID": "t"}, timeout=2) as c,
            contextlib.suppress(httpx.ReadTimeout),
        ):
            answers.append(c.get("/svc/api/v1/query_range", params=HEAVY))

    threads = [threading.Thread(target=heavy) for _ in range(6)]
    for thread in threads:
        thread.start()
        time.sleep(0.05)
    for thread in threads:
        thread.join()
    refused = [r for r in answers if r.status_code == 429]
    assert refused, [r.status_code for r in answers]
    assert {r.text for r in refused} == {"too many outstanding requests"}
    _assert_cpu_stops(srv)


def test_max_concurrent_tail_requests(make_server: Any) -> None:
    srv = make_server({"limits_config": {"max_concurrent_tail_requests": 1}})
    url = srv.url.replace("http", "ws") + "/loki/api/v1/tail?query=%7Bapp%3D%22x%22%7D"
    headers = {"X-Scope-OrgID": "t"}
    with connect(url, additional_headers=headers):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, additional_headers=headers).close()
        response = refused.value.response
        assert response.status_code == 400
        assert response.body == (
            b"max concurrent tail requests limit exceeded, count > limit (2 > 1)"
        )
    deadline = time.monotonic() + 5
    while True:  # the first tail is closed: a new one is let in
        try:
            connect(url, additional_headers=headers).close()
            break
        except InvalidStatus:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_actor_path_sub_queues_share_the_workers_fairly(make_server: Any) -> None:
    """One worker; the first sub-queue queues 8 requests before two others queue 4 each:
    the worker takes them in turn, so the later sub-queues are not served last."""
    srv = make_server(
        {"querier": {"max_concurrent": 1}, "limits_config": {"split_queries_by_interval": "0s"}}
    )
    _fill(srv, "t")
    medium = {**HEAVY, "end": str(BASE + 1800 * SECOND)}
    done: list[str] = []
    lock = threading.Lock()

    def ask(path: str) -> None:
        with httpx.Client(base_url=srv.url, timeout=120) as client:
            response = client.get(
                "/svc/api/v1/query_range",
                params=medium,
                headers={"X-Scope-OrgID": "t", "X-Service-Actor-Path": path},
            )
        assert response.status_code == 200, response.text
        with lock:
            done.append(path)

    first = [threading.Thread(target=ask, args=("grafana|alice",)) for _ in range(8)]
    later = [threading.Thread(target=ask, args=(path,)) for path in ["bob"] * 4 + ["carol"] * 4]
    for thread in first:
        thread.start()
    time.sleep(0.3)  # alice's requests are queued (one runs)
    for thread in later:
        thread.start()
    for thread in first + later:
        thread.join()
    # Served in turn once all have queued: bob's and carol's last answers come well
    # before alice's last (first in, first out would serve them last).
    last = {path: max(i for i, p in enumerate(done) if p == path) for path in set(done)}
    assert last["bob"] <= 13 and last["carol"] <= 13, done
    assert done[-2:] == ["grafana|alice"] * 2, done

"""``kill -9`` at random moments (concurrent pushes, a flush, the shutdown), with storage
faults coming and going, and every acknowledged entry is there exactly once after each
restart."""

from __future__ import annotations

import contextlib
import random
import signal
import threading
import time
from collections.abc import Callable

import httpx

from tests.e2e.server import Server
from tests.e2e.waiting import wait_for
from tests.reliability.helpers import assert_once, line_counts, push_lines, set_faults

CYCLES = 6
WRITERS = 3
MOMENTS = ("pushes", "flush", "shutdown")
FAULTS = (
    (),
    ("wal.write enospc 3",),
    ("wal.sync eio 2",),
    ("lake.write short 2",),
    ("catalog.commit eio 1",),
)


class _Writers:
    """Threads pushing small batches until stopped, remembering what was acknowledged."""

    def __init__(self, srv: Server, cycle: int) -> None:
        self.srv = srv
        self.cycle = cycle
        self.acknowledged: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(w,)) for w in range(WRITERS)]

    def __enter__(self) -> _Writers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _run(self, writer: int) -> None:
        with httpx.Client(
            base_url=self.srv.url, headers={"X-Scope-OrgID": "t"}, timeout=10
        ) as client:
            for batch in range(1_000_000):
                if self._stop.is_set():
                    return
                lines = [f"c{self.cycle} w{writer} b{batch} {i}" for i in range(10)]
                offset = ((self.cycle * WRITERS + writer) * 100_000 + batch) * 10
                try:
                    response = push_lines(client, lines, app=f"w{writer}", offset=offset)
                except httpx.HTTPError:
                    return  # the server is gone
                if response.status_code == 204:
                    with self._lock:
                        self.acknowledged += lines


def _kill_at(srv: Server, moment: str, rng: random.Random) -> None:
    assert srv.process is not None
    if moment == "flush":
        threading.Thread(target=_flush, args=(srv,), daemon=True).start()
        time.sleep(rng.uniform(0.0, 0.05))
    elif moment == "shutdown":
        srv.process.send_signal(signal.SIGTERM)  # flushes on the way out
        time.sleep(rng.uniform(0.0, 0.3))
    srv.kill()


def _flush(srv: Server) -> None:
    with contextlib.suppress(httpx.HTTPError):  # killed meanwhile, as intended
        httpx.post(srv.url + "/flush", timeout=10)


def test_kill_9_at_random_moments_loses_nothing_acknowledged(
    faulty_server: Callable[..., Server],
) -> None:
    rng = random.Random(12)
    # A small head: flushes happen all the time, so kills land inside them too.
    srv = faulty_server({"ingester": {"head_max_bytes": 20_000, "max_chunk_age": "1s"}})
    acknowledged: list[str] = []
    for cycle in range(CYCLES):
        set_faults(srv, *rng.choice(FAULTS))
        with _Writers(srv, cycle) as writers:
            wait_for(lambda: len(writers.acknowledged) >= 100)
            time.sleep(rng.uniform(0.0, 0.4))
            _kill_at(srv, MOMENTS[cycle % len(MOMENTS)], rng)
        acknowledged += writers.acknowledged
        set_faults(srv)
        srv.start()
        with srv.client("t") as client:
            assert_once(line_counts(client), acknowledged)

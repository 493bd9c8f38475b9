"""Proof under load (not in CI): one tenant's flood does not hurt another's.

Two tenants on one real server (default configuration; tenant A's ingestion rate set by the
runtime overrides file). First tenant B alone: it pushes at a normal rate and runs light
queries, which gives its unloaded latencies. Then the same while tenant A pushes at ten
times its rate limit and keeps 50 heavy range queries running at once. Reported:

- B's push success rate (must stay 100%) and B's query latency p50/p99, unloaded and
  loaded (the loaded p99 must stay within 2x of the unloaded one);
- A's push answers (429s, with the reference's message) and that every entry A had
  acknowledged is stored (counted by a query at the end);
- the server's RSS over the run.

    .venv/bin/python -m benchmarks.limits_load --seconds 60
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.clients import json_body  # noqa: E402
from tests.e2e.server import Server  # noqa: E402

SECOND = 1_000_000_000
A_RATE_MB = 1.0
"""Tenant A's ingestion rate limit (MB/s); it pushes ten times that."""
B_LINES_PER_SECOND = 500
HEAVY_QUERIES = 50
RATE_MESSAGE = (
    f"ingestion rate limit exceeded for user a (limit: {int(A_RATE_MB * 1048576)} bytes/sec) "
    "while attempting to ingest '"
)


@dataclass
class Tally:
    """Outcomes and latencies of one kind of request."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    seconds: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    bodies: Counter[str] = field(default_factory=Counter)
    entries_ok: int = 0
    bytes_ok: int = 0

    def add(self, took: float, status: int, body: str = "", entries: int = 0) -> None:
        with self.lock:
            self.seconds.append(took)
            self.statuses[status] += 1
            if status == 204:
                self.entries_ok += entries
            elif status != 200 and body:
                self.bodies[
                    body.split("' lines")[0] if body.startswith(RATE_MESSAGE) else body
                ] += 1

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.seconds)
        out: dict[str, Any] = {"requests": len(ordered), "statuses": dict(self.statuses)}
        if ordered:
            out["p50_ms"] = round(statistics.median(ordered) * 1000, 1)
            out["p99_ms"] = round(
                ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1
            )
        if self.bodies:
            out["errors"] = dict(self.bodies.most_common(3))
        return out


def _line(rng: random.Random, n: int) -> str:
    status = rng.choice([200, 200, 200, 404, 500])
    return (
        f"level={rng.choice(['info', 'warn', 'error'])} method=GET "
        f"path=/items/{rng.randint(1, 500)} status={status} latency={rng.randint(1, 900)}ms "
        f"seq={n}"
    )


def _push(client: httpx.Client, tenant: str, app: str, lines: list[str]) -> httpx.Response:
    now = time.time_ns()
    streams = [({"app": app, "pod": f"{app}-{i % 4}"}, []) for i in range(4)]
    for i, line in enumerate(lines):
        streams[i % 4][1].append((now + i, line))  # type: ignore[arg-type]
    return client.post(
        "/loki/api/v1/push",
        content=json_body(streams),  # type: ignore[arg-type]
        headers={"Content-Type": "application/json", "X-Scope-OrgID": tenant},
    )


def _b_pusher(srv: Server, stop: threading.Event, tally: Tally) -> None:
    rng, counter = random.Random(1), itertools.count()
    with httpx.Client(base_url=srv.url, timeout=60) as client:
        while not stop.is_set():
            lines = [_line(rng, next(counter)) for _ in range(B_LINES_PER_SECOND // 10)]
            started = time.monotonic()
            response = _push(client, "b", "b", lines)
            tally.add(time.monotonic() - started, response.status_code, response.text, len(lines))
            stop.wait(max(0.0, 0.1 - (time.monotonic() - started)))


def _b_querier(srv: Server, stop: threading.Event, tally: Tally) -> None:
    queries = [
        ('{app="b"} |= "status=500"', {"limit": "100"}),
        ('sum by (pod) (count_over_time({app="b"}[1m]))', {"step": "15"}),
    ]
    with httpx.Client(base_url=srv.url, timeout=120, headers={"X-Scope-OrgID": "b"}) as client:
        for n in itertools.count():
            if stop.is_set():
                return
            query, extra = queries[n % len(queries)]
            now = time.time_ns()
            params = {"query": query, "start": str(now - 5 * 60 * SECOND), "end": str(now), **extra}
            started = time.monotonic()
            response = client.get("/loki/api/v1/query_range", params=params)
            tally.add(time.monotonic() - started, response.status_code, response.text[:200])
            stop.wait(0.2)


def _a_flooder(url: str, stop: threading.Event, tally: Tally, seed: int, threads: int) -> None:
    rng, counter = random.Random(seed), itertools.count(seed * 10**9)
    # ten times the rate limit, shared by the flooding threads
    per_push = [_line(rng, 0) for _ in range(2000)]
    size = sum(len(line) for line in per_push)
    interval = size / (10 * A_RATE_MB * 1048576 / threads)
    with httpx.Client(base_url=url, timeout=60) as client:
        while not stop.is_set():
            lines = [f"{line} n={next(counter)}" for line in per_push]
            started = time.monotonic()
            response = _push(client, "a", "a", lines)
            took = time.monotonic() - started
            tally.add(took, response.status_code, response.text, len(lines))
            if response.status_code == 204:
                with tally.lock:
                    tally.bytes_ok += sum(len(line) for line in lines)
            stop.wait(max(0.0, interval - (time.monotonic() - started)))


def _a_querier(url: str, stop: threading.Event, tally: Tally) -> None:
    query = 'quantile_over_time(0.99, {app="a"} | logfmt | unwrap duration(latency) [5m]) by (pod)'
    with httpx.Client(base_url=url, timeout=300, headers={"X-Scope-OrgID": "a"}) as client:
        while not stop.is_set():
            now = time.time_ns()
            params = {
                "query": query,
                "start": str(now - 2 * 3600 * SECOND),
                "end": str(now),
                "step": "60",
            }
            started = time.monotonic()
            try:
                response = client.get("/loki/api/v1/query_range", params=params)
                tally.add(time.monotonic() - started, response.status_code, response.text[:200])
            except httpx.HTTPError as exc:
                tally.add(time.monotonic() - started, 0, type(exc).__name__)


def _rss_sampler(srv: Server, stop: threading.Event, samples: list[int]) -> None:
    assert srv.process is not None
    status = Path(f"/proc/{srv.process.pid}/status")
    while not stop.is_set():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                samples.append(int(line.split()[1]) * 1024)
        stop.wait(1.0)


def _a_load(
    url: str, seconds: float, heavy: int, flooders: int, nice: int, results: Connection
) -> None:
    """Tenant A's flood, in a process of its own: A is another client, and its threads
    building bodies must not take the interpreter lock from B's timed requests. At
    ``nice`` (``--a-nice``): on a machine of two cores, this process's own CPU (building and
    sending 60 bodies of 2,000 lines a second) otherwise takes a core from the server,
    which a client elsewhere does not."""
    if nice:
        os.nice(nice)
    stop = threading.Event()
    pushes, queries = Tally(), Tally()
    threads = [
        threading.Thread(target=_a_flooder, args=(url, stop, pushes, i, flooders))
        for i in range(flooders)
    ]
    threads += [
        threading.Thread(target=_a_querier, args=(url, stop, queries)) for _ in range(heavy)
    ]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    results.send(
        {
            "a_push": pushes.summary(),
            "a_query": queries.summary(),
            "entries_ok": pushes.entries_ok,
            "bytes_ok": pushes.bytes_ok,
        }
    )


def _phase(
    srv: Server, seconds: float, *, loaded: bool, heavy: int, flooders: int, a_nice: int
) -> dict[str, Any]:
    stop = threading.Event()
    tallies = {name: Tally() for name in ("b_push", "b_query")}
    rss: list[int] = []
    threads = [
        threading.Thread(target=_b_pusher, args=(srv, stop, tallies["b_push"])),
        threading.Thread(target=_b_querier, args=(srv, stop, tallies["b_query"])),
        threading.Thread(target=_rss_sampler, args=(srv, stop, rss)),
    ]
    print(f"phase: {'loaded' if loaded else 'unloaded'}, {seconds} s", file=sys.stderr)
    receiver, sender = multiprocessing.Pipe(duplex=False)
    # Spawned, not forked: a fork copies whatever lock another thread of this process
    # holds (OpenSSL's, say), and A's threads then hung creating their clients.
    flood = multiprocessing.get_context("spawn").Process(
        target=_a_load, args=(srv.url, seconds, heavy, flooders, a_nice, sender)
    )
    started = time.monotonic()
    if loaded:
        flood.start()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    report: dict[str, Any] = {name: tally.summary() for name, tally in tallies.items()}
    a = {"entries_ok": 0}
    if loaded:
        a = receiver.recv()
        flood.join()
        report["a_push"], report["a_query"] = a["a_push"], a["a_query"]
    took = time.monotonic() - started
    report["seconds"] = round(took, 1)
    if loaded:
        report["a_accepted_mb_per_s"] = round(a["bytes_ok"] / 2**20 / seconds, 2)
    report["rss_max_mb"] = round(max(rss) / 2**20, 1) if rss else None
    report["a_acknowledged_entries"] = a["entries_ok"]
    return report


def _preload(srv: Server, minutes: int) -> int:
    """Two hours of tenant A's data (its limits are raised for the preload)."""
    rng = random.Random(7)
    pushed = 0
    with httpx.Client(base_url=srv.url, timeout=120) as client:
        now = time.time_ns()
        for minute in range(minutes):
            at = now - (minutes - minute) * 60 * SECOND
            streams = [({"app": "a", "pod": f"a-{p}"}, []) for p in range(4)]
            for i in range(2000):
                streams[i % 4][1].append((at + i * 30_000_000, _line(rng, pushed + i)))  # type: ignore[arg-type]
            response = client.post(
                "/loki/api/v1/push",
                content=json_body(streams),  # type: ignore[arg-type]
                headers={"Content-Type": "application/json", "X-Scope-OrgID": "a"},
            )
            assert response.status_code == 204, response.text
            pushed += 2000
    return pushed


def _count(srv: Server, tenant: str, app: str, since_ns: int) -> int:
    now = time.time_ns()
    params = {"query": f'sum(count_over_time({{app="{app}"}}[3h]))', "time": str(now + SECOND)}
    with httpx.Client(base_url=srv.url, timeout=300, headers={"X-Scope-OrgID": tenant}) as client:
        result = client.get("/loki/api/v1/query", params=params).json()["data"]["result"]
    return int(result[0]["value"][1]) if result else 0


def run(
    seconds: float,
    heavy: int = HEAVY_QUERIES,
    preload_minutes: int = 110,
    flooders: int = 4,
    a_nice: int = 19,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runtime = root / "runtime.yaml"
        runtime.write_text(yaml.safe_dump({"overrides": {"a": {"ingestion_rate_mb": 1000}}}))
        # The service's defaults, except the runtime file and old samples (the preload).
        srv = Server(
            root,
            {
                "runtime_config": {"file": str(runtime), "period": "1s"},
                "limits_config": {
                    "ingestion_rate_mb": 4,
                    "ingestion_burst_size_mb": 6,
                    "per_stream_rate_limit": "3MB",
                    "per_stream_rate_limit_burst": "15MB",
                },
            },
        ).start()
        try:
            preloaded = _preload(srv, preload_minutes)
            runtime.write_text(
                yaml.safe_dump(
                    {
                        "overrides": {
                            "a": {
                                "ingestion_rate_mb": A_RATE_MB,
                                "ingestion_burst_size_mb": 2 * A_RATE_MB,
                            }
                        }
                    }
                )
            )
            time.sleep(2.5)  # the runtime file is read again
            started = time.time_ns()
            load = {"heavy": heavy, "flooders": flooders, "a_nice": a_nice}
            report: dict[str, Any] = {"preloaded_a_entries": preloaded, "a_client_nice": a_nice}
            report["unloaded"] = _phase(srv, seconds, loaded=False, **load)
            report["loaded"] = _phase(srv, seconds, loaded=True, **load)
            time.sleep(1)
            stored = _count(srv, "a", "a", started)
            report["a_entries_stored"] = stored
            report["a_entries_expected"] = preloaded + report["loaded"]["a_acknowledged_entries"]
            unloaded_p99 = report["unloaded"]["b_query"]["p99_ms"]
            loaded_p99 = report["loaded"]["b_query"]["p99_ms"]
            report["b_query_p99_ratio"] = round(loaded_p99 / unloaded_p99, 2)
        finally:
            srv.stop()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--heavy", type=int, default=HEAVY_QUERIES, help="A's queries at once")
    parser.add_argument("--preload-minutes", type=int, default=110)
    parser.add_argument(
        "--flooders", type=int, default=4, help="A's pushing threads (0: A only queries)"
    )
    parser.add_argument(
        "--a-nice",
        type=int,
        default=19,
        help="nice value of A's load process (0: it competes with the server for the cores)",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/limits_load.json"))
    args = parser.parse_args()
    report = run(args.seconds, args.heavy, args.preload_minutes, args.flooders, args.a_nice)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

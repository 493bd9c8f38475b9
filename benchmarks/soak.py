"""Soak run (not in CI): mixed push and query load on a real server for a long while.

Starts a server on a loopback port over a fresh data directory (small head, so it flushes
to Parquet many times), then runs pushers (several tenants) and queriers (log queries with
filters and templates, metric queries, labels, series, index stats) for ``--minutes``.
Every ``--interval`` seconds it samples the server's RSS, open files and threads and the
latency of each request kind. At the end it fits a line through each resource over the
run after the warm-up and reports the growth per hour; a resource "grows" when its fitted
rise over the measured span exceeds the tolerance (10% of its mean, and 5 MiB / 5 files /
2 threads).

    python benchmarks/soak.py --minutes 30
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.clients import json_body  # noqa: E402
from tests.e2e.server import Server  # noqa: E402

TENANTS = ("soak-a", "soak-b", "soak-c")
QUERIES = {
    "log_filter": '{app="api"} |= "status=500"',
    "log_json": '{app="worker"} | json | level="error"',
    "log_template": '{app="api"} | logfmt | line_format "{{.method}} {{.path | upper}}"',
    "metric_rate": 'sum by (app) (rate({app=~".+"}[1m]))',
    "metric_json": 'sum by (level) (count_over_time({app="worker"} | json [5m]))',
}
WORDS = ("GET", "POST", "PUT", "DELETE")


@dataclass
class Latencies:
    """Request latencies and failures by kind, since the last sample."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    seconds: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    total: int = 0

    def add(self, kind: str, took: float, ok: bool) -> None:
        with self.lock:
            self.seconds[kind].append(took)
            self.total += 1
            if not ok:
                self.failures[kind] += 1

    def take(self) -> tuple[dict[str, list[float]], dict[str, int]]:
        with self.lock:
            seconds, failures = dict(self.seconds), dict(self.failures)
            self.seconds, self.failures = defaultdict(list), defaultdict(int)
        return seconds, failures


def _line(rng: random.Random, app: str, n: int) -> str:
    if app == "worker":
        level = rng.choice(["info", "info", "warn", "error"])
        return json.dumps({"level": level, "job": f"j{n % 50}", "took_ms": rng.randint(1, 900)})
    status = rng.choice([200, 200, 200, 404, 500])
    return (
        f"method={rng.choice(WORDS)} path=/items/{rng.randint(1, 500)} status={status} "
        f"took={rng.randint(1, 300)}ms"
    )


def _pusher(server: Server, stop: threading.Event, lat: Latencies, seed: int) -> None:
    rng = random.Random(seed)
    counter = itertools.count()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        while not stop.is_set():
            tenant = rng.choice(TENANTS)
            streams = []
            for app in ("api", "worker"):
                pod = f"{app}-{rng.randint(0, 9)}"
                now = time.time_ns()
                entries: list[Any] = [
                    (now + i, _line(rng, app, next(counter))) for i in range(rng.randint(20, 200))
                ]
                streams.append(({"app": app, "pod": pod}, entries))
            started = time.monotonic()
            response = client.post(
                "/loki/api/v1/push",
                content=json_body(streams),
                headers={"Content-Type": "application/json", "X-Scope-OrgID": tenant},
            )
            lat.add("push", time.monotonic() - started, response.status_code == 204)
            stop.wait(0.05)


def _querier(server: Server, stop: threading.Event, lat: Latencies, seed: int) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        while not stop.is_set():
            tenant = rng.choice(TENANTS)
            kind = rng.choice([*QUERIES, "labels", "series", "index_stats"])
            now = time.time_ns()
            window = {"start": str(now - 15 * 60 * 10**9), "end": str(now)}
            if kind in QUERIES:
                path, params = "/loki/api/v1/query_range", {"query": QUERIES[kind], **window}
            elif kind == "labels":
                path, params = "/loki/api/v1/labels", window
            elif kind == "series":
                path, params = "/loki/api/v1/series", {"match[]": '{app="api"}', **window}
            else:
                path, params = "/loki/api/v1/index/stats", {"query": '{app=~".+"}', **window}
            started = time.monotonic()
            response = client.get(path, params=params, headers={"X-Scope-OrgID": tenant})
            lat.add(kind, time.monotonic() - started, response.status_code == 200)
            stop.wait(0.1)


def _resources(server: Server) -> dict[str, int]:
    assert server.process is not None
    pid = server.process.pid
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {
        "rss_mib": int(fields["VmRSS"].split()[0]) // 1024,
        "open_files": len(list(Path(f"/proc/{pid}/fd").iterdir())),
        "threads": int(fields["Threads"]),
    }


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _slope_per_hour(times: list[float], values: list[float]) -> float:
    if len(times) < 3:
        return 0.0
    mean_t, mean_v = statistics.fmean(times), statistics.fmean(values)
    spread = sum((t - mean_t) ** 2 for t in times)
    if spread == 0:
        return 0.0
    slope = sum((t - mean_t) * (v - mean_v) for t, v in zip(times, values, strict=True)) / spread
    return slope * 3600


TOLERANCE = {"rss_mib": 5.0, "open_files": 5.0, "threads": 2.0}


def _trends(samples: list[dict[str, Any]], warmup: float) -> dict[str, dict[str, Any]]:
    kept = [s for s in samples if s["t"] >= warmup] or samples
    times = [s["t"] for s in kept]
    span_hours = (times[-1] - times[0]) / 3600 if len(times) > 1 else 0.0
    out = {}
    for name, floor in TOLERANCE.items():
        values = [float(s[name]) for s in kept]
        per_hour = _slope_per_hour(times, values)
        rise = per_hour * span_hours
        limit = max(floor, 0.1 * statistics.fmean(values))
        out[name] = {
            "first": values[0],
            "last": values[-1],
            "max": max(values),
            "growth_per_hour": round(per_hour, 2),
            "fitted_rise": round(rise, 2),
            "verdict": "grows" if rise > limit else "flat",
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--interval", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds left out of trends")
    parser.add_argument("--pushers", type=int, default=2)
    parser.add_argument("--queriers", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write samples and trends as JSON here")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="svc-soak-"))
    overrides = {"ingester": {"head_max_bytes": 4 * 1024 * 1024}}
    server = Server(root, overrides).start()
    stop = threading.Event()
    lat = Latencies()
    workers = [
        threading.Thread(target=_pusher, args=(server, stop, lat, i), daemon=True)
        for i in range(args.pushers)
    ] + [
        threading.Thread(target=_querier, args=(server, stop, lat, 100 + i), daemon=True)
        for i in range(args.queriers)
    ]
    samples: list[dict[str, Any]] = []
    started = time.monotonic()
    try:
        for worker in workers:
            worker.start()
        deadline = started + args.minutes * 60
        print("t(s)  rss(MiB) files threads  reqs  p50 push  p99 push  p50 query  p99 query  fail")
        while time.monotonic() < deadline:
            stop.wait(args.interval)
            seconds, failures = lat.take()
            queries = [v for k, vs in seconds.items() if k != "push" for v in vs]
            pushes = seconds.get("push", [])
            sample: dict[str, Any] = {
                "t": round(time.monotonic() - started, 1),
                **_resources(server),
                "requests": len(queries) + len(pushes),
                "push_p50": round(_percentile(pushes, 0.5), 4) if pushes else None,
                "push_p99": round(_percentile(pushes, 0.99), 4) if pushes else None,
                "query_p50": round(_percentile(queries, 0.5), 4) if queries else None,
                "query_p99": round(_percentile(queries, 0.99), 4) if queries else None,
                "failures": sum(failures.values()),
            }
            samples.append(sample)
            print(
                f"{sample['t']:5.0f} {sample['rss_mib']:8d} {sample['open_files']:5d} "
                f"{sample['threads']:7d} {sample['requests']:5d} {sample['push_p50']!s:>9} "
                f"{sample['push_p99']!s:>9} {sample['query_p50']!s:>10} "
                f"{sample['query_p99']!s:>10} {sample['failures']:5d}",
                flush=True,
            )
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=70)
        server.stop()
    trends = _trends(samples, args.warmup)
    summary = {
        "minutes": round((time.monotonic() - started) / 60, 1),
        "requests": lat.total,
        "failures": sum(s["failures"] for s in samples),
        "trends": trends,
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "samples": samples}, indent=2))
    grows = [name for name, trend in trends.items() if trend["verdict"] == "grows"]
    return 1 if grows or summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())

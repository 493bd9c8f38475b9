"""Long schema-driven HTTP fuzz run against a real server: no 5xx, bounded memory.

Starts a server on a loopback port over a fresh data directory, seeds a little data, then
sends ``--requests`` requests drawn by schemathesis from ``/svc/api/v1/openapi.json``
(LogQL parameters and push bodies from ``tests/fuzz/strategies.py``), sampling the
server's RSS as it goes. Prints a summary (status histogram, 5xx examples, RSS, rate) and
exits 1 if any request got a 5xx or the server died. The short CI pass is ``tests/fuzz``.

    python benchmarks/fuzz_http.py --requests 100000 --seed 1
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from svc.api.openapi import openapi_document  # noqa: E402
from tests.e2e.clients import push  # noqa: E402
from tests.e2e.server import Server  # noqa: E402
from tests.fuzz.strategies import json_push_bodies, register_schemathesis_formats  # noqa: E402

EXCLUDED = r"^/(ingester/(shutdown|flush_shutdown|prepare_shutdown)|log_level)$"
BASE = 1_700_000_000_000_000_000
TENANT = "fuzz"


def _rss_kib(server: Server) -> tuple[int, int]:
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


class Worker:
    """One fuzzing process: draws requests, sends them, counts the answers."""

    def __init__(self, url: str, total: int, name: str) -> None:
        self.url = url
        self.total = total
        self.name = name
        self.sent = 0
        self.statuses: collections.Counter[int] = collections.Counter()
        self.errors: list[dict[str, Any]] = []
        self.transport_errors = 0
        self.started = time.monotonic()
        self.client = httpx.Client(base_url=url, timeout=60)

    def record(self, status: int, what: dict[str, Any]) -> None:
        self.sent += 1
        self.statuses[status] += 1
        if status >= 500 and len(self.errors) < 20:
            self.errors.append({"status": status, **what})
        if self.sent % 2000 == 0:
            rate = self.sent / (time.monotonic() - self.started)
            fives = sum(n for s, n in self.statuses.items() if s >= 500)
            print(f"[{self.name}] {self.sent}/{self.total}, {rate:.0f}/s, 5xx {fives}", flush=True)

    def call_case(self, case: Any) -> None:
        headers = {"X-Scope-OrgID": TENANT, **(case.headers or {})}
        try:
            response = case.call(base_url=self.url, headers=headers, timeout=60)
        except Exception:  # a client-side refusal (say, a URL too long to send)
            self.transport_errors += 1
            return
        what = {"op": f"{case.method} {case.path}", "query": str(case.query)[:300]}
        self.record(response.status_code, {**what, "body": response.text[:300]})

    def push_body(self, body: bytes) -> None:
        response = self.client.post(
            "/loki/api/v1/push",
            content=body,
            headers={"Content-Type": "application/json", "X-Scope-OrgID": TENANT},
        )
        what = {"op": "POST push", "query": repr(body[:300]), "body": response.text[:300]}
        self.record(response.status_code, what)


def _work(url: str, total: int, worker_seed: int) -> dict[str, Any]:
    """Run one worker to completion; its counters as plain data."""
    register_schemathesis_formats()
    schema = schemathesis.openapi.from_dict(openapi_document()).exclude(path_regex=EXCLUDED)
    operations = [result.ok() for result in schema.get_all_operations()]
    requests = st.one_of(
        st.one_of([op.as_strategy() for op in operations]).map(lambda case: ("case", case)),
        json_push_bodies.map(lambda body: ("push", body)),
    )
    worker = Worker(url, total, f"w{worker_seed}")

    @settings(
        max_examples=total,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(item=requests)
    def fuzz(item: tuple[str, Any]) -> None:
        kind, value = item
        if kind == "case":
            worker.call_case(value)
        else:
            worker.push_body(value)

    seed(worker_seed)(fuzz)()
    return {
        "sent": worker.sent,
        "statuses": dict(worker.statuses),
        "errors": worker.errors,
        "transport_errors": worker.transport_errors,
    }


def _seed(server: Server) -> None:
    with server.client(TENANT) as client:
        streams: list[tuple[dict[str, str], list[Any]]] = [
            (
                {"app": "x", "env": "prod"},
                [(BASE + i * 10**9, f'{{"n":{i},"msg":"m {i}"}} level=info') for i in range(2000)],
            ),
            ({"app": "n40"}, [(BASE, "a" * 40 + "!")]),
        ]
        assert push(client, streams).status_code == 204


def _sample_rss(server: Server, samples: list[int], stop: threading.Event) -> None:
    while not stop.wait(5.0):
        samples.append(_rss_kib(server)[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--query-timeout", default="10s")
    parser.add_argument("--out", type=Path, help="write the summary as JSON here")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="svc-fuzz-"))
    server = Server(root, {"limits_config": {"query_timeout": args.query_timeout}}).start()
    samples: list[int] = []
    stop = threading.Event()
    started = time.monotonic()
    try:
        _seed(server)
        start_rss, _ = _rss_kib(server)
        sampler = threading.Thread(target=_sample_rss, args=(server, samples, stop), daemon=True)
        sampler.start()
        share = -(-args.requests // args.workers)
        with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
            results = pool.starmap(
                _work, [(server.url, share, args.seed * 1000 + i) for i in range(args.workers)]
            )
        stop.set()
        ready = httpx.get(server.url + "/ready", timeout=10).status_code
        end_rss, peak_rss = _rss_kib(server)
    finally:
        stop.set()
        server.stop()
    elapsed = time.monotonic() - started
    statuses: collections.Counter[int] = collections.Counter()
    for result in results:
        statuses.update({int(k): v for k, v in result["statuses"].items()})
    sent = sum(r["sent"] for r in results)
    summary = {
        "requests": sent,
        "workers": args.workers,
        "transport_errors": sum(r["transport_errors"] for r in results),
        "seconds": round(elapsed, 1),
        "requests_per_second": round(sent / elapsed, 1),
        "statuses": dict(sorted(statuses.items())),
        "5xx": sum(n for status, n in statuses.items() if status >= 500),
        "rss_start_mib": start_rss // 1024,
        "rss_end_mib": end_rss // 1024,
        "rss_peak_mib": peak_rss // 1024,
        "rss_samples_mib": [s // 1024 for s in samples[:: max(1, len(samples) // 20)]],
        "ready_after": ready,
        "examples_5xx": [e for r in results for e in r["errors"]][:20],
    }
    text = json.dumps(summary, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 1 if summary["5xx"] or ready != 200 else 0


if __name__ == "__main__":
    sys.exit(main())

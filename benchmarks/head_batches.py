"""Queries over the head of a tenant that pushes small batches, as a ratio to the same rows
pushed in large batches, on one real server in the same run.

Tenant ``small`` pushes ``--lines`` lines in pushes of 50 (a shipper's steady trickle);
tenant ``large`` pushes the same lines in pushes of 5,000. Nothing is flushed (the head
holds them all), so both queries read the head only. Two query shapes (a line filter with
a limit, and a ``count_over_time`` by stream) run alternately for each tenant; reported
are the medians and ``small / large``: 1.0 means small pushes cost queries nothing.

    python -m benchmarks.head_batches --lines 150000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.clients import json_body  # noqa: E402
from tests.e2e.server import Server  # noqa: E402

SECOND = 1_000_000_000
QUERIES = [
    ('{app="web"} |= "status=500"', {"limit": "100"}),
    ('sum by (pod) (count_over_time({app="web"}[1m]))', {"step": "15"}),
]


def _push(client: httpx.Client, tenant: str, start_ns: int, first: int, count: int) -> None:
    streams: list[tuple[dict[str, str], list[tuple[int, str]]]] = [
        ({"app": "web", "pod": f"web-{p}"}, []) for p in range(4)
    ]
    for n in range(first, first + count):
        line = f"level=info path=/items/{n % 500} status={[200, 404, 500][n % 3]} seq={n}"
        streams[n % 4][1].append((start_ns + n * 1_000_000, line))
    response = client.post(
        "/loki/api/v1/push",
        content=json_body(streams),  # type: ignore[arg-type]
        headers={"Content-Type": "application/json", "X-Scope-OrgID": tenant},
    )
    assert response.status_code == 204, response.text


def run(lines: int, repeat: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server(Path(tmp), {}).start()
        try:
            start_ns = time.time_ns() - lines * 1_000_000 - 60 * SECOND
            with httpx.Client(base_url=srv.url, timeout=120) as client:
                for tenant, size in (("small", 50), ("large", 5000)):
                    for first in range(0, lines, size):
                        _push(client, tenant, start_ns, first, min(size, lines - first))
                end_ns = time.time_ns()
                seconds: dict[tuple[str, int], list[float]] = {}
                for _ in range(repeat):
                    for shape, (query, extra) in enumerate(QUERIES):
                        for tenant in ("small", "large"):
                            params = {
                                "query": query,
                                "start": str(start_ns),
                                "end": str(end_ns),
                                **extra,
                            }
                            began = time.perf_counter()
                            response = client.get(
                                "/loki/api/v1/query_range",
                                params=params,
                                headers={"X-Scope-OrgID": tenant},
                            )
                            took = time.perf_counter() - began
                            assert response.status_code == 200, response.text
                            seconds.setdefault((tenant, shape), []).append(took)
        finally:
            srv.stop()
    report: dict[str, Any] = {"lines": lines, "repeat": repeat}
    for shape, (query, _) in enumerate(QUERIES):
        small = statistics.median(seconds[("small", shape)]) * 1000
        large = statistics.median(seconds[("large", shape)]) * 1000
        report[query] = {
            "small_ms": round(small, 1),
            "large_ms": round(large, 1),
            "ratio": round(small / large, 2),
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    print(json.dumps(run(args.lines, args.repeat), indent=1))


if __name__ == "__main__":
    main()

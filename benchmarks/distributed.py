"""Queries on Ray actors against the in-process engine: speed-up and per-query overhead.

Builds a store from the fixed corpus (``benchmarks/corpus.py``), flushed to Parquet, then
serves it with the service app in this process (the real HTTP handlers, frontend and
scheduler) four times over the same data directory: the in-process engine, then
``querier.execution: ray`` with 1, 2 and 4 actors (each actor's DuckDB with
``--threads`` threads, as the in-process engine has). Range queries are split by
``split_queries_by_interval`` (``--split``), so a query's runs can go to different
actors; a run never reads a file another run reads, so the corpus is flushed in files of
``--flush-mb``. With ``--by-files``, each Ray deployment runs a second time with queries
whole (no time split) and their files cut into one group per actor
(``querier.ray.file_groups``), partial aggregates merged. Reported: the median wall time
of each heavy shape (``--repeat`` runs) and its speed-up against the in-process engine
measured in the same run, the median CPU time of all the processes (this one and Ray's)
and its ratio to the in-process engine's, and the median wall time of small queries
(``--small`` runs), whose difference is the per-query overhead of Ray.

Ray binds beyond its node address, so the script runs itself in a network namespace with
only ``lo`` (``svc.distributed.netns``). The figures depend on the machine: on 2 cores,
two actors at most run at once.

    .venv/bin/python -m benchmarks.distributed --mb 300
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.query import START_NS, TENANT, build_store, metric_cases
from logql_to_sql import Grid
from svc.distributed.netns import namespace_of, namespace_processes, rerun_in_loopback_namespace
from tests.e2e.app import InProcessApp

HEAVY = {name: query for name, query, _ in metric_cases(Grid(start_ns=0, step_ns=1, steps=1))}
SMALL = {
    "instant count, one stream": 'count_over_time({app="api", env="prod", pod="api-0"}[1m])',
    "log query, limit 10": '{app="api", env="prod"} |= "request"',
}


def _deployments(
    workers: list[int], threads: int, split: str, by_files: bool
) -> list[tuple[str, dict[str, Any]]]:
    limits = {"split_queries_by_interval": split, "query_timeout": "10m"}
    common: dict[str, Any] = {"limits_config": limits, "querier": {"max_concurrent": 4}}
    out = [("in-process", common)]
    for count in workers:
        ray: dict[str, Any] = {
            "execution": "ray",
            "ray": {"workers": count, "threads_per_worker": threads, "file_groups": 1},
        }
        out.append((f"ray x{count}", {**common, "querier": {**common["querier"], **ray}}))
        if by_files:
            files = {**ray, "ray": {**ray["ray"], "file_groups": count}}
            whole = {**limits, "split_queries_by_interval": "0s"}
            querier = {**common["querier"], **files}
            out.append((f"ray x{count} by files", {"limits_config": whole, "querier": querier}))
    # Again at the end: the baseline is the better of the two (the machine's load drifts).
    out.append(("in-process, again", common))
    return out


def _median_seconds(app: InProcessApp, path: str, params: dict[str, str], runs: int) -> float:
    return _medians(app, path, params, runs)[0]


def _medians(
    app: InProcessApp, path: str, params: dict[str, str], runs: int
) -> tuple[float, float]:
    """Median wall time of the query, and median CPU time of every process of this
    network namespace meanwhile (this one and Ray's: actors, raylet, GCS)."""
    times, cpu = [], []
    namespace = namespace_of(os.getpid())
    with app.client(TENANT) as client:
        for _ in range(runs):
            used = _cpu_seconds(namespace)
            started = time.perf_counter()
            response = client.get(path, params=params, timeout=600)
            times.append(time.perf_counter() - started)
            cpu.append(_cpu_seconds(namespace) - used)
            if response.status_code != 200:
                raise RuntimeError(f"{response.status_code}: {response.text[:300]}")
    return statistics.median(times), statistics.median(cpu)


def _cpu_seconds(namespace: str | None) -> float:
    """User and system CPU time so far of the namespace's live processes."""
    pids = namespace_processes(namespace) if namespace else [os.getpid()]
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="svc-bench-ray-"))
    started = time.perf_counter()
    store, last = build_store(root / "data", args.mb, int(args.flush_mb * (1 << 20)))
    store.skip_indexer.wait_idle()  # no deployment pays for indexing the files
    files = len(store.catalog.files(TENANT, START_NS, last + 1))
    store.close(flush=True)
    print(f"corpus: {args.mb} MB in {time.perf_counter() - started:.0f} s", flush=True)
    whole = {"start": str(START_NS), "end": str(last + 1), "step": "300"}
    tail = {"start": str(last - 5 * 60 * 10**9), "end": str(last + 1)}
    report: dict[str, Any] = {
        "megabytes": args.mb,
        "hours": round((last - START_NS) / 3.6e12, 2),
        "files": files,
        "cpus": os.cpu_count(),
        "split": args.split,
        "flush_mb": args.flush_mb,
        "threads_per_worker": args.threads,
        "heavy_s": {},
        "heavy_cpu_s": {},
        "small_ms": {},
        "start_s": {},
        "load_before": os.getloadavg()[0],
    }
    for name, overrides in _deployments(args.workers, args.threads, args.split, args.by_files):
        started = time.perf_counter()
        app = InProcessApp(root, overrides).start(timeout=300)
        report["start_s"][name] = round(time.perf_counter() - started, 1)
        try:
            heavy, heavy_cpu = {}, {}
            for shape, query in HEAVY.items():
                params = {**whole, "query": query}
                _median_seconds(app, "/loki/api/v1/query_range", params, 1)  # warm
                wall, cpu = _medians(app, "/loki/api/v1/query_range", params, args.repeat)
                heavy[shape], heavy_cpu[shape] = round(wall, 3), round(cpu, 2)
                print(name, shape, heavy[shape], "s,", heavy_cpu[shape], "CPU-s", flush=True)
            small = {}
            for shape, query in SMALL.items():
                if shape.startswith("instant"):
                    path, params = "/loki/api/v1/query", {"query": query, "time": str(last)}
                else:
                    path, params = "/loki/api/v1/query_range", {**tail, "query": query}
                    params["limit"] = "10"
                _median_seconds(app, path, params, 3)
                small[shape] = round(1000 * _median_seconds(app, path, params, args.small), 2)
                print(name, shape, small[shape], "ms", flush=True)
            report["heavy_s"][name] = heavy
            report["heavy_cpu_s"][name] = heavy_cpu
            report["small_ms"][name] = small
        finally:
            app.stop()
    report["load_after"] = os.getloadavg()[0]
    base = _best(report["heavy_s"])
    report["speedup"] = {
        name: {shape: round(base[shape] / seconds, 2) for shape, seconds in shapes.items()}
        for name, shapes in report["heavy_s"].items()
        if name.startswith("ray")
    }
    cpu_base = _best(report["heavy_cpu_s"])
    report["cpu_ratio"] = {
        # (one clock tick at least: a query of a few milliseconds may be counted as none)
        name: {s: round(cpu / max(cpu_base[s], 0.01), 2) for s, cpu in shapes.items()}
        for name, shapes in report["heavy_cpu_s"].items()
        if name.startswith("ray")
    }
    small_base = _best(report["small_ms"])
    report["overhead_ms"] = {
        name: {shape: round(ms - small_base[shape], 2) for shape, ms in shapes.items()}
        for name, shapes in report["small_ms"].items()
        if name.startswith("ray")
    }
    return report


def _best(figures: dict[str, dict[str, float]]) -> dict[str, float]:
    """Per shape, the faster of the two in-process runs."""
    runs = [shapes for name, shapes in figures.items() if name.startswith("in-process")]
    return {shape: min(run[shape] for run in runs) for shape in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", type=int, default=30, help="runs of each small query")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--threads", type=int, default=2, help="DuckDB threads per actor")
    parser.add_argument("--split", default="15m", help="split_queries_by_interval")
    parser.add_argument(
        "--by-files", action="store_true", help="also each Ray deployment split by file groups"
    )
    parser.add_argument(
        "--flush-mb", type=float, default=16, help="lines per flushed file (a run per file)"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/distributed.json"))
    args = parser.parse_args()
    rerun_in_loopback_namespace([sys.executable, "-m", "benchmarks.distributed", *sys.argv[1:]])
    report = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

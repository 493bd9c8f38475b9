"""Whether sums of fractional values answer the same from run to run, and split or whole.

A DOUBLE sum's last bits depend on the order of its values; DuckDB's parallel
aggregation adds them in an order that changes from run to run. The compiler's sums are
exact (``logql_to_sql.sql.exact_sums``). This builds the fixed corpus flushed in 16 MB
files, runs each fractional-sum shape of ``benchmarks.query`` ``--runs`` times through
the engine (2 DuckDB threads, as the service runs) and, in the same process, its
hand-written plain DOUBLE SQL as many times, and counts the distinct answers of each; then
runs the engine's answer split in 2 and 4 groups of files and says whether each equals
the whole one.

    .venv/bin/python -m benchmarks.sum_determinism --mb 100 --runs 10
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import duckdb

from benchmarks.query import START_NS, TENANT, build_store, metric_cases
from logql_to_sql import Grid, parse
from svc.query.engine import QueryEngine
from svc.query.metric_queries import run_metric_query

SHAPES = ("unwrap bytes", "unwrap avg", "unwrap stddev, sum")
"""The shapes of ``benchmarks.query`` that add fractional values (bytes: as DOUBLE)."""


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:12]


def run(megabytes: float, runs: int, flush_bytes: int = 16 << 20) -> dict[str, Any]:
    """Distinct answers per shape, ours and hand-written, and ours split against whole
    (the corpus flushed to a file whenever ``flush_bytes`` of lines are in memory)."""
    report: dict[str, Any] = {"corpus_mb": megabytes, "runs": runs, "shapes": {}}
    with tempfile.TemporaryDirectory() as tmp:
        store, last = build_store(Path(tmp), megabytes, flush_bytes)
        store.skip_indexer.wait_idle()
        engine = QueryEngine(store, timeout_seconds=600)
        end = last + 1
        files = store.view(TENANT, START_NS, end).paths
        report["files"] = len(files)
        baseline = duckdb.connect(config={"threads": 2})
        step = 300 * 10**9
        grid = Grid(
            start_ns=START_NS // step * step, step_ns=step, steps=(end - START_NS) // step + 2
        )

        def ours(expr: Any) -> str:
            result, _ = run_metric_query(
                engine, TENANT, expr, grid, max_series=10**6, instant=False
            )
            return _digest([(s.labels, s.points) for s in result.series])

        for name, logql, handwritten in metric_cases(grid):
            if name not in SHAPES:
                continue
            expr = parse(logql)
            answers = [ours(expr) for _ in range(runs)]
            plain = [
                _digest(sorted(baseline.execute(handwritten, {"files": files}).fetchall()))
                for _ in range(runs)
            ]
            split = {}
            for groups in (2, 4):
                engine.file_groups = groups
                split[f"{groups}_groups_equal_whole"] = ours(expr) == answers[0]
            engine.file_groups = 1
            report["shapes"][name] = {
                "distinct_answers_ours": len(set(answers)),
                "distinct_answers_plain_double_sql": len(set(plain)),
                **split,
            }
            print(name, report["shapes"][name], flush=True)
        engine.close()
        store.close(flush=False)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(json.dumps(run(args.mb, args.runs), indent=2))


if __name__ == "__main__":
    main()

"""Ad hoc SQL latency per shape, as a ratio to the same SQL run directly by DuckDB on the
tenant's files, and the cost of encoding a 10,000-row JSON answer.

Builds a store from the fixed corpus (``benchmarks/corpus.py``, as ``benchmarks.query``),
flushed to Parquet, then times each statement through the SQL service (check, rewrite,
bind, worker process, locked database, every batch read back) against the equivalent
statement over ``read_parquet($files)`` on a DuckDB connection of this process with the
same threads, alternating the two, median of ``--repeat`` runs each. For reference, the
same direct statement on a connection that keeps Parquet footers (as the SQL workers do,
``parquet_metadata_cache``) is timed too: the ratio stays to the plain one.

    python -m benchmarks.sql --mb 300
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from benchmarks.query import START_NS, TENANT, build_store
from svc.api.sql import json_body
from svc.query.engine import QueryEngine, ScanStats
from svc.sql.service import SqlLimits, SqlRequest, SqlService

__all__ = ["CASES", "main", "run"]

CASES: list[tuple[str, str, str]] = [
    (
        "count",
        "SELECT count(*) FROM logs",
        "SELECT count(*) FROM read_parquet($files)",
    ),
    (
        "group by app, hour",
        "SELECT labels['app'] AS app, date_trunc('hour', ts) AS hour, count(*) FROM logs "
        "GROUP BY 1, 2",
        "SELECT labels['app'] AS app, date_trunc('hour', make_timestamp_ns(ts)) AS hour, "
        "count(*) FROM read_parquet($files) GROUP BY 1, 2",
    ),
    (
        "regexp_extract group by",
        "SELECT regexp_extract(line, 'status=(\\d+)', 1) AS status, count(*) FROM logs GROUP BY 1",
        "SELECT regexp_extract(line, 'status=(\\d+)', 1) AS status, count(*) "
        "FROM read_parquet($files) GROUP BY 1",
    ),
    (
        "logql() composition",
        "SELECT labels['level'] AS level, count(*) FROM logql('{format=\"json\"} | json') "
        "GROUP BY 1",
        "SELECT line->>'$.level' AS level, count(*) FROM read_parquet($files) "
        "WHERE labels['format'] = 'json' GROUP BY 1",
    ),
]
"""(name, SQL over the views, the same over the tenant's files)."""

_THREADS = 2


def _seconds(run: Any) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def _drain(service: SqlService, text: str, end: int) -> int:
    request = SqlRequest((TENANT,), text, START_NS, end, time.monotonic() + 600)
    result = service.open(request)
    rows = 0
    try:
        while (batch := result.next_batch()) is not None:
            rows += batch.num_rows
    finally:
        result.close()
    return rows


def _compare(
    service: SqlService,
    direct: duckdb.DuckDBPyConnection,
    cached_direct: duckdb.DuckDBPyConnection,
    files: list[str],
    case: tuple[str, str, str],
    end: int,
    repeat: int,
) -> dict[str, float]:
    _, ours_sql, direct_sql = case
    ours, theirs, cached = [], [], []
    _drain(service, ours_sql, end)  # the worker warm
    cached_direct.execute(direct_sql, {"files": files}).fetchall()  # its footers read
    for _ in range(repeat):
        ours.append(_seconds(lambda: _drain(service, ours_sql, end)))
        theirs.append(_seconds(lambda: direct.execute(direct_sql, {"files": files}).fetchall()))
        cached.append(
            _seconds(lambda: cached_direct.execute(direct_sql, {"files": files}).fetchall())
        )
    ours_s, direct_s = statistics.median(ours), statistics.median(theirs)
    return {
        "ours_s": round(ours_s, 4),
        "direct_s": round(direct_s, 4),
        "ratio": round(ours_s / direct_s, 2),
        "direct_footers_cached_s": round(statistics.median(cached), 4),
    }


def json_encoding(service: SqlService, end: int, repeat: int) -> dict[str, float]:
    """Milliseconds to encode 10,000 rows of ``logs`` (every column) as the JSON answer,
    against reading them from the worker."""
    request = SqlRequest(
        (TENANT,), "SELECT * FROM logs LIMIT 10000", START_NS, end, time.monotonic() + 600
    )
    reads, encodes = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        result = service.open(request)
        batches = []
        while (batch := result.next_batch()) is not None:
            batches.append(batch)
        result.close()
        reads.append(time.perf_counter() - started)
        started = time.perf_counter()
        json_body(result.columns, batches, 10_000, ScanStats(), {"start": "", "end": ""})
        encodes.append(time.perf_counter() - started)
    return {
        "read_ms": round(statistics.median(reads) * 1000, 1),
        "encode_ms": round(statistics.median(encodes) * 1000, 1),
    }


def run(megabytes: float, repeat: int) -> dict[str, Any]:
    """Every case and the JSON encoding over a corpus of ``megabytes``."""
    with tempfile.TemporaryDirectory() as tmp:
        store, last = build_store(Path(tmp) / "store", megabytes)
        # Not while the skipping index of the last flush is built in this process.
        store.skip_indexer.wait_idle()
        engine = QueryEngine(store, timeout_seconds=600)
        limits = SqlLimits(
            timeout_seconds=600, max_rows=10_000, memory_limit=2 << 30, threads=_THREADS
        )
        service = SqlService(engine, limits, Path(tmp) / "spill")
        end = last + 1
        files = store.view(TENANT, START_NS, end).paths
        direct = duckdb.connect(config={"threads": _THREADS})
        # For reference only: the ratio is to ``direct``, which reads the footers each time.
        cached_direct = duckdb.connect(config={"threads": _THREADS})
        cached_direct.execute("SET parquet_metadata_cache = true")
        report: dict[str, Any] = {"corpus_mb": megabytes, "files": len(files), "cases": {}}
        try:
            for case in CASES:
                report["cases"][case[0]] = _compare(
                    service, direct, cached_direct, files, case, end, repeat
                )
                print(case[0], report["cases"][case[0]], flush=True)
            report["json_10000_rows"] = json_encoding(service, end, repeat)
            print("json", report["json_10000_rows"], flush=True)
        finally:
            service.close()
            engine.close()
            store.close(flush=False)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/sql.json"))
    args = parser.parse_args()
    report = run(args.mb, args.repeat)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

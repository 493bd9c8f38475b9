"""Compaction on the fixed corpus: lake size against raw line bytes, CPU, query speed.

Builds the flushed lake as the service would (one file per 32 MiB head, zstd 3), copies
it, compacts the copy with the compactor's own jobs, then reports:

* the size of both lakes as a share of the raw line bytes;
* the CPU-seconds the compaction took (process time: every thread);
* each query of ``benchmarks/query.py``, plus queries over the last hour only, on the
  compacted lake as a ratio to the flushed one (median of ``--repeat`` runs, alternated).

``--encodings`` measures the writer settings one at a time instead (column sizes and
write CPU of the sorted corpus rows), the table behind the compacted layout.

    python -m benchmarks.compaction --mb 300
    python -m benchmarks.compaction --mb 300 --encodings
"""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from benchmarks.query import START_NS, TENANT, build_store, log_cases, metric_cases
from logql_to_sql import Direction, Grid, parse
from svc.compactor.compaction_pass import compaction_jobs
from svc.compactor.rewrite import Rewriter
from svc.compactor.writer import WriterSettings
from svc.config import IngesterConfig
from svc.query.engine import QueryEngine
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.query.metric_queries import MetricResult, run_metric_query
from svc.storage.store import Store, StoreSettings

HEAD_BYTES = IngesterConfig().head_max_bytes
"""The service's default ``ingester.head_max_bytes``: one flushed file per head."""
HOUR_NS = 3_600 * 10**9


def _open(root: Path) -> Store:
    store = Store(StoreSettings(root, 1 << 40, 1e9, 1e9, 256 << 20, 131072))
    store.open()
    return store


def _lake_bytes(store: Store) -> int:
    return sum(f.file_bytes for f in store.catalog.all_files())


def _line_bytes(store: Store) -> int:
    return sum(f.line_bytes for f in store.catalog.all_files())


def _index_bytes(store: Store) -> int:
    """Bytes of the skipping indexes of the listed files."""
    listed = store.catalog.skip_indexes(f.path for f in store.catalog.all_files())
    return sum(row.nbytes for row in listed.values())


def compact(store: Store, level: int, target_bytes: int, work: Path) -> dict[str, Any]:
    """Compact every partition of the store; returns CPU-seconds and file counts, and
    apart the CPU-seconds of indexing the new files (the indexer waits meanwhile)."""
    store.skip_indexer.wait_idle()
    store.skip_indexer.stop()
    engine = QueryEngine(store, timeout_seconds=3600)
    rewriter = Rewriter(store, engine, WriterSettings(level, 131072, target_bytes), work)
    files_before = len(store.catalog.all_files())
    cpu, wall = time.process_time(), time.perf_counter()
    jobs = compaction_jobs(
        store.catalog.all_files(), target_bytes=target_bytes, min_files=2, now_ns=time.time_ns()
    )
    for job in jobs:
        rewriter.run(job)
    store.remove_retired()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    rewriter.close()
    engine.close()
    index_cpu = time.process_time()
    store.skip_indexer.start()
    store.skip_indexer.wait_idle()
    return {
        "cpu_seconds": round(cpu, 1),
        "wall_seconds": round(wall, 1),
        "files_before": files_before,
        "files_after": len(store.catalog.all_files()),
        "index_cpu_seconds": round(time.process_time() - index_cpu, 1),
    }


def _median_ratio(
    flushed: Callable[[], object], compacted: Callable[[], object], repeat: int
) -> dict[str, float]:
    a, b = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        flushed()
        a.append(time.perf_counter() - started)
        started = time.perf_counter()
        compacted()
        b.append(time.perf_counter() - started)
    fa, fb = statistics.median(a), statistics.median(b)
    return {"flushed_s": round(fa, 4), "compacted_s": round(fb, 4), "ratio": round(fb / fa, 2)}


def compare_queries(flushed: Store, compacted: Store, end: int, repeat: int) -> dict[str, Any]:
    """Each query on both lakes: the compacted lake's time as a ratio to the flushed one."""
    engines = [QueryEngine(s, timeout_seconds=600) for s in (flushed, compacted)]
    report: dict[str, Any] = {}
    windows = {"": START_NS, "last hour: ": end - HOUR_NS}
    for prefix, start in windows.items():
        for name, logql, _ in log_cases(end):
            limit = 1000 if "1000" in name else 100
            request = LogQueryRequest(parse(logql), start, end, limit, Direction.BACKWARD)  # type: ignore[arg-type]
            runs: list[Callable[[], Any]] = [
                functools.partial(run_log_query, e, TENANT, request) for e in engines
            ]
            _same(runs)
            report[prefix + name] = _median_ratio(runs[0], runs[1], repeat)
            print(prefix + name, report[prefix + name], flush=True)
        step = 300 * 10**9
        grid = Grid(start_ns=start // step * step, step_ns=step, steps=(end - start) // step + 2)
        for name, logql, _ in metric_cases(grid):
            expr = parse(logql)
            runs = [
                functools.partial(
                    run_metric_query,
                    e,
                    TENANT,
                    expr,  # type: ignore[arg-type]
                    grid,
                    max_series=10**6,
                    instant=False,
                )
                for e in engines
            ]
            _same(runs, ties="topk" in logql)
            report[prefix + name] = _median_ratio(runs[0], runs[1], repeat)
            print(prefix + name, report[prefix + name], flush=True)
    for engine in engines:
        engine.close()
    return report


def _same(runs: Sequence[Callable[[], Any]], ties: bool = False) -> None:
    """Both lakes give the same answer (the compacted lake's reason to exist). With
    ``ties`` (topk) each step's values are compared: among series with equal values the
    ones kept follow the scan order, as in the reference, and the scan order is what
    compaction changes."""
    flushed, compacted = (_canonical(run()[0], ties) for run in runs)
    if flushed != compacted:
        raise AssertionError("the compacted lake answers differently")


def _canonical(result: Any, ties: bool) -> str:
    if not ties or not isinstance(result, MetricResult):
        return repr(result)
    steps: dict[int, list[float]] = {}
    for series in result.series:
        for step, value in series.points:
            steps.setdefault(step, []).append(value)
    return repr(sorted((step, sorted(values)) for step, values in steps.items()))


def run(megabytes: float, repeat: int, level: int, target_bytes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store, last = build_store(root / "flushed", megabytes, flush_bytes=HEAD_BYTES)
        store.skip_indexer.wait_idle()
        store.close(flush=False)
        shutil.copytree(root / "flushed", root / "compacted")
        flushed, compacted = _open(root / "flushed"), _open(root / "compacted")
        raw = _line_bytes(flushed)
        report: dict[str, Any] = {
            "corpus_mb": megabytes,
            "raw_line_bytes": raw,
            "flushed_bytes": _lake_bytes(flushed),
            "flushed_ratio": round(_lake_bytes(flushed) / raw, 4),
            "flushed_index_share": round(_index_bytes(flushed) / _lake_bytes(flushed), 4),
        }
        report["compaction"] = compact(compacted, level, target_bytes, root / "work")
        report["compacted_bytes"] = _lake_bytes(compacted)
        report["compacted_ratio"] = round(_lake_bytes(compacted) / raw, 4)
        report["compacted_index_share"] = round(_index_bytes(compacted) / _lake_bytes(compacted), 4)
        print(json.dumps(report), flush=True)
        report["queries"] = compare_queries(flushed, compacted, last + 1, repeat)
        flushed.close(flush=False)
        compacted.close(flush=False)
    return report


# writer settings, one at a time ------------------------------------------------------------


VARIANTS: dict[str, dict[str, Any]] = {
    "flush path (zstd 3, defaults)": {"compression": "zstd"},
    "zstd 9": {"compression": "zstd", "compression_level": 9},
    "zstd 9, ts delta": {
        "compression": "zstd",
        "compression_level": 9,
        "column_encoding": {"ts": "DELTA_BINARY_PACKED", "stream_id": "DELTA_BINARY_PACKED"},
    },
    "zstd 9, ts byte-stream-split": {
        "compression": "zstd",
        "compression_level": 9,
        "column_encoding": {"ts": "BYTE_STREAM_SPLIT", "stream_id": "BYTE_STREAM_SPLIT"},
    },
    "zstd 9, ts delta, line delta-length": {
        "compression": "zstd",
        "compression_level": 9,
        "column_encoding": {
            "ts": "DELTA_BINARY_PACKED",
            "stream_id": "DELTA_BINARY_PACKED",
            "line": "DELTA_LENGTH_BYTE_ARRAY",
        },
    },
    "zstd 9, ts delta, line delta (prefix)": {
        "compression": "zstd",
        "compression_level": 9,
        "column_encoding": {
            "ts": "DELTA_BINARY_PACKED",
            "stream_id": "DELTA_BINARY_PACKED",
            "line": "DELTA_BYTE_ARRAY",
        },
    },
    "zstd 9, ts delta, line delta-length, 8 MiB pages": {
        "compression": "zstd",
        "compression_level": 9,
        "data_page_size": 8 << 20,
        "column_encoding": {
            "ts": "DELTA_BINARY_PACKED",
            "stream_id": "DELTA_BINARY_PACKED",
            "line": "DELTA_LENGTH_BYTE_ARRAY",
        },
    },
    **{
        f"zstd {level}, ts delta, line delta-length, 8 MiB pages": {
            "compression": "zstd",
            "compression_level": level,
            "data_page_size": 8 << 20,
            "column_encoding": {
                "ts": "DELTA_BINARY_PACKED",
                "stream_id": "DELTA_BINARY_PACKED",
                "line": "DELTA_LENGTH_BYTE_ARRAY",
            },
        }
        for level in (12, 14, 15, 16)
    },
    "brotli 9, ts delta, line delta-length": {
        "compression": "brotli",
        "compression_level": 9,
        "column_encoding": {
            "ts": "DELTA_BINARY_PACKED",
            "stream_id": "DELTA_BINARY_PACKED",
            "line": "DELTA_LENGTH_BYTE_ARRAY",
        },
    },
}
_MAPS = [
    "labels.key_value.key",
    "labels.key_value.value",
    "metadata.key_value.key",
    "metadata.key_value.value",
]


def encodings(megabytes: float) -> dict[str, Any]:
    """Column bytes (share of the raw line bytes) and write CPU of each variant."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store, _ = build_store(root / "flushed", megabytes, flush_bytes=HEAD_BYTES)
        paths = [str(store.lake_root / f.path) for f in store.catalog.all_files()]
        store.close(flush=False)
        table = pa.concat_tables([pq.read_table(p) for p in paths])
        raw = pc.sum(pc.binary_length(table["line"])).as_py()
        order = [("stream_id", "ascending"), ("ts", "ascending")]
        table = table.take(pc.sort_indices(table, sort_keys=order))
        report: dict[str, Any] = {}
        for name, options in VARIANTS.items():
            kwargs = dict(options)
            if "column_encoding" in kwargs:
                kwargs["use_dictionary"] = _MAPS
            out = root / "variant.parquet"
            cpu = time.process_time()
            pq.write_table(table, out, row_group_size=131072, **kwargs)
            cpu = time.process_time() - cpu
            meta = pq.read_metadata(out)
            columns: dict[str, int] = {}
            for group in range(meta.num_row_groups):
                for i in range(meta.num_columns):
                    column = meta.row_group(group).column(i)
                    key = column.path_in_schema.split(".")[0]
                    columns[key] = columns.get(key, 0) + column.total_compressed_size
            report[name] = {
                "total": round(out.stat().st_size / raw, 4),
                **{k: round(v / raw, 4) for k, v in columns.items()},
                "write_cpu_s": round(cpu, 1),
            }
            print(name, report[name], flush=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--level", type=int, default=15)
    parser.add_argument("--target-mb", type=int, default=256)
    parser.add_argument("--encodings", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/compaction.json"))
    args = parser.parse_args()
    if args.encodings:
        report = encodings(args.mb)
    else:
        report = run(args.mb, args.repeat, args.level, args.target_mb << 20)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""Query latency per query shape, as a ratio to hand-written DuckDB SQL on the same files.

Builds a store from the fixed corpus (``benchmarks/corpus.py``) in-process, flushes it to
Parquet, then times each LogQL query through the real engine (compile + bind + execute +
result shaping) against a hand-written DuckDB query returning the same rows or numbers,
alternating them, median of ``--repeat`` runs each. Each query is timed twice: called on
the engine directly as one statement (``ours``), and through the query frontend as the
HTTP API runs it (``frontend``: split by ``split_queries_by_interval``, 1h by default,
the sub-queries on the scheduler's workers).

    .venv/bin/python -m benchmarks.query --mb 300
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from benchmarks.corpus import batches
from logql_to_sql import Direction, Grid, parse
from svc.config import Config, IngesterConfig
from svc.frontend.frontend import QueryFrontend
from svc.ingest.labels import label_key
from svc.model import PushStream
from svc.query.engine import QueryEngine
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.query.metric_queries import run_metric_query
from svc.scheduler.workers import Scheduler
from svc.storage.skip_index import needle
from svc.storage.skip_indexer import build_file, listed_indexes
from svc.storage.store import Store, StoreSettings

START_NS = 1_764_000_000_000_000_000
STEP_NS = 10_000_000  # one line every 10 ms
TENANT = "bench"


def build_store(
    root: Path,
    megabytes: float,
    flush_bytes: int = 128 << 20,
    *,
    skip_index: bool = True,
    flush_seconds: list[float] | None = None,
) -> tuple[Store, int]:
    """A store holding the corpus, flushed to Parquet whenever the head holds
    ``flush_bytes`` of lines; returns it and the last timestamp. The wall time of each
    flush is appended to ``flush_seconds``."""
    store = Store(StoreSettings(root, 1 << 40, 1e9, 1e9, 256 << 20, 131072, skip_index=skip_index))
    store.open()

    def flush() -> None:
        started = time.perf_counter()
        store.flush()
        if flush_seconds is not None:
            flush_seconds.append(time.perf_counter() - started)

    last = START_NS

    async def load() -> None:
        nonlocal last
        for batch in batches(int(megabytes * 1e6), start_ns=START_NS, step_ns=STEP_NS):
            streams = []
            for labels, entries in batch.streams:
                pairs = tuple(sorted(labels.items()))
                streams.append(
                    PushStream(
                        pairs,
                        label_key(pairs),
                        [e[0] for e in entries],
                        [e[1] for e in entries],
                        None,
                    )
                )
                last = max(last, entries[-1][0])
            await store.push(TENANT, streams)
            if store.head.line_bytes > flush_bytes:
                flush()

    asyncio.run(load())
    flush()
    return store, last


def flush_cost(megabytes: float, flush_bytes: int = 0) -> dict[str, Any]:
    """Storing the corpus with and without the skipping index (flushes of ``flush_bytes``,
    by default the service's head size), alternately twice: the flushes' wall seconds,
    and the process CPU until every file is indexed."""
    flush_bytes = flush_bytes or IngesterConfig().head_max_bytes
    seconds: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}
    for skip_index in (False, True, False, True):
        with tempfile.TemporaryDirectory() as tmp:
            flushes: list[float] = []
            before = _cpu()
            store, _ = build_store(
                Path(tmp), megabytes, flush_bytes, skip_index=skip_index, flush_seconds=flushes
            )
            store.skip_indexer.wait_idle()
            cpu[skip_index].append(_cpu() - before)
            seconds[skip_index].append(sum(flushes))
            store.close(flush=False)
    flush_on, flush_off = min(seconds[True]), min(seconds[False])
    cpu_on, cpu_off = min(cpu[True]), min(cpu[False])
    return {
        "flush_s_without_index": round(flush_off, 2),
        "flush_s_with_index": round(flush_on, 2),
        "flush_throughput_drop": round(1 - flush_off / flush_on, 3),
        "store_cpu_s_without_index": round(cpu_off, 2),
        "store_cpu_s_with_index": round(cpu_on, 2),
        "cpu_increase": round(cpu_on / cpu_off - 1, 3),
    }


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread, DuckDB's included
    return usage.ru_utime + usage.ru_stime


def _seconds(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of ``run()``."""
    started, cpu = time.perf_counter(), _cpu()
    run()
    return time.perf_counter() - started, _cpu() - cpu


def _compare(
    ours: Callable[[], object],
    frontend: Callable[[], object],
    handwritten: Callable[[], object],
    repeat: int,
) -> dict[str, float]:
    """Median times of the three, run alternately so a noisy neighbour slows all alike.
    The CPU ratio (process CPU seconds, all run in this process) moves less than the wall
    one on a machine shared with other work."""
    times: dict[str, list[tuple[float, float]]] = {"ours": [], "frontend": [], "handwritten": []}
    for _ in range(repeat):
        times["ours"].append(_seconds(ours))
        times["frontend"].append(_seconds(frontend))
        times["handwritten"].append(_seconds(handwritten))
    wall = {name: statistics.median(t[0] for t in values) for name, values in times.items()}
    cpu = {name: statistics.median(t[1] for t in values) for name, values in times.items()}
    return {
        "ours_s": round(wall["ours"], 4),
        "frontend_s": round(wall["frontend"], 4),
        "handwritten_s": round(wall["handwritten"], 4),
        "ratio": round(wall["ours"] / wall["handwritten"], 2),
        "frontend_ratio": round(wall["frontend"] / wall["handwritten"], 2),
        "frontend_vs_direct": round(wall["frontend"] / wall["ours"], 2),
        "ours_cpu_s": round(cpu["ours"], 4),
        "handwritten_cpu_s": round(cpu["handwritten"], 4),
        "cpu_ratio": round(cpu["ours"] / cpu["handwritten"], 2) if cpu["handwritten"] else 0.0,
    }


def _medians(
    runs: dict[str, Callable[[], object]], repeat: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU seconds of each run, the runs taken in turn ``repeat`` times."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            times[name].append(_seconds(run))
    wall = {name: statistics.median(t[0] for t in values) for name, values in times.items()}
    cpu = {name: statistics.median(t[1] for t in values) for name, values in times.items()}
    return wall, cpu


class _Frontend:
    """The query frontend of the default config over the benchmark's engine."""

    def __init__(self, engine: QueryEngine) -> None:
        config = Config()
        self.loop = asyncio.new_event_loop()
        self.scheduler = Scheduler(
            config.querier.max_concurrent,
            config.query_scheduler.max_outstanding_requests_per_tenant,
        )
        self.scheduler.start()
        self.frontend = QueryFrontend(
            config, engine, self.scheduler, lambda _: config.limits_config
        )

    def log(self, request: LogQueryRequest) -> object:
        async def run() -> object:
            async with self.frontend.request({}, None, (TENANT,)) as query:
                return await self.frontend.log_query(query, request)

        return self.loop.run_until_complete(run())

    def metric(self, expr: Any, grid: Grid) -> object:
        async def run() -> object:
            async with self.frontend.request({}, None, (TENANT,)) as query:
                return await self.frontend.metric_query(query, expr, grid, instant=False)

        return self.loop.run_until_complete(run())

    def close(self) -> None:
        self.scheduler.stop()
        self.loop.close()


def _paths(store: Store, end: int) -> list[str]:
    return store.view(TENANT, START_NS, end).paths


_JSON_FIELDS = "['$.level', '$.ts', '$.msg', '$.status', '$.latency_ms', '$.path', '$.trace_id']"
"""The fields of the corpus's JSON lines (``corpus._line``)."""


def log_cases(end: int) -> list[tuple[str, str, str]]:
    """(name, LogQL, equivalent hand-written SQL over read_parquet($files))."""
    order = "ORDER BY ts DESC"
    return [
        (
            "needle limit 100",
            '{env=~".+"} |= "user_id=4242 "',
            f"SELECT ts, labels, line FROM read_parquet($files) WHERE contains(line, "
            f"'user_id=4242 ') {order} LIMIT 100",
        ),
        (
            "needle limit 1000",
            '{env=~".+"} |= "user_id=4242 "',
            f"SELECT ts, labels, line FROM read_parquet($files) WHERE contains(line, "
            f"'user_id=4242 ') {order} LIMIT 1000",
        ),
        (
            "json + numeric filter",
            '{format="json"} | json | status >= 500',
            # Every field of the line, as the LogQL result carries them all as labels,
            # extracted from the 100 rows kept only.
            f"SELECT ts, labels, line, line->>{_JSON_FIELDS} FROM (SELECT ts, labels, line "
            "FROM read_parquet($files) WHERE labels['format'] = 'json' AND "
            f"TRY_CAST(line->>'$.status' AS DOUBLE) >= 500 {order} LIMIT 100)",
        ),
        (
            "logfmt + line_format",
            '{format="logfmt"} | logfmt | line_format "{{.method}} {{.path}}"',
            "SELECT ts, labels, regexp_extract(line, 'method=(\\S+)', 1) || ' ' || "
            "regexp_extract(line, 'path=(\\S+)', 1) FROM read_parquet($files) "
            f"WHERE labels['format'] = 'logfmt' {order} LIMIT 100",
        ),
        (
            "regexp parser",
            '{format="access"} | regexp "(?P<ip>\\\\S+) .*\\"(?P<method>\\\\w+) "',
            "SELECT ts, labels, regexp_extract(line, '(?P<ip>\\S+) .*\"(?P<method>\\w+) ', "
            "['ip', 'method']) FROM read_parquet($files) WHERE labels['format'] = 'access' "
            f"{order} LIMIT 100",
        ),
        (
            "pattern parser",
            '{format="access"} | pattern "<ip> - - [<_>] \\"<method> <path> <_>"',
            "SELECT ts, labels, regexp_extract(line, '^(?P<ip>.*?) - - \\[.*?\\] \"(?P<method>.*?) "
            "(?P<path>.*?) ', ['ip', 'method', 'path']) FROM read_parquet($files) "
            f"WHERE labels['format'] = 'access' {order} LIMIT 100",
        ),
    ]


ACCESS_PATTERN = '<ip> - - [<_>] "<method> <path> <_>" <status> <size> <_>'
"""The corpus's access lines (``corpus._line``) as a pattern."""


def metric_cases(grid: Grid) -> list[tuple[str, str, str]]:
    """(name, LogQL, equivalent hand-written SQL) on ``grid`` (5 minute steps)."""
    k = f"CAST(ceil(CAST(ts - {grid.start_ns} AS DOUBLE) / {grid.step_ns}) AS BIGINT)"
    return [
        (
            "label-only sum by count_over_time",
            'sum by (app) (count_over_time({env=~".+"}[5m]))',
            f"SELECT labels['app'] AS app, {k} AS k, count(*) FROM read_parquet($files) "
            "GROUP BY ALL",
        ),
        (
            "needle count",
            'sum(count_over_time({env=~".+"} |= "timeout" [5m]))',
            f"SELECT {k} AS k, count(*) FROM read_parquet($files) WHERE contains(line, 'timeout') "
            "GROUP BY ALL",
        ),
        (
            "json rate by extracted label",
            'sum by (level) (rate({format="json"} | json [5m]))',
            f"SELECT line->>'$.level' AS level, {k} AS k, count(*) / 300 FROM read_parquet($files) "
            "WHERE labels['format'] = 'json' GROUP BY ALL",
        ),
        (
            "unwrap quantile",
            'quantile_over_time(0.99, {format="json"} | json | unwrap latency_ms [5m]) by (app)',
            f"SELECT labels['app'] AS app, {k} AS k, quantile_cont(CAST(line->>'$.latency_ms' AS "
            "DOUBLE), 0.99) FROM read_parquet($files) WHERE labels['format'] = 'json' GROUP BY ALL",
        ),
        (
            "pattern parser, rate by status",
            f'sum by (status) (rate({{format="access"}} | pattern `{ACCESS_PATTERN}` [5m]))',
            # The status field as the pattern delimits it, one regex without captures
            # around it.
            'SELECT regexp_extract(line, \'^\\S* - - \\[[^\\]]*\\] "\\S* \\S* [^"]*" (\\S*) \', '
            f"1) AS status, {k} AS k, count(*) / 300 FROM read_parquet($files) "
            "WHERE labels['format'] = 'access' GROUP BY ALL",
        ),
        (
            "unwrap duration",
            'quantile_over_time(0.99, {format="logfmt"} | logfmt | unwrap duration(duration) [5m]) '
            "by (env)",
            # The corpus writes every duration in milliseconds.
            f"SELECT labels['env'] AS env, {k} AS k, quantile_cont(CAST(regexp_extract(line, "
            "'duration=([0-9.]+)ms', 1) AS DOUBLE) / 1e3, 0.99) FROM read_parquet($files) "
            "WHERE labels['format'] = 'logfmt' GROUP BY ALL",
        ),
        (
            "unwrap bytes",
            f'sum by (method) (sum_over_time({{format="access"}} | pattern `{ACCESS_PATTERN}` '
            "| unwrap bytes(size) [5m]))",
            "SELECT r.m AS method, k, sum(CAST(r.s AS DOUBLE)) FROM (SELECT regexp_extract(line, "
            "'^\\S* - - \\[[^\\]]*\\] \"(\\S*) \\S* [^\"]*\" \\S* (\\S*) ', ['m', 's']) AS r, "
            f"{k} AS k FROM read_parquet($files) WHERE labels['format'] = 'access') GROUP BY ALL",
        ),
        (
            "unwrap avg",
            'avg_over_time({format="logfmt"} | logfmt | unwrap duration(duration) [5m]) by (env)',
            f"SELECT labels['env'] AS env, {k} AS k, avg(CAST(regexp_extract(line, "
            "'duration=([0-9.]+)ms', 1) AS DOUBLE) / 1e3) FROM read_parquet($files) "
            "WHERE labels['format'] = 'logfmt' GROUP BY ALL",
        ),
        (
            "unwrap stddev, sum",
            'sum(stddev_over_time({format="logfmt"} | logfmt | unwrap duration(duration) [5m]) '
            "by (env))",
            f"SELECT k, sum(s) FROM (SELECT labels['env'] AS env, {k} AS k, "
            "stddev_pop(CAST(regexp_extract(line, 'duration=([0-9.]+)ms', 1) AS DOUBLE) / 1e3) "
            "AS s FROM read_parquet($files) WHERE labels['format'] = 'logfmt' GROUP BY ALL) "
            "GROUP BY k",
        ),
        (
            "topk",
            'topk(5, sum by (pod) (count_over_time({env=~".+"}[5m])))',
            "SELECT * FROM (SELECT pod, k, c, "
            "row_number() OVER (PARTITION BY k ORDER BY c DESC) rn "
            f"FROM (SELECT labels['pod'] AS pod, {k} AS k, count(*) c FROM read_parquet($files) "
            "GROUP BY ALL)) WHERE rn <= 5",
        ),
    ]


def needle_cases(rare: str, end: int) -> list[tuple[str, str, str]]:
    """The skipping index's shapes (name, LogQL, hand-written full scan): a needle held by
    one line (``rare``, a trace id of the corpus) and one held by most row groups."""
    hour = 3600 * 10**9
    k = f"CAST(ceil(CAST(ts - {START_NS // hour * hour} AS DOUBLE) / {hour}) AS BIGINT)"
    return [
        (
            "rare needle count",
            f'sum(count_over_time({{env=~".+"}} |= "{rare}" [1h]))',
            f"SELECT {k} AS k, count(*) FROM read_parquet($files) WHERE contains(line, "
            f"'{rare}') GROUP BY ALL",
        ),
        (
            "rare needle limit 1000",
            f'{{env=~".+"}} |= "{rare}"',
            f"SELECT ts, labels, line FROM read_parquet($files) WHERE contains(line, '{rare}') "
            "ORDER BY ts DESC LIMIT 1000",
        ),
        (
            "frequent needle count",
            'sum(count_over_time({env=~".+"} |= "timeout" [1h]))',
            f"SELECT {k} AS k, count(*) FROM read_parquet($files) WHERE contains(line, "
            "'timeout') GROUP BY ALL",
        ),
    ]


def _skip_index_run(
    engine: QueryEngine, store: Store, files: list[str], end: int, repeat: int
) -> dict[str, Any]:
    """The needle shapes with the index, without it (today's full scan) and by hand; the
    index's size, build cost and false-positive rate."""
    baseline_db = duckdb.connect(config={"threads": 2})
    json_lines = "FROM read_parquet($files) WHERE labels['format'] = 'json'"
    count = baseline_db.execute(f"SELECT count(*) {json_lines}", {"files": files}).fetchall()
    rare = baseline_db.execute(
        f"SELECT line->>'$.trace_id' {json_lines} ORDER BY ts LIMIT 1 "
        f"OFFSET {count[0][0] * 3 // 7}",
        {"files": files},
    ).fetchall()[0][0]
    hour = 3600 * 10**9
    grid = Grid(start_ns=START_NS // hour * hour, step_ns=hour, steps=(end - START_NS) // hour + 2)
    report: dict[str, Any] = {"rare": rare, "shapes": {}}
    for name, logql, handwritten in needle_cases(rare, end):
        expr = parse(logql)
        ours: Callable[[], object]
        if "count" in name:
            ours = functools.partial(
                run_metric_query,
                engine,
                TENANT,
                expr,  # type: ignore[arg-type]
                grid,
                max_series=10**6,
                instant=False,
            )
        else:
            request = LogQueryRequest(expr, START_NS, end, 1000, Direction.BACKWARD)  # type: ignore[arg-type]
            ours = functools.partial(run_log_query, engine, TENANT, request)

        def scan(run: Callable[[], object] = ours) -> object:
            engine.skip_index = False
            try:
                return run()
            finally:
                engine.skip_index = True

        def handmade(query: str = handwritten) -> object:
            return baseline_db.execute(query, {"files": files}).fetchall()

        wall, cpu = _medians({"indexed": ours, "scan": scan, "handwritten": handmade}, repeat)
        report["shapes"][name] = {
            "indexed_s": round(wall["indexed"], 4),
            "full_scan_s": round(wall["scan"], 4),
            "handwritten_s": round(wall["handwritten"], 4),
            "speedup": round(wall["scan"] / wall["indexed"], 2),
            "cpu_speedup": round(cpu["scan"] / cpu["indexed"], 2) if cpu["indexed"] else 0.0,
            "full_scan_vs_handwritten": round(wall["scan"] / wall["handwritten"], 2),
        }
        print(name, report["shapes"][name], flush=True)
    entries = store.view(TENANT, START_NS, end).files
    lake_bytes = sum(f.file_bytes for f in entries)
    index_bytes = sum(
        r.nbytes for r in store.catalog.skip_indexes(f.path for f in entries).values()
    )
    line_bytes = sum(f.line_bytes for f in entries)
    started, cpu = time.perf_counter(), _cpu()
    for f in entries:
        build_file(store.lake, f.path)
    build_wall, build_cpu = time.perf_counter() - started, _cpu() - cpu
    report.update(
        lake_bytes=lake_bytes,
        index_bytes=index_bytes,
        index_share=round(index_bytes / lake_bytes, 4),
        build_cpu_s=round(build_cpu, 2),
        build_wall_s=round(build_wall, 2),
        build_mb_per_cpu_s=round(line_bytes / 1e6 / build_cpu, 1),
        false_positives=_false_positives(store, entries),
    )
    return report


def _false_positives(store: Store, entries: list[Any]) -> dict[str, float]:
    """Share of row groups that may hold an absent needle, per kind of needle (none of
    these needles is in the corpus: its trace ids come from another seed)."""
    import random

    rng = random.Random(99)
    kinds = {
        "trace id (16 hex digits)": [f"{rng.getrandbits(64):016x}" for _ in range(300)],
        "trace id prefix (8 hex digits)": [f"{rng.getrandbits(32):08x}" for _ in range(300)],
        "user_id=N (N > 100000)": [f"user_id={rng.randint(100_001, 999_999)} " for _ in range(300)],
        "word (6 letters)": ["".join(rng.choices("bcdfghjklmnpqrstvwxz", k=6)) for _ in range(300)],
    }
    indexes = list(listed_indexes(store.lake, store.catalog, entries)[0].values())
    found = {}
    for kind, literals in kinds.items():
        hits = groups = 0
        for literal in literals:
            wanted = needle(literal)
            for index in indexes:
                assert index is not None
                groups += len(index.rows)
                hits += sum(index.may_hold(g, wanted) for g in range(len(index.rows)))
        found[kind] = round(hits / groups, 4)
    return found


def _chosen(name: str, only: list[str] | None) -> bool:
    """Whether shape ``name`` is measured: every shape without ``only``, else those whose
    name contains one of its texts."""
    return only is None or any(part in name for part in only)


def run(
    megabytes: float, repeat: int, only_needles: bool = False, only: list[str] | None = None
) -> dict[str, Any]:
    """Every shape (or those ``only`` names, without the skipping index's figures) on a
    corpus of ``megabytes``."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        store, last = build_store(Path(tmp), megabytes)
        store.skip_indexer.wait_idle()
        print(f"corpus stored and indexed in {time.perf_counter() - started:.0f} s", flush=True)
        engine = QueryEngine(store, timeout_seconds=600)
        end = last + 1
        files = _paths(store, end)
        baseline_db = duckdb.connect(config={"threads": 2})
        report: dict[str, Any] = {
            "corpus_mb": megabytes,
            "files": len(files),
            "log": {},
            "metric": {},
        }
        if only is None:
            report["skip_index"] = _skip_index_run(engine, store, files, end, repeat)
        if only_needles:
            engine.close()
            store.close(flush=False)
            return report
        frontend = _Frontend(engine)
        for name, logql, handwritten in log_cases(end):
            if not _chosen(name, only):
                continue
            request = LogQueryRequest(parse(logql), START_NS, end, 100, Direction.BACKWARD)  # type: ignore[arg-type]
            if "1000" in name:
                request = LogQueryRequest(request.query, START_NS, end, 1000, Direction.BACKWARD)
            report["log"][name] = _compare(
                lambda r=request: run_log_query(engine, TENANT, r),
                lambda r=request: frontend.log(r),
                lambda q=handwritten: baseline_db.execute(q, {"files": files}).fetchall(),
                repeat,
            )
            print(name, report["log"][name], flush=True)
        step = 300 * 10**9
        grid = Grid(
            start_ns=START_NS // step * step, step_ns=step, steps=(end - START_NS) // step + 2
        )
        for name, logql, handwritten in metric_cases(grid):
            if not _chosen(name, only):
                continue
            expr = parse(logql)
            report["metric"][name] = _compare(
                lambda e=expr: run_metric_query(
                    engine,
                    TENANT,
                    e,
                    grid,
                    max_series=10**6,  # type: ignore[arg-type]
                    instant=False,
                ),
                lambda e=expr: frontend.metric(e, grid),
                lambda q=handwritten: baseline_db.execute(q, {"files": files}).fetchall(),
                repeat,
            )
            print(name, report["metric"][name], flush=True)
        baseline_db.register("stream_labels", store.view(TENANT, START_NS, end).streams)
        hour = 3600 * 10**9
        hourly = Grid(
            start_ns=START_NS // hour * hour, step_ns=hour, steps=(end - START_NS) // hour + 2
        )
        k = f"CAST(ceil(CAST(ts - {hourly.start_ns} AS DOUBLE) / {hourly.step_ns}) AS BIGINT)"
        name = "label-only sum by count_over_time, 1h steps"
        hourly_expr = parse('sum by (app) (count_over_time({env=~".+"}[1h]))')
        if _chosen(name, only):
            report["metric"][name] = _compare(
                lambda: run_metric_query(
                    engine,
                    TENANT,
                    hourly_expr,
                    hourly,
                    max_series=10**6,
                    instant=False,
                ),
                lambda: frontend.metric(hourly_expr, hourly),
                # What a label-only aggregation needs: timestamps and stream ids, the stream
                # labels joined per stream (the store's stream index, as the engine has it).
                lambda: baseline_db.execute(
                    f"SELECT s.labels['app'] AS app, k, sum(c) FROM (SELECT stream_id, {k} AS k, "
                    "count(*) AS c FROM read_parquet($files) GROUP BY ALL) t "
                    "JOIN stream_labels s USING (stream_id) GROUP BY ALL",
                    {"files": files},
                ).fetchall(),
                repeat,
            )
            print(name, report["metric"][name], flush=True)
        report["label_only_plan_reads_line"] = _plan_reads_line(engine, store, grid)
        frontend.close()
        engine.close()
        store.close(flush=False)
    return report


def _plan_reads_line(engine: QueryEngine, store: Store, grid: Grid) -> bool:
    """Whether the label-only aggregation's physical plan projects the ``line`` column."""
    from logql_to_sql import compile_metric_query

    plan = compile_metric_query(
        parse('sum by (app) (count_over_time({env=~".+"}[5m]))'),  # type: ignore[arg-type]
        grid=grid,
    )
    view = store.view(TENANT, grid.start_ns - 300 * 10**9, grid.end_ns + 1)
    cursor = engine._db.cursor()
    explained = cursor.execute("EXPLAIN " + engine.bound_sql(plan.select, view, cursor)).fetchall()
    text = "\n".join(str(row[1]) for row in explained)
    Path("benchmarks/out").mkdir(parents=True, exist_ok=True)
    Path("benchmarks/out/label_only_plan.txt").write_text(text)
    scans = text.split("READ_PARQUET")[1:]
    projected = [part.split("Projections:", 1)[1].split("\n", 1)[0] for part in scans]
    return any("line" in [c.strip(" ,│") for c in p.split()] for p in projected)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/query.json"))
    parser.add_argument(
        "--needles", action="store_true", help="only the skipping index's shapes and figures"
    )
    parser.add_argument(
        "--only",
        action="append",
        help="only the shapes whose name contains this text (repeatable; no skipping-index "
        "figures), e.g. --only unwrap --only 'json +'",
    )
    parser.add_argument(
        "--flush-mb",
        type=float,
        default=0,
        help="also store this many MB with and without the skipping index (flush cost)",
    )
    args = parser.parse_args()
    report = run(args.mb, args.repeat, args.needles, args.only)
    if args.flush_mb:
        report["skip_index_flush_cost"] = flush_cost(args.flush_mb)
        print(report["skip_index_flush_cost"], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

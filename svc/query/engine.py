"""Runs compiled LogQL on DuckDB over a tenant's Parquet files and in-memory head.

The compiler's free relations ``logs`` and ``streams`` are bound here: ``logs`` becomes
``read_parquet([<catalog file list>]) UNION ALL <head tables>`` (never a glob built from a
tenant ID), ``streams`` the tenant's stream index as an Arrow table.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import re
import shutil
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from gocompat.durations import format_humanize_bytes
from logql_to_sql import DIALECT, QUERY_VARIABLE, LogQueryPlan, ast
from schemas.log_rows import HEAD_SCHEMA
from svc.errors import BadRequestError, GatewayTimeoutError
from svc.query.alarms import after
from svc.query.context import TIMEOUT_MESSAGE, QueryContext, registered
from svc.query.deletes import visible_rows_sql
from svc.query.file_groups import with_files
from svc.query.file_metadata import NO_METADATA, file_has_metadata, table_has_metadata
from svc.query.scan_pieces import WINDOW_ROWS, next_group, pieces
from svc.query.scope import RequestScope, current_scope, using_scope
from svc.query.skipping import narrowed_to_needles
from svc.query.streamed import streamed
from svc.query.tenants import MultiView, tenants_view
from svc.query.udfs import register_udfs
from svc.scheduler.favored import step_aside_if_lowered
from svc.scheduler.priority import lowering_threads_started
from svc.storage.catalog import FileEntry
from svc.storage.store import Store, StoreView

__all__ = [
    "AnyView",
    "QueryEngine",
    "Registrar",
    "ScanStats",
    "add_file_scan",
    "add_head_scan",
    "narrowed",
    "run_statement",
]

AnyView = StoreView | MultiView


class Registrar(Protocol):
    """Where :meth:`QueryEngine.bound_sql` registers the Arrow tables a query reads: a
    DuckDB connection, or a collector that ships them to another process."""

    def register(self, name: str, table: Any, /) -> object:
        """Make ``table`` readable as ``name``."""
        ...


_P = ParamSpec("_P")
_RESULT_BATCH_ROWS = 65_536
_T = TypeVar("_T")

warnings.filterwarnings(
    "ignore", message="Arrow output on a DB-API result makes an extra copy", category=UserWarning
)


def too_much_memory(limit: int) -> BadRequestError:
    """The answer for a query that does not fit in the engine's memory (the reference's
    "query too large" message; 400 as its size limits)."""
    size = format_humanize_bytes(limit)
    return BadRequestError(
        f"un-shardable query too large to execute on a single querier: (query: more than "
        f"{size} of memory, limit: {size}); consider adding more specific stream selectors "
        "or reduce the time range of the query"
    )


_UNREADABLE_RETRIES = 3
_UNREADABLE_WARNING = (
    "some stored data could not be read and was set aside; the result may be incomplete"
)
# What DuckDB's Parquet reader raises on a damaged or missing file: a bare ``Error``
# (thrift), an ``IOException``, or an ``InvalidInputException`` saying so. A query's own
# runtime errors (conversions, ranges, ...) are never blamed on a file.
_FILE_TROUBLE = re.compile(
    r"(?i)parquet|magic bytes|corrupt|decompress|failed to read file|too small|zstd|snappy"
)


def _blames_a_file(exc: duckdb.Error) -> bool:
    if type(exc) in (duckdb.Error, duckdb.IOException):
        return True
    return isinstance(exc, duckdb.InvalidInputException) and bool(_FILE_TROUBLE.search(str(exc)))


@dataclass
class ScanStats:
    """What a query touched, for the stats object of the response."""

    files: int = 0
    file_rows: int = 0
    file_line_bytes: int = 0
    file_bytes: int = 0
    head_rows: int = 0
    head_line_bytes: int = 0
    exec_seconds: float = 0.0
    queue_seconds: float = 0.0
    returned: int = 0
    shards: int = 0
    """Statements the query's files were split into and run apart (``file_groups``)."""
    extra: dict[str, int] = field(default_factory=dict)
    margin_exhausted: bool = False
    """A limited log query read all the entries its plan allows (``LogQueryPlan.margin``)
    and still found fewer distinct ones than the limit: a larger margin may find more."""
    warnings: list[str] = field(default_factory=list)
    """Shown to the client in the response's ``warnings`` (files left out as unreadable)."""


class QueryEngine:
    """Executes plans for one tenant at a time on a shared in-process DuckDB."""

    def __init__(
        self,
        store: Store,
        *,
        timeout_seconds: float,
        scan_group_rows: int = 4_000_000,
        window_rows: int = WINDOW_ROWS,
        threads: int = 2,
        memory_limit: int | None = None,
        spill_dir: Path | None = None,
        template_line_chars: int = 4 * 1024 * 1024,
        template_query_chars: int = 1024 * 1024 * 1024,
        max_concurrent: int = 4,
    ) -> None:
        self.store = store
        self.scan_group_rows = scan_group_rows
        self.window_rows = window_rows
        self.timeout_seconds = timeout_seconds
        self.template_line_chars = template_line_chars
        self.template_query_chars = template_query_chars
        config: dict[str, Any] = {"threads": threads}
        self.memory_limit = memory_limit
        if memory_limit is not None:
            config["memory_limit"] = f"{memory_limit}B"
        if spill_dir is not None:
            # Only the engine writes there; what a killed process left is garbage.
            shutil.rmtree(spill_dir, ignore_errors=True)
            spill_dir.mkdir(parents=True, exist_ok=True)
            config["temp_directory"] = str(spill_dir)
        # DuckDB's worker threads run at the low priority: svc/scheduler/priority.py.
        self._db = lowering_threads_started(lambda: duckdb.connect(config=config))
        # Queries get their own threads: heavy ones then queue here, never in front of the
        # default executor that /metrics, /flush and the WAL's helpers use.
        self._pool = ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix="query")
        register_udfs(self._db)
        store.lake.register(self._db)
        self._lock = threading.Lock()
        self.skip_index = True
        """Narrow views with the lake's skipping index (off: every listed file is read)."""
        self.file_groups = 1
        """Statements a query's files are split into when the engine can run them at once:
        a metric query's partial aggregates, a limited log query's groups per round
        (1: none; a distributed engine sets its number of workers)."""

    def start(self) -> None:
        """Bring up what runs statements: nothing to do in process (a distributed engine
        starts its workers here)."""

    async def call(
        self, fn: Callable[Concatenate[QueryEngine, _P], _T], *args: _P.args, **kwargs: _P.kwargs
    ) -> _T:
        """``fn(self, *args)`` on one of the engine's own threads, off the event loop.

        Every statement ``fn`` executes shares one deadline, ``query_timeout`` from now
        (time spent waiting for a thread counts, as in the reference's queue). The HTTP
        API runs its queries through the scheduler instead (``svc/scheduler``).
        """
        context = using_scope(RequestScope(self.timeout_seconds))
        run = functools.partial(context.run, fn, self, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, run)

    def view(
        self, tenants: tuple[str, ...], start_ns: int, end_ns: int, expr: ast.Expr | None = None
    ) -> AnyView:
        """What a query of these tenants reads (their union when there are several).

        Within a request, the range starts no earlier than the request's floor
        (``max_query_lookback``), and a view the request pinned (its one catalog listing
        and head snapshot) is narrowed to the range instead of listing again. With
        ``expr``, only the files and row groups that may hold its lines are kept (the
        skipping index, ``skipping.py``).
        """
        scope = current_scope()
        view: AnyView | None = None
        if scope is not None:
            if scope.floor_ns is not None:
                start_ns = max(start_ns, scope.floor_ns)
            pinned = scope.pinned.get(tenants)
            if pinned is not None and pinned[0] <= start_ns and end_ns <= pinned[1]:
                view = narrowed(pinned[2], start_ns, end_ns)
        if view is None:
            view = self.listed_view(tenants, start_ns, end_ns)
        return view if expr is None else self.narrowed_to_needles(view, (expr,))

    def narrowed_to_needles(self, view: AnyView, exprs: tuple[ast.Expr, ...]) -> AnyView:
        """``view`` without the files and row groups the skipping index says hold no
        entry of any of ``exprs`` (the queries that read it; ``skipping.py``)."""
        if not self.skip_index:
            return view
        return narrowed_to_needles(view, exprs, self.store.skip_indexer)

    def listed_view(self, tenants: tuple[str, ...], start_ns: int, end_ns: int) -> AnyView:
        """A fresh view from the catalog and the head."""
        if len(tenants) == 1:
            return self.store.view(tenants[0], start_ns, end_ns)
        return tenants_view(self.store, tenants, start_ns, end_ns)

    def run_log_query(
        self,
        tenants: str | tuple[str, ...],
        plan: LogQueryPlan,
        start_ns: int,
        end_ns: int,
        text: str | None = None,
        expr: ast.Expr | None = None,
    ) -> tuple[pa.Table, AnyView, ScanStats]:
        """Rows of a log query, with its view and what it scanned.

        With a limit, files are read newest first (oldest first going forward) in small
        groups, compacted files in time windows (``scan_pieces``), ``file_groups`` groups at
        a time; once ``limit`` rows are found, pieces that cannot hold a row beyond the
        current cut-off are never read.
        """
        view = self.view(
            (tenants,) if isinstance(tenants, str) else tenants, start_ns, end_ns, expr
        )
        stats = ScanStats()
        if plan.limit is None:
            _add_scan(stats, view, view.files, view.head_tables, start_ns, end_ns)
            table = self._limited_rows(plan, self.execute(text or plan.select, view, stats), stats)
            stats.returned = table.num_rows
            return table, view, stats
        remaining = pieces(view.files, plan.backward, self.window_rows)
        found: pa.Table | None = None
        heads = True  # the in-memory tables are read with the first group
        while True:
            # Up to ``file_groups`` groups at once (a distributed engine runs them side by
            # side); merged in reading order, the top rows are those of one by one. The
            # groups of a view of several tenants hold files of any of them.
            jobs: list[tuple[exp.Select | str, AnyView]] = []
            while not jobs or (remaining and len(jobs) < self.file_groups):
                group, remaining = next_group(remaining, self.scan_group_rows)
                files = [piece.entry for piece in group]
                window = group[0].window if group else None  # no files: the head alone
                part = with_files(view, files, heads=heads, window=window)
                _add_scan(
                    stats,
                    view,
                    [piece.entry for piece in group if piece.first],
                    view.head_tables if heads else [],
                    start_ns,
                    end_ns,
                )
                jobs.append((text or plan.select, part))
                heads = False
            if len(jobs) > 1:
                stats.shards += len(jobs)
            for result in self.execute_all(jobs, stats):
                rows = self._limited_rows(plan, result, stats)
                found = rows if found is None else _top(found, rows, plan.limit, plan.backward)
            assert found is not None
            if found.num_rows >= plan.limit:
                cut = found["ts"][found.num_rows - 1].as_py()
                remaining = [
                    p for p in remaining if (p.max_ts >= cut if plan.backward else p.min_ts <= cut)
                ]
            if not remaining:
                break
        stats.returned = found.num_rows
        return found, view, stats

    @staticmethod
    def _limited_rows(plan: LogQueryPlan, rows: pa.Table, stats: ScanStats) -> pa.Table:
        """``rows`` without the ``candidates`` columns, noting in ``stats`` whether the
        plan's margin was too small: the duplicates used it up, or the read stopped inside
        a run of entries of one time that the answer reaches (``LogQueryPlan.margin``)."""
        if "candidates" not in rows.column_names:
            return rows
        if plan.limit is not None and rows.num_rows:
            read = pc.max(rows["candidates"]).as_py()
            if read is not None and read >= plan.margin * plan.limit:
                last = rows["ts"][rows.num_rows - 1].as_py()
                stats.margin_exhausted |= (
                    rows.num_rows < plan.limit or last == rows["candidates_end"][0].as_py()
                )
        return rows.drop_columns(["candidates", "candidates_end"])

    def execute(
        self,
        select: exp.Select | str,
        view: AnyView,
        stats: ScanStats,
        tables: dict[str, pa.Table] | None = None,
    ) -> pa.Table:
        """Bind ``logs``/``streams`` to the view, run, return the Arrow result.

        ``select`` is a compiled tree or its rendered text (a cached plan); ``tables``
        are more relations it reads, by name (merged partial aggregates). When a file
        of the view turns out unreadable, the store quarantines it and the query runs
        again without it, with a warning in ``stats``.
        """
        for _ in range(_UNREADABLE_RETRIES):
            try:
                return self._execute(select, view, stats, tables)
            except duckdb.Error as exc:
                readable = self.set_aside_unreadable(view, exc, stats)
                if readable is None:
                    raise
                view = readable
        return self._execute(select, view, stats, tables)

    def execute_all(
        self, jobs: list[tuple[exp.Select | str, AnyView]], stats: ScanStats
    ) -> list[pa.Table]:
        """The results of several statements, in order: one after the other here (a
        distributed engine runs them at once)."""
        return [self.execute(select, view, stats) for select, view in jobs]

    def set_aside_unreadable(
        self, view: AnyView, exc: duckdb.Error, stats: ScanStats
    ) -> AnyView | None:
        """``view`` without the files a DuckDB error is due to, now quarantined, with the
        warning in ``stats`` (None when no file is to blame): for callers that run
        statements of their own."""
        dropped = self._unreadable(view, exc)
        if not dropped:
            return None
        if _UNREADABLE_WARNING not in stats.warnings:
            stats.warnings.append(_UNREADABLE_WARNING)
        return _without_files(view, dropped)

    def _unreadable(self, view: AnyView, exc: duckdb.Error) -> set[str]:
        """The view's files a DuckDB error is due to, now quarantined (empty: none)."""
        if not view.files or not _blames_a_file(exc):
            return set()
        return set(self.store.quarantine_unreadable(view.files, str(exc)))

    def _execute(
        self,
        select: exp.Select | str,
        view: AnyView,
        stats: ScanStats,
        tables: dict[str, pa.Table] | None = None,
    ) -> pa.Table:
        step_aside_if_lowered()  # svc/scheduler/favored.py
        started = time.perf_counter()
        scope = current_scope()
        remaining = self.timeout_seconds
        if scope is not None:
            scope.check()
            remaining = scope.remaining()
        if remaining <= 0:
            raise GatewayTimeoutError(TIMEOUT_MESSAGE)
        result = self._statement(select, view, scope, remaining, tables or {})
        stats.exec_seconds += time.perf_counter() - started
        step_aside_if_lowered()  # before the caller turns the result into Python objects
        return result

    def _statement(
        self,
        select: exp.Select | str,
        view: AnyView,
        scope: RequestScope | None,
        remaining: float,
        tables: dict[str, pa.Table],
    ) -> pa.Table:
        """Run one statement over ``view`` (and ``tables``) with ``remaining`` seconds
        left, cancelled with ``scope``: here on the shared connection (a distributed
        engine sends it away)."""
        cursor = self._db.cursor()
        try:
            with (
                registered(
                    remaining,
                    line_chars=self.template_line_chars,
                    query_chars=self.template_query_chars,
                ) as context,
                scope.running(cursor, context) if scope is not None else nullcontext(),
            ):
                sql = self.bound_sql(select, view, cursor, tables)
                return run_statement(cursor, sql, context, remaining, self.memory_limit)
        finally:
            cursor.close()

    def bound_sql(
        self,
        select: exp.Select | str,
        view: AnyView,
        cursor: Registrar,
        tables: dict[str, pa.Table] | None = None,
    ) -> str:
        """The query's text with ``logs`` and ``streams`` defined as leading common table
        expressions over the view (inlined by DuckDB, as subqueries would be), and each
        of ``tables`` under its name (compiler-made identifiers)."""
        text = select if isinstance(select, str) else select.sql(dialect=DIALECT)
        logs, streams_name, filtered = self._relations(view, cursor)
        streams = f"streams AS NOT MATERIALIZED (SELECT * FROM {streams_name})"
        for name, table in (tables or {}).items():
            streams += (
                f", {name} AS NOT MATERIALIZED (SELECT * FROM {self._register(cursor, table)})"
            )
        if filtered:  # delete filters read ``streams`` and their own relations: first
            relations = ", ".join([streams, *filtered, f"logs AS NOT MATERIALIZED ({logs})"])
        else:
            relations = f"logs AS NOT MATERIALIZED ({logs}), {streams}"
        if text[:5].upper() == "WITH ":  # the query's own expressions join the list
            return f"WITH {relations}, {text[5:]}"
        return f"WITH {relations} {text}"

    def _relations(self, view: AnyView, cursor: Registrar) -> tuple[str, str, list[str]]:
        """The view's rows as one query, the registered name of its stream table, and the
        relations the view's delete filters need (defined before ``logs``)."""
        parts: list[str] = []
        filtered: list[str] = []
        multi = isinstance(view, MultiView)
        sources = view.parts if isinstance(view, MultiView) else [(view, 0)]
        for number, (source, mask) in enumerate(sources):
            if not source.deletes:
                parts += self._sources(source, mask, cursor)
                continue
            raw = self._sources(source, 0, cursor)
            if not raw:
                continue
            streams = "streams"
            if multi:  # the filters match the tenant's own streams, before the id mask
                streams = f"streams_p{number}"
                name = self._register(cursor, source.streams)
                filtered.append(f"{streams} AS NOT MATERIALIZED (SELECT * FROM {name})")
            filtered.append(f"raw_p{number} AS NOT MATERIALIZED ({' UNION ALL '.join(raw)})")
            visible = visible_rows_sql(f"raw_p{number}", source.deletes, streams=streams)
            if mask:
                visible = (
                    f"SELECT ts, xor(stream_id, {int(mask)}) AS stream_id, line, metadata "
                    f"FROM ({visible})"
                )
            parts.append(visible)
        if not parts:
            parts = self._sources(StoreView(self.store.lake, [], [], view.streams), 0, cursor)
        return " UNION ALL ".join(parts), self._register(cursor, view.streams), filtered

    def _sources(self, view: StoreView, mask: int, cursor: Registrar) -> list[str]:
        """One SELECT per source of the view: its files, then each in-memory table.

        Written as text: the only values are the catalog's file paths (quoted as SQL
        strings) and names this engine registered.
        """
        stream_id = f"xor(stream_id, {int(mask)}) AS stream_id" if mask else "stream_id"
        columns = f"ts, {stream_id}, line, metadata"
        bare = f"ts, {stream_id}, line, {NO_METADATA}"
        parts = []
        window = ""
        if view.window is not None:  # row-group statistics skip the rest of the file
            window = f"ts BETWEEN {int(view.window[0])} AND {int(view.window[1])}"
        # Files without any metadata are read apart: their metadata column is not read.
        # A file narrowed to some row groups is read alone, through its row numbers
        # (DuckDB skips the row groups outside them unread).
        paths: dict[bool, list[str]] = {True: [], False: []}
        for entry in view.files:
            path = view.lake.url(entry.path)
            has_metadata = file_has_metadata(path)
            ranges = view.row_ranges.get(entry.path)
            if ranges is None:
                paths[has_metadata].append(path)
                continue
            rows = " OR ".join(
                f"file_row_number BETWEEN {int(first)} AND {int(first) + int(count) - 1}"
                for first, count in ranges
            )
            chosen = columns if has_metadata else bare
            where = " WHERE " + " AND ".join(c for c in (window, f"({rows})") if c)
            parts.append(f"SELECT {chosen} FROM read_parquet([{_sql_string(path)}]){where}")
        for has_metadata, group in paths.items():
            if group:
                files = ", ".join(_sql_string(path) for path in group)
                chosen = columns if has_metadata else bare
                where = f" WHERE {window}" if window else ""
                parts.append(f"SELECT {chosen} FROM read_parquet([{files}]){where}")
        for table in view.head_tables:
            chosen = columns if table_has_metadata(table) else bare
            parts.append(f"SELECT {chosen} FROM {self._register(cursor, table)}")
        if not parts and not mask:
            name = self._register(cursor, HEAD_SCHEMA.empty_table())
            parts.append(f"SELECT {columns} FROM {name}")
        return parts

    def _register(self, cursor: Registrar, table: pa.Table) -> str:
        # Named after the object: a registrar holds what it registered, so no other
        # object has its id meanwhile, and the same table (the stream index's, while no
        # stream is added) gets the same name from query to query, which lets an SQL
        # worker keep it registered (svc.sql.workers).
        name = f"arrow_{id(table):x}"
        cursor.register(name, table)
        return name

    def close(self) -> None:
        """Stop the query threads and close the database connection."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._db.close()


def run_statement(
    cursor: duckdb.DuckDBPyConnection,
    sql: str,
    context: QueryContext,
    timeout_seconds: float,
    memory_limit: int | None,
) -> pa.Table:
    """Execute ``sql`` on ``cursor`` under the query's deadline; engine failures become the
    service's answers (in this process, or in a distributed worker's).

    The timer interrupts DuckDB's own work at the deadline; our Python functions stop
    themselves (they check the context), and the reason they recorded wins.
    """
    if QUERY_VARIABLE in sql:  # only the engine's functions read it
        cursor.execute(f"SET VARIABLE {QUERY_VARIABLE} = ?", [context.id])
    deadline = time.monotonic() + timeout_seconds
    timer = after(timeout_seconds, cursor.interrupt)
    try:
        # Streamed, bound once (``streamed``). The result is read in batches so that
        # one outside DuckDB's memory limit (say, millions of series before the series
        # limit is checked) stops at the result budget.
        _, reader = streamed(cursor, sql, _RESULT_BATCH_ROWS)
        if context.reason is not None or time.monotonic() >= deadline:
            # DuckDB clears an interrupt when a statement begins: one that came while
            # this statement was being bound or set up is repeated now that it runs.
            cursor.interrupt()
        batches, size = [], 0
        for batch in reader:
            size += batch.nbytes
            if memory_limit and size > memory_limit // 4:
                raise too_much_memory(memory_limit)
            batches.append(batch)
        return pa.Table.from_batches(batches, schema=reader.schema)
    except duckdb.Error as exc:
        if context.reason is not None:
            raise context.reason from exc
        scope = current_scope()
        if scope is not None and scope.reason is not None:
            raise scope.reason from exc
        if isinstance(exc, duckdb.InterruptException):
            raise GatewayTimeoutError(TIMEOUT_MESSAGE) from exc
        if isinstance(exc, duckdb.OutOfMemoryException) and memory_limit:
            raise too_much_memory(memory_limit) from exc
        raise
    finally:
        timer.cancel()


def narrowed(view: AnyView, start_ns: int, end_ns: int) -> AnyView:
    """``view`` with only the files holding data in ``[start_ns, end_ns)`` (in-memory tables
    are kept whole: queries filter their rows by time)."""
    if isinstance(view, MultiView):
        parts = [(_narrowed_store(part, start_ns, end_ns), mask) for part, mask in view.parts]
        return dataclasses.replace(view, parts=parts)
    return _narrowed_store(view, start_ns, end_ns)


def _narrowed_store(view: StoreView, start_ns: int, end_ns: int) -> StoreView:
    files = [f for f in view.files if f.max_ts >= start_ns and f.min_ts < end_ns]
    return dataclasses.replace(view, files=files)


def _without_files(view: AnyView, paths: set[str]) -> AnyView:
    """The view without the files at ``paths``."""
    if isinstance(view, MultiView):
        parts = [(_without_store_files(part, paths), mask) for part, mask in view.parts]
        return dataclasses.replace(view, parts=parts)
    return _without_store_files(view, paths)


def _without_store_files(view: StoreView, paths: set[str]) -> StoreView:
    return dataclasses.replace(view, files=[f for f in view.files if f.path not in paths])


def _sql_string(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _top(found: pa.Table, more: pa.Table, limit: int, backward: bool) -> pa.Table:
    """The first ``limit`` rows of both tables in query order."""
    merged = pa.concat_tables([found, more])
    order = "descending" if backward else "ascending"
    return merged.sort_by([("ts", order)]).slice(0, limit)


def _add_scan(
    stats: ScanStats,
    view: AnyView,
    files: list[FileEntry],
    heads: list[pa.Table],
    start_ns: int,
    end_ns: int,
) -> None:
    stats.files += len(files)
    add_file_scan(stats, view, files)
    add_head_scan(stats, heads, start_ns, end_ns)


def add_file_scan(stats: ScanStats, view: AnyView, files: list[FileEntry]) -> None:
    """Count what the view reads of ``files`` (only the row groups of a narrowed file)."""
    for f in files:
        share = view.share(f)
        stats.file_rows += share.rows
        stats.file_line_bytes += share.line_bytes
        stats.file_bytes += share.file_bytes


def add_head_scan(stats: ScanStats, heads: list[pa.Table], start_ns: int, end_ns: int) -> None:
    """Count the in-memory rows in ``[start_ns, end_ns)`` as read: the tables are shared
    whole by every sub-query of a split request, and each reads only its own range."""
    for table in heads:
        ts = table["ts"]
        inside = pc.and_(pc.greater_equal(ts, start_ns), pc.less(ts, end_ns))
        stats.head_rows += pc.sum(inside).as_py() or 0
        sizes = pc.if_else(inside, pc.binary_length(table["line"]), 0)
        stats.head_line_bytes += pc.sum(sizes).as_py() or 0

"""Runs compiled LogQL on DuckDB over a tenant's Parquet files and in-memory head.

The compiler's free relations ``logs`` and ``streams`` are bound here: ``logs`` becomes
``read_parquet([<catalog file list>]) UNION ALL <head tables>`` (never a glob built from a
tenant ID), ``streams`` the tenant's stream index as an Arrow table.
"""

from __future__ import annotations

import itertools
import threading
import time
import warnings
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from logql_to_sql import DIALECT, LogQueryPlan
from schemas.log_rows import HEAD_SCHEMA
from svc.errors import GatewayTimeoutError
from svc.query.file_metadata import NO_METADATA, file_has_metadata, table_has_metadata
from svc.query.tenants import MultiView, tenants_view
from svc.query.udfs import register_udfs
from svc.storage.catalog import FileEntry
from svc.storage.store import Store, StoreView

__all__ = ["AnyView", "QueryEngine", "ScanStats"]

AnyView = StoreView | MultiView

warnings.filterwarnings(
    "ignore", message="Arrow output on a DB-API result makes an extra copy", category=UserWarning
)

_TIMEOUT_MESSAGE = (
    "request timed out, decrease the duration of the request or add more label matchers "
    "(prefer exact match over regex match) to reduce the amount of data processed"
)


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
    extra: dict[str, int] = field(default_factory=dict)
    margin_exhausted: bool = False
    """A limited log query read all the entries its plan allows (``LogQueryPlan.margin``)
    and still found fewer distinct ones than the limit: a larger margin may find more."""


class QueryEngine:
    """Executes plans for one tenant at a time on a shared in-process DuckDB."""

    def __init__(
        self,
        store: Store,
        *,
        timeout_seconds: float,
        scan_group_rows: int = 4_000_000,
        threads: int = 2,
    ) -> None:
        self.store = store
        self.scan_group_rows = scan_group_rows
        self.timeout_seconds = timeout_seconds
        self._db = duckdb.connect(config={"threads": threads})
        register_udfs(self._db)
        self._names = itertools.count()
        self._lock = threading.Lock()

    def view(self, tenants: tuple[str, ...], start_ns: int, end_ns: int) -> AnyView:
        """What a query of these tenants reads (their union when there are several)."""
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
    ) -> tuple[pa.Table, AnyView, ScanStats]:
        """Rows of a log query, with its view and what it scanned.

        With a limit, files are read newest first (oldest first going forward) in small
        groups; once ``limit`` rows are found, files that cannot hold a row beyond the
        current cut-off are never opened.
        """
        view = self.view((tenants,) if isinstance(tenants, str) else tenants, start_ns, end_ns)
        stats = ScanStats()
        if plan.limit is None or isinstance(view, MultiView):
            _add_scan(stats, view.files, view.head_tables)
            table = self._limited_rows(plan, self.execute(text or plan.select, view, stats), stats)
            stats.returned = table.num_rows
            return table, view, stats
        files = sorted(
            view.files,
            key=(lambda f: -f.max_ts) if plan.backward else (lambda f: f.min_ts),
        )
        found: pa.Table | None = None
        heads = view.head_tables
        while True:
            group, files = _next_group(files, self.scan_group_rows)
            part = StoreView(view.lake_root, group, heads, view.streams)
            _add_scan(stats, group, heads)
            rows = self._limited_rows(plan, self.execute(text or plan.select, part, stats), stats)
            found = rows if found is None else _top(found, rows, plan.limit, plan.backward)
            heads = []
            if found.num_rows >= plan.limit:
                cut = found["ts"][found.num_rows - 1].as_py()
                files = [
                    f for f in files if (f.max_ts >= cut if plan.backward else f.min_ts <= cut)
                ]
            if not files:
                break
        stats.returned = found.num_rows
        return found, view, stats

    @staticmethod
    def _limited_rows(plan: LogQueryPlan, rows: pa.Table, stats: ScanStats) -> pa.Table:
        """``rows`` without the ``candidates`` count, noting in ``stats`` whether the
        duplicates used up the plan's margin."""
        if "candidates" not in rows.column_names:
            return rows
        if plan.limit is not None and 0 < rows.num_rows < plan.limit:
            read = pc.max(rows["candidates"]).as_py()
            stats.margin_exhausted |= read is not None and read >= plan.margin * plan.limit
        return rows.drop_columns(["candidates"])

    def execute(self, select: exp.Select | str, view: AnyView, stats: ScanStats) -> pa.Table:
        """Bind ``logs``/``streams`` to the view, run, return the Arrow result.

        ``select`` is a compiled tree or its rendered text (a cached plan).
        """
        started = time.perf_counter()
        cursor = self._db.cursor()
        try:
            sql = self.bound_sql(select, view, cursor)
            timer = threading.Timer(self.timeout_seconds, cursor.interrupt)
            timer.start()
            try:
                # A statement run directly: ``cursor.sql`` would bind it once more to
                # describe a relation first (about 8 ms on a pipeline's SQL). The copy the
                # warning mentions is of the result rows only: small for limited log
                # queries and aggregated samples, linear in the rows for the others.
                result = cursor.execute(sql).to_arrow_table()
            except duckdb.InterruptException as exc:
                raise GatewayTimeoutError(_TIMEOUT_MESSAGE) from exc
            finally:
                timer.cancel()
        finally:
            cursor.close()
        stats.exec_seconds += time.perf_counter() - started
        return result

    def bound_sql(
        self, select: exp.Select | str, view: AnyView, cursor: duckdb.DuckDBPyConnection
    ) -> str:
        """The query's text with ``logs`` and ``streams`` defined as leading common table
        expressions over the view (inlined by DuckDB, as subqueries would be)."""
        text = select if isinstance(select, str) else select.sql(dialect=DIALECT)
        logs, streams_name = self._relations(view, cursor)
        relations = (
            f"logs AS NOT MATERIALIZED ({logs}), "
            f"streams AS NOT MATERIALIZED (SELECT * FROM {streams_name})"
        )
        if text[:5].upper() == "WITH ":  # the query's own expressions join the list
            return f"WITH {relations}, {text[5:]}"
        return f"WITH {relations} {text}"

    def _relations(self, view: AnyView, cursor: duckdb.DuckDBPyConnection) -> tuple[str, str]:
        """The view's rows as one query, and the registered name of its stream table."""
        parts: list[str] = []
        sources = view.parts if isinstance(view, MultiView) else [(view, 0)]
        for source, mask in sources:
            parts += self._sources(source, mask, cursor)
        if not parts:
            parts = self._sources(StoreView(self.store.lake_root, [], [], view.streams), 0, cursor)
        return " UNION ALL ".join(parts), self._register(cursor, view.streams)

    def _sources(self, view: StoreView, mask: int, cursor: duckdb.DuckDBPyConnection) -> list[str]:
        """One SELECT per source of the view: its files, then each in-memory table.

        Written as text: the only values are the catalog's file paths (quoted as SQL
        strings) and names this engine registered.
        """
        stream_id = f"xor(stream_id, {int(mask)}) AS stream_id" if mask else "stream_id"
        columns = f"ts, {stream_id}, line, metadata"
        bare = f"ts, {stream_id}, line, {NO_METADATA}"
        parts = []
        # Files without any metadata are read apart: their metadata column is not read.
        paths: dict[bool, list[str]] = {True: [], False: []}
        for path in view.paths:
            paths[file_has_metadata(path)].append(path)
        for has_metadata, group in paths.items():
            if group:
                files = ", ".join(_sql_string(path) for path in group)
                chosen = columns if has_metadata else bare
                parts.append(f"SELECT {chosen} FROM read_parquet([{files}])")
        for table in view.head_tables:
            chosen = columns if table_has_metadata(table) else bare
            parts.append(f"SELECT {chosen} FROM {self._register(cursor, table)}")
        if not parts and not mask:
            name = self._register(cursor, HEAD_SCHEMA.empty_table())
            parts.append(f"SELECT {columns} FROM {name}")
        return parts

    def _register(self, cursor: duckdb.DuckDBPyConnection, table: pa.Table) -> str:
        name = f"arrow_{next(self._names)}"
        cursor.register(name, table)
        return name

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()


def _sql_string(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _next_group(files: list[FileEntry], group_rows: int) -> tuple[list[FileEntry], list[FileEntry]]:
    """The next files to scan together: at least one, about ``group_rows`` rows."""
    rows = 0
    for index, entry in enumerate(files):
        rows += entry.rows
        if rows >= group_rows:
            return files[: index + 1], files[index + 1 :]
    return files, []


def _top(found: pa.Table, more: pa.Table, limit: int, backward: bool) -> pa.Table:
    """The first ``limit`` rows of both tables in query order."""
    merged = pa.concat_tables([found, more])
    order = "descending" if backward else "ascending"
    return merged.sort_by([("ts", order)]).slice(0, limit)


def _add_scan(stats: ScanStats, files: list[FileEntry], heads: list[pa.Table]) -> None:
    stats.files += len(files)
    for f in files:
        stats.file_rows += f.rows
        stats.file_line_bytes += f.line_bytes
        stats.file_bytes += f.file_bytes
    for table in heads:
        stats.head_rows += table.num_rows
        stats.head_line_bytes += table["line"].nbytes

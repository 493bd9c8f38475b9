"""Running one ad hoc SQL query: check, rewrite, bind, lock down, execute, read.

:meth:`SqlService.open` runs on a query thread of the engine and returns an open
:class:`SqlResult` once the first batch is read (so that a failing query still gets its
4xx or 504 before any byte is sent); its batches are then read one at a time. The
statement is interrupted at the request's deadline wherever it is, streaming included.
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
from prometheus_client import CollectorRegistry

from gocompat.durations import format_prom_duration
from logql_to_sql import QUERY_VARIABLE
from svc.config import Config
from svc.errors import BadRequestError, GatewayTimeoutError, ServiceError
from svc.query.context import QueryContext, registered
from svc.query.engine import AnyView, QueryEngine, ScanStats, too_much_memory
from svc.query.memory import parse_memory_limit
from svc.query.tenants import MultiView
from svc.sql.metrics import SqlMetrics
from svc.sql.redact import Redactor
from svc.sql.rewrite import Rewritten, rewrite
from svc.sql.sandbox import Sandbox, SandboxPool
from svc.sql.statement import SqlRefused, check_statement
from svc.sql.views import stream_table

__all__ = ["SqlLimits", "SqlRequest", "SqlResult", "SqlService", "build_sql_service"]

STREAM_ROWS = "__svc_stream_rows"
"""The name the stream table is registered under in a query's database."""
BATCH_ROWS = 16_384
_MIN_MEMORY = 64 * 1024 * 1024
_ATTEMPTS = 3
# DuckDB errors met while reading a result arrive as Arrow errors carrying DuckDB's text.
_ERROR_KINDS: tuple[tuple[str, type[duckdb.Error]], ...] = (
    ("INTERRUPT Error", duckdb.InterruptException),
    ("Out of Memory Error", duckdb.OutOfMemoryException),
    ("Permission Error", duckdb.PermissionException),
    ("IO Error", duckdb.IOException),
    ("Invalid Input Error", duckdb.InvalidInputException),
)


@dataclass(frozen=True)
class SqlLimits:
    """What one query may use (``sql:`` of the config, resolved)."""

    timeout_seconds: float
    max_rows: int
    memory_limit: int
    threads: int


@dataclass(frozen=True)
class SqlRequest:
    """One query of some tenants over ``[start_ns, end_ns)``."""

    tenants: tuple[str, ...]
    text: str
    start_ns: int
    end_ns: int
    deadline: float
    """``time.monotonic()`` by which the query must have finished."""


def _paths(view: AnyView) -> list[str]:
    if isinstance(view, MultiView):
        return [path for part, _ in view.parts for path in part.paths]
    return view.paths


def _scan(view: AnyView, stats: ScanStats) -> None:
    files = view.files
    stats.files = len(files)
    stats.file_rows = sum(f.rows for f in files)
    stats.file_bytes = sum(f.file_bytes for f in files)
    stats.head_rows = sum(t.num_rows for t in view.head_tables)


def as_duckdb_error(exc: Exception) -> duckdb.Error:
    """A DuckDB error as DuckDB raised it, also when it came through an Arrow reader."""
    if isinstance(exc, duckdb.Error):
        return exc
    text = str(exc)
    for prefix, kind in _ERROR_KINDS:
        if text.startswith(prefix):
            return kind(text)
    return duckdb.DatabaseError(text)


class SqlResult:
    """An open result: its columns, then its batches as they are read."""

    def __init__(
        self,
        reader: pa.RecordBatchReader,
        first: pa.RecordBatch | None,
        columns: list[tuple[str, str]],
        stats: ScanStats,
        failure: _Failures,
        stack: ExitStack,
        connection: duckdb.DuckDBPyConnection,
        *,
        redacted: bool,
    ) -> None:
        self._reader = reader
        self._connection = connection
        self._first = first
        self.columns = columns
        """Name and DuckDB type of each column."""
        self.schema = reader.schema
        self.stats = stats
        self._failure = failure
        self._stack = stack
        self._redacted = redacted
        self._started = time.perf_counter()
        self.done = False
        """Set by a reader once the last batch has been read and encoded."""

    def next_batch(self) -> pa.RecordBatch | None:
        """The next batch (None at the end); raise the query's ServiceError on failure."""
        if self._first is not None:
            batch, self._first = self._first, None
        else:
            batch = self._failure.read(self._reader)
        if batch is None:
            self.stats.exec_seconds += time.perf_counter() - self._started
            return None
        self.stats.returned += batch.num_rows
        return self._failure.redacted(batch) if self._redacted else batch

    def interrupt(self) -> None:
        """Stop the statement where it is (a read in progress fails at once)."""
        self._connection.interrupt()

    def close(self) -> None:
        """Stop the query and hand its database back (once no read is in progress)."""
        self._stack.close()


class _Failures:
    """Turns one query's DuckDB errors into the service's answers."""

    def __init__(self, redactor: Redactor, limits: SqlLimits) -> None:
        self.redactor = redactor
        self.limits = limits
        self.context: QueryContext | None = None
        """The running query's context: a reason recorded there (a template budget, the
        deadline seen by one of our functions) is the answer."""

    def read(self, reader: pa.RecordBatchReader) -> pa.RecordBatch | None:
        try:
            return reader.read_next_batch()
        except StopIteration:
            return None
        except (duckdb.Error, pa.ArrowException, OSError) as exc:
            raise self.answer(as_duckdb_error(exc)) from exc

    def answer(self, exc: duckdb.Error) -> ServiceError:
        if self.context is not None and self.context.reason is not None:
            return self.context.reason
        if isinstance(exc, duckdb.InterruptException):
            timeout = format_prom_duration(round(self.limits.timeout_seconds * 1e9))
            return GatewayTimeoutError(
                f"SQL query timed out (sql.timeout: {timeout}); narrow its range with start "
                "and end, or make it cheaper"
            )
        if isinstance(exc, duckdb.OutOfMemoryException):
            return too_much_memory(self.limits.memory_limit)
        if isinstance(exc, duckdb.PermissionException):
            return SqlRefused("the query tried to read a file, a URL or the environment")
        return BadRequestError(f"SQL error: {self.redactor.message(str(exc))}")

    def redacted(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        columns = [
            pa.array([self.redactor.text(v) if v else v for v in c.to_pylist()], pa.string())
            if pa.types.is_string(c.type)
            else c
            for c in batch.columns
        ]
        return pa.record_batch(columns, names=batch.schema.names)


class SqlService:
    """Ad hoc SQL over the engine's views, each query in a locked-down database."""

    def __init__(
        self,
        engine: QueryEngine,
        limits: SqlLimits,
        spill_root: Path,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.engine = engine
        self.limits = limits
        self.metrics = SqlMetrics(registry)
        spill_root.mkdir(parents=True, exist_ok=True)
        self.pool = SandboxPool(
            threads=limits.threads, memory_limit=limits.memory_limit, spill_root=spill_root
        )
        lake = engine.store.lake_root
        self._secrets = [str(lake), str(lake.resolve()), str(spill_root), str(spill_root.resolve())]

    def open(self, request: SqlRequest) -> SqlResult:
        """Start the query; raise its ServiceError (400, 504...) when it cannot run."""
        statement = check_statement(request.text)
        remaining = request.deadline - time.monotonic()
        limits = self.limits
        failures = _Failures(Redactor(self._secrets), limits)
        if remaining <= 0:
            raise failures.answer(duckdb.InterruptException("deadline passed"))
        view = self.engine.view(request.tenants, request.start_ns, request.end_ns)
        sandbox = self.pool.take()
        stack = ExitStack()
        stack.callback(self.pool.give_back, sandbox)
        try:
            con = sandbox.connection
            con.register(STREAM_ROWS, stream_table(view, request.tenants))
            rewritten = rewrite(
                statement,
                start_ns=request.start_ns,
                end_ns=request.end_ns,
                multi=isinstance(view, MultiView),
                stream_table=STREAM_ROWS,
            )
            paths = _paths(view) if rewritten.reads_views else []
            failures.redactor = Redactor([*self._secrets, *paths])
            sandbox.lock(paths)
            context = stack.enter_context(
                registered(
                    remaining,
                    line_chars=self.engine.template_line_chars,
                    query_chars=self.engine.template_query_chars,
                )
            )
            failures.context = context
            con.execute(f"SET VARIABLE {QUERY_VARIABLE} = ?", [context.id])
            timer = threading.Timer(remaining, con.interrupt)
            timer.daemon = True
            timer.start()
            stack.callback(timer.cancel)
            return self._start(sandbox, rewritten, view, failures, stack)
        except BaseException:
            stack.close()
            raise

    def _start(
        self,
        sandbox: Sandbox,
        rewritten: Rewritten,
        view: AnyView,
        failures: _Failures,
        stack: ExitStack,
    ) -> SqlResult:
        """Run the statement and read its first batch; a file found unreadable is set
        aside (quarantined) and the statement runs again without it."""
        stats = ScanStats()
        con = sandbox.connection
        for attempt in range(_ATTEMPTS):
            query = rewritten.query
            if rewritten.reads_views:
                query = self.engine.bound_sql(query, view, con)
            try:
                relation = con.sql(rewritten.prefix + query)
                reader = relation.to_arrow_reader(BATCH_ROWS)
                first = reader.read_next_batch()
            except StopIteration:
                first = None
            except (duckdb.Error, pa.ArrowException, OSError) as exc:
                error = as_duckdb_error(exc)
                narrowed = None
                if rewritten.reads_views and attempt + 1 < _ATTEMPTS:
                    narrowed = self.engine.set_aside_unreadable(view, error, stats)
                if narrowed is None:
                    raise failures.answer(error) from exc
                view = narrowed
                continue
            _scan(view, stats)
            columns = [(n, str(t)) for n, t in zip(relation.columns, relation.types, strict=True)]
            return SqlResult(
                reader,
                first,
                columns,
                stats,
                failures,
                stack,
                con,
                redacted=rewritten.prefix.startswith("EXPLAIN"),
            )
        raise AssertionError("unreachable: the last attempt raises")

    def close(self) -> None:
        """Close the prepared databases."""
        self.pool.close()


def build_sql_service(
    config: Config, engine: QueryEngine, registry: CollectorRegistry | None
) -> SqlService:
    """The SQL service of a config: ``sql:`` with its defaults resolved."""
    sql, querier = config.sql, config.querier
    if sql.memory_limit:
        memory = parse_memory_limit(sql.memory_limit)
    else:
        memory = max(
            parse_memory_limit(querier.query_memory_limit) // querier.max_concurrent, _MIN_MEMORY
        )
    limits = SqlLimits(
        timeout_seconds=sql.timeout or config.limits_config.query_timeout,
        max_rows=sql.max_rows,
        memory_limit=memory,
        threads=sql.threads,
    )
    spill = Path(config.common.path_prefix) / "query-spill" / "sql"
    return SqlService(engine, limits, spill, registry)

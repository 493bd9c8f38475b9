"""Running one ad hoc SQL query: check, rewrite, bind, then run in a worker process.

:meth:`SqlService.open` runs on a query thread of the engine and returns an open
:class:`SqlResult` once the first batch is read (so that a failing query still gets its
4xx or 504 before any byte is sent); its batches are then read one at a time. The
statement runs in a worker process (:mod:`svc.sql.worker`) whose memory is capped, in a
locked-down database; the worker is killed at the request's deadline wherever it is,
streaming included.
"""

from __future__ import annotations

import shutil
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import duckdb
import msgspec
import pyarrow as pa
from prometheus_client import CollectorRegistry

from gocompat.durations import format_prom_duration
from svc.config import Config
from svc.errors import (
    BadRequestError,
    GatewayTimeoutError,
    ServiceError,
    ServiceUnavailableError,
)
from svc.query.alarms import after
from svc.query.engine import AnyView, QueryEngine, ScanStats, add_file_scan, too_much_memory
from svc.query.memory import parse_memory_limit
from svc.query.tenants import MultiView
from svc.query.unique_entries import view_entries_unique
from svc.sql.metrics import SqlMetrics
from svc.sql.protocol import (
    BATCH,
    ERROR,
    HEADER,
    WorkerError,
    WorkerHeader,
    WorkerQuery,
    raised,
    read_batch,
)
from svc.sql.redact import Redactor
from svc.sql.rewrite import Rewritten, rewrite
from svc.sql.statement import SqlRefused, check_statement
from svc.sql.views import stream_table, within
from svc.sql.workers import Worker, WorkerGone, WorkerPool

__all__ = ["SqlLimits", "SqlRequest", "SqlResult", "SqlService", "build_sql_service"]

STREAM_ROWS = "__svc_stream_rows"
"""The name the stream table is registered under in a query's database."""
BATCH_ROWS = 16_384
_MIN_MEMORY = 64 * 1024 * 1024
# A worker's data segment beyond DuckDB's memory limit: the interpreter, the libraries and
# the threads' stacks (about 250 MiB), plus strings DuckDB does not count and the batches
# being sent, up to the memory limit again.
_WORKER_BASE = 512 * 1024 * 1024
_ATTEMPTS = 3
_HEADER_DECODER = msgspec.json.Decoder(WorkerHeader)
_ERROR_DECODER = msgspec.json.Decoder(WorkerError)
_REASONS: dict[int, type[ServiceError]] = {
    kind.status: kind for kind in (BadRequestError, GatewayTimeoutError)
}


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
    max_rows: int = 0
    """Rows after which the worker stops reading the result (0: all of them)."""


def _paths(view: AnyView) -> list[str]:
    if isinstance(view, MultiView):
        return [path for part, _ in view.parts for path in part.paths]
    return view.paths


def _scan(view: AnyView, stats: ScanStats) -> None:
    files = view.files
    stats.files = len(files)
    add_file_scan(stats, view, files)
    stats.head_rows = sum(t.num_rows for t in view.head_tables)


class _Run:
    """One statement on one worker: its ticket (what a deadline kill targets)."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.ticket = 0

    def kill(self, why: str) -> None:
        self.worker.kill(why, self.ticket)


class SqlResult:
    """An open result: its columns, then its batches as they are read."""

    def __init__(
        self,
        run: _Run,
        header: WorkerHeader,
        first: pa.RecordBatch | None,
        stats: ScanStats,
        failure: _Failures,
        stack: ExitStack,
        *,
        redacted: bool,
    ) -> None:
        self._run = run
        self._first = first
        self._ended = first is None
        self.columns = header.columns
        """Name and DuckDB type of each column."""
        self.schema = pa.ipc.read_schema(pa.py_buffer(header.schema))
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
        elif self._ended:
            batch = None
        else:
            batch = self._failure.next_batch(self._run.worker)
        if batch is None:
            if not self._ended or self.stats.exec_seconds == 0:
                self.stats.exec_seconds += time.perf_counter() - self._started
            self._ended = True
            return None
        self.stats.returned += batch.num_rows
        return self._failure.redacted(batch) if self._redacted else batch

    def interrupt(self) -> None:
        """Stop the statement where it is (a read in progress fails at once)."""
        self._run.kill("interrupt")

    def close(self) -> None:
        """Stop the query and hand its worker back (once no read is in progress)."""
        self._stack.close()


class _Failures:
    """Reads a worker's frames and turns its failures into the service's answers."""

    def __init__(self, redactor: Redactor, limits: SqlLimits) -> None:
        self.redactor = redactor
        self.limits = limits
        self.last_error: duckdb.Error | None = None
        """The DuckDB error the worker last answered (files are blamed from it)."""

    def frame(self, worker: Worker) -> tuple[bytes, bytes]:
        """The next frame; the worker's end, or an error frame, as the answer to raise."""
        try:
            kind, payload = worker.read()
        except WorkerGone as exc:
            raise self.gone(worker) from exc
        if kind == ERROR:
            error = _ERROR_DECODER.decode(payload)
            # After running out of memory, its heap may stay too full for the next statement.
            if error.kind == duckdb.OutOfMemoryException.__name__:
                worker.idle = False
            raise self.answer_error(error)
        return kind, payload

    def next_batch(self, worker: Worker) -> pa.RecordBatch | None:
        kind, payload = self.frame(worker)
        return read_batch(payload) if kind == BATCH else None

    def gone(self, worker: Worker) -> ServiceError:
        if worker.killed in ("deadline", "interrupt"):
            return self.timeout()
        return too_much_memory(self.limits.memory_limit)

    def timeout(self) -> ServiceError:
        timeout = format_prom_duration(round(self.limits.timeout_seconds * 1e9))
        return GatewayTimeoutError(
            f"SQL query timed out (sql.timeout: {timeout}); narrow its range with start "
            "and end, or make it cheaper"
        )

    def answer_error(self, error: WorkerError) -> ServiceError:
        if error.status:
            return _REASONS.get(error.status, BadRequestError)(error.message)
        self.last_error = raised(error)
        return self.answer(self.last_error)

    def answer(self, exc: duckdb.Error) -> ServiceError:
        if isinstance(exc, duckdb.InterruptException):
            return self.timeout()
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


class _Tables:
    """The Arrow tables a bound statement reads, collected to be sent to the worker."""

    def __init__(self) -> None:
        self.tables: dict[str, pa.Table] = {}

    def register(self, name: str, table: pa.Table, /) -> object:
        self.tables[name] = table
        return self


class SqlService:
    """Ad hoc SQL over the engine's views, each query in a worker's locked-down database."""

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
        # What workers of an earlier run spilled is garbage now.
        shutil.rmtree(spill_root, ignore_errors=True)
        spill_root.mkdir(parents=True, exist_ok=True)
        self.spill_root = spill_root
        self.pool = WorkerPool(
            data_limit=2 * limits.memory_limit + _WORKER_BASE, spill_root=spill_root
        )
        lake = engine.store.lake_root
        self._secrets = [str(lake), str(lake.resolve()), str(spill_root), str(spill_root.resolve())]

    def open(self, request: SqlRequest) -> SqlResult:
        """Start the query; raise its ServiceError (400, 504...) when it cannot run."""
        if not self.engine.store.lake.local:
            raise BadRequestError(
                "ad hoc SQL reads a local lake only: this deployment keeps the lake in "
                "object storage"
            )
        statement = check_statement(request.text)
        failures = _Failures(Redactor(self._secrets), self.limits)
        if request.deadline - time.monotonic() <= 0:
            raise failures.timeout()
        view = self.engine.view(request.tenants, request.start_ns, request.end_ns)
        tables = _Tables()
        tables.register(STREAM_ROWS, stream_table(view, request.tenants))
        rewritten = rewrite(
            statement,
            start_ns=request.start_ns,
            end_ns=request.end_ns,
            multi=isinstance(view, MultiView),
            stream_table=STREAM_ROWS,
            bounded=not within(view, request.start_ns, request.end_ns),
            unique_entries=lambda: view_entries_unique(view, request.start_ns, request.end_ns),
        )
        view = self.engine.narrowed_to_needles(view, rewritten.queries)
        stack = ExitStack()
        try:
            run = _Run(self._take())
            stack.callback(self.pool.give_back, run.worker)
            alarm = after(request.deadline - time.monotonic(), lambda: run.kill("deadline"))
            stack.callback(alarm.cancel)
            return self._start(run, request, rewritten, view, tables, failures, stack)
        except BaseException:
            stack.close()
            raise

    def _take(self) -> Worker:
        try:
            return self.pool.take()
        except (WorkerGone, OSError) as exc:
            raise ServiceUnavailableError(f"SQL is not available: {exc}") from exc

    def _start(
        self,
        run: _Run,
        request: SqlRequest,
        rewritten: Rewritten,
        view: AnyView,
        tables: _Tables,
        failures: _Failures,
        stack: ExitStack,
    ) -> SqlResult:
        """Run the statement and read its first batch; a file found unreadable is set
        aside (quarantined) and the statement runs again without it."""
        stats = ScanStats()
        for attempt in range(_ATTEMPTS):
            failures.last_error = None
            try:
                header, first = self._send(run, request, rewritten, view, tables, failures)
            except ServiceError:
                error, narrowed = failures.last_error, None
                if rewritten.reads_views and error is not None and attempt + 1 < _ATTEMPTS:
                    narrowed = self.engine.set_aside_unreadable(view, error, stats)
                if narrowed is None:
                    raise
                view = narrowed
                continue
            _scan(view, stats)
            redacted = rewritten.prefix.startswith("EXPLAIN")
            return SqlResult(run, header, first, stats, failures, stack, redacted=redacted)
        raise AssertionError("unreachable: the last attempt raises")

    def _send(
        self,
        run: _Run,
        request: SqlRequest,
        rewritten: Rewritten,
        view: AnyView,
        tables: _Tables,
        failures: _Failures,
    ) -> tuple[WorkerHeader, pa.RecordBatch | None]:
        """Send the statement bound to ``view``; its header and first batch."""
        query, sent = rewritten.query, _Tables()
        sent.tables.update(tables.tables)
        if rewritten.reads_views:
            query = self.engine.bound_sql(query, view, sent)
        paths = _paths(view) if rewritten.reads_views else []
        failures.redactor = Redactor([*self._secrets, *paths])
        limits = self.limits
        worker_query = WorkerQuery(
            sql=rewritten.prefix + query,
            tables=list(sent.tables),
            paths=paths,
            threads=limits.threads,
            memory_limit=limits.memory_limit,
            spill_root=str(self.spill_root),
            timeout_seconds=max(request.deadline - time.monotonic(), 0.001),
            line_chars=self.engine.template_line_chars,
            query_chars=self.engine.template_query_chars,
            batch_rows=BATCH_ROWS,
            max_rows=request.max_rows,
        )
        try:
            run.ticket = run.worker.send(worker_query, sent.tables)
        except WorkerGone as exc:
            raise failures.gone(run.worker) from exc
        kind, payload = failures.frame(run.worker)
        if kind != HEADER:
            raise failures.gone(run.worker)
        return _HEADER_DECODER.decode(payload), failures.next_batch(run.worker)

    def close(self) -> None:
        """End the idle workers."""
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

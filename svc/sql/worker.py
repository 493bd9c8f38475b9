"""An SQL worker process: runs ad hoc SQL statements one at a time, each in a fresh
locked-down database (:mod:`svc.sql.sandbox`), reading queries from stdin and writing
results to stdout (:mod:`svc.sql.protocol`).

Why a process: DuckDB's ``memory_limit`` bounds its buffers but not the strings and lists
a projection builds (``repeat(line, n)``, a chain of ``x || x``) nor the Arrow result, so
one statement could exhaust the server. Here the data segment is capped
(``RLIMIT_DATA``, the first argument, in bytes): an allocation past it fails as DuckDB's
out-of-memory error, or at worst ends this process, never the server. The server kills
the process at the statement's deadline, wherever it is.

Usage: ``python -m svc.sql.worker <data segment limit in bytes>``.
"""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path
from typing import IO

import duckdb
import msgspec
import pyarrow as pa

from logql_to_sql import QUERY_VARIABLE
from svc.query.alarms import after
from svc.query.context import registered
from svc.query.streamed import streamed
from svc.sql.protocol import (
    BATCH,
    DONE,
    ERROR,
    HEADER,
    QUERY,
    TABLE,
    WorkerError,
    WorkerHeader,
    WorkerQuery,
    error_frame,
    ipc_bytes,
    read_frame,
    read_ipc,
    write_frame,
)
from svc.sql.sandbox import Sandbox

__all__ = ["main", "serve"]

_QUERY_DECODER = msgspec.json.Decoder(WorkerQuery)
_GRACE_SECONDS = 5.0
_CONTEXT = "sql"


def serve(source: IO[bytes], out: IO[bytes]) -> None:
    """Answer queries from ``source`` until it ends. A query runs on the database the
    previous one left locked when it may read the same files (:mod:`svc.sql.sandbox`),
    else on a fresh one opened ahead (about 20 ms) while the worker waited."""
    ready: Sandbox | None = None
    kept: Sandbox | None = None
    held: dict[str, pa.Table] = {}
    while True:
        frame = read_frame(source)
        if frame is None:
            return
        kind, payload = frame
        if kind != QUERY:
            raise SystemExit(f"svc sql worker: unexpected frame {kind!r}")
        query = _QUERY_DECODER.decode(payload)
        tables = _tables(source, query, held)
        if tables is None:
            return
        held = {name: tables[name] for name in query.keep}
        if kept is not None and kept.serves(_settings(query), query.paths):
            sandbox, kept = kept, None
        else:
            if kept is not None:
                kept.close()
                kept = None
            if ready is None or ready.settings != _settings(query):
                if ready is not None:
                    ready.close()
                ready = _sandbox(query)
            sandbox, ready = ready, None
        kept = run(query, sandbox, tables, out)
        del tables
        if kept is not None:  # the tables not kept are freed now, not at the next statement
            kept.use_tables(held)
        if ready is None:
            ready = _sandbox(query)


def _tables(
    source: IO[bytes], query: WorkerQuery, held: dict[str, pa.Table]
) -> dict[str, pa.Table] | None:
    """The tables of ``query`` by name: those it says the worker holds from ``held``, the
    others read from ``source`` (None when it ends). ``held`` is emptied first, so that
    what the statement does not read is freed before the new tables arrive."""
    pairs = list(zip(query.tables, query.sources(), strict=True))
    try:
        kept = {name: held[name] for name, frame in pairs if frame < 0}
    except KeyError as exc:
        raise SystemExit(f"svc sql worker: no table {exc} kept") from exc
    held.clear()
    frames = []
    for _ in range(max((frame for _, frame in pairs), default=-1) + 1):
        table_frame = read_frame(source)
        if table_frame is None or table_frame[0] != TABLE:
            return None
        frames.append(read_ipc(table_frame[1]))
    return {name: kept[name] if frame < 0 else frames[frame] for name, frame in pairs}


def _settings(query: WorkerQuery) -> tuple[int, int, str]:
    return query.threads, query.memory_limit, query.spill_root


def _sandbox(query: WorkerQuery) -> Sandbox:
    return Sandbox(
        threads=query.threads, memory_limit=query.memory_limit, spill_root=Path(query.spill_root)
    )


def run(
    query: WorkerQuery, sandbox: Sandbox, tables: dict[str, pa.Table], out: IO[bytes]
) -> Sandbox | None:
    """Run one statement in ``sandbox`` (locked first if it is not) and write its answer;
    the sandbox when the next query of the same files may run on it, else None (it is
    closed)."""
    # The server kills a worker at the deadline; should the server be gone, this does.
    watchdog = after(query.timeout_seconds + _GRACE_SECONDS, lambda: os._exit(3))
    reusable = False
    try:
        with registered(
            query.timeout_seconds,
            line_chars=query.line_chars,
            query_chars=query.query_chars,
            name=_CONTEXT,
        ) as context:
            try:
                con = sandbox.connection
                sandbox.use_tables(tables)
                if sandbox.paths is None:
                    sandbox.lock(query.paths)
                    # The same id for every statement of this process (one at a time).
                    con.execute(f"SET VARIABLE {QUERY_VARIABLE} = ?", [context.id])
                before = sandbox.catalog_version()
                _answer(con, query, out)
                reusable = before is not None and sandbox.catalog_version() == before
            except (duckdb.Error, pa.ArrowException, OSError, MemoryError) as exc:
                reusable = False
                if context.reason is not None:
                    reason = context.reason
                    payload = msgspec.json.encode(
                        WorkerError(kind="reason", message=reason.message, status=reason.status)
                    )
                else:
                    payload = error_frame(exc)
                write_frame(out, ERROR, payload)
        out.flush()
    finally:
        watchdog.cancel()
        if not reusable:
            sandbox.close()
    return sandbox if reusable else None


def _answer(con: duckdb.DuckDBPyConnection, query: WorkerQuery, out: IO[bytes]) -> None:
    columns, reader = streamed(con, query.sql, query.batch_rows)
    header = WorkerHeader(columns=columns, schema=reader.schema.serialize().to_pybytes())
    write_frame(out, HEADER, msgspec.json.encode(header))
    rows = 0
    for batch in reader:
        write_frame(out, BATCH, ipc_bytes(batch))
        out.flush()
        rows += batch.num_rows
        if query.max_rows and rows > query.max_rows:
            break
    write_frame(out, DONE)


def main(argv: list[str] | None = None) -> int:
    """Cap the data segment, then serve stdin; stdout carries only frames."""
    args = sys.argv[1:] if argv is None else argv
    limit = int(args[0])
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    out = os.fdopen(os.dup(1), "wb")
    # Anything else writing to stdout (Python or C) would corrupt the frames.
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        serve(sys.stdin.buffer, out)
    except BrokenPipeError:
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

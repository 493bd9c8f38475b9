"""The pipe between the server and an SQL worker process (:mod:`svc.sql.worker`).

Every message is a frame: one kind byte, the payload's length (8 bytes, big-endian) and the
payload. The server sends a ``QUERY`` (a :class:`WorkerQuery`) followed by ``TABLE`` frames
(an Arrow IPC stream each) for the tables of its ``tables`` the worker does not hold yet
(``WorkerQuery.frames``); the worker answers ``HEADER`` (the
columns and the Arrow schema), ``BATCH`` frames (an Arrow IPC stream each) and ``DONE``, or
an ``ERROR`` (a :class:`WorkerError`) at any point, and then waits for the next query.
"""

from __future__ import annotations

import struct
from typing import IO, Final

import duckdb
import msgspec
import pyarrow as pa

__all__ = [
    "BATCH",
    "DONE",
    "ERROR",
    "HEADER",
    "QUERY",
    "TABLE",
    "WorkerError",
    "WorkerHeader",
    "WorkerQuery",
    "as_duckdb_error",
    "error_frame",
    "ipc_bytes",
    "raised",
    "read_batch",
    "read_frame",
    "read_ipc",
    "write_frame",
]

QUERY: Final = b"Q"
TABLE: Final = b"T"
HEADER: Final = b"H"
BATCH: Final = b"B"
DONE: Final = b"D"
ERROR: Final = b"E"

_LENGTH = struct.Struct(">Q")
# DuckDB errors met while reading a result arrive as Arrow errors carrying DuckDB's text.
_ERROR_KINDS: tuple[tuple[str, type[duckdb.Error]], ...] = (
    ("INTERRUPT Error", duckdb.InterruptException),
    ("Out of Memory Error", duckdb.OutOfMemoryException),
    ("Permission Error", duckdb.PermissionException),
    ("IO Error", duckdb.IOException),
    ("Invalid Input Error", duckdb.InvalidInputException),
)


class WorkerQuery(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One statement to run, with what its database may use and read."""

    sql: str
    """The statement as it runs (views bound), never the client's text."""
    tables: list[str]
    """Names of the Arrow tables the statement reads."""
    paths: list[str]
    """The only files the statement may read."""
    threads: int
    memory_limit: int
    spill_root: str
    timeout_seconds: float
    line_chars: int
    query_chars: int
    batch_rows: int
    max_rows: int = 0
    """Rows after which the rest of the result is not read (0: all of them)."""
    frames: list[int] = msgspec.field(default_factory=list)
    """For each name of ``tables``, which of the ``TABLE`` frames that follow holds its
    table (one frame may serve several names); -1: the table the previous statement read
    under that name, which the worker kept. Empty: one frame per name, in order."""
    keep: list[str] = msgspec.field(default_factory=list)
    """The names of ``tables`` whose tables the worker keeps for the next statement."""

    def sources(self) -> list[int]:
        """``frames``, or one frame per name when it is empty."""
        return self.frames or list(range(len(self.tables)))


class WorkerHeader(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The result's columns: name and DuckDB type of each, and the Arrow schema."""

    columns: list[tuple[str, str]]
    schema: bytes
    """The Arrow schema, serialized (``pa.Schema.serialize``)."""


class WorkerError(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Why a statement failed: a DuckDB exception (its class name), or the reason one of
    the engine's functions recorded (``status`` non-zero: the service's answer)."""

    kind: str
    message: str
    status: int = 0


def write_frame(out: IO[bytes], kind: bytes, payload: bytes = b"") -> None:
    """Write one frame (not flushed)."""
    out.write(kind + _LENGTH.pack(len(payload)))
    out.write(payload)


def read_frame(source: IO[bytes]) -> tuple[bytes, bytes] | None:
    """The next frame's kind and payload; None when the pipe ends (even inside a frame)."""
    head = source.read(1 + _LENGTH.size)
    if len(head) < 1 + _LENGTH.size:
        return None
    (length,) = _LENGTH.unpack(head[1:])
    payload = source.read(length)
    if len(payload) < length:
        return None
    return head[:1], payload


def ipc_bytes(data: pa.Table | pa.RecordBatch) -> bytes:
    """``data`` as an Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, data.schema) as writer:
        writer.write(data)
    return bytes(sink.getvalue())


def read_ipc(payload: bytes) -> pa.Table:
    """The table of an Arrow IPC stream."""
    return pa.ipc.open_stream(pa.py_buffer(payload)).read_all()


def read_batch(payload: bytes) -> pa.RecordBatch:
    """The one batch of an Arrow IPC stream written from a batch."""
    return pa.ipc.open_stream(pa.py_buffer(payload)).read_next_batch()


def as_duckdb_error(exc: BaseException) -> duckdb.Error:
    """A DuckDB error as DuckDB raised it, also when it came through an Arrow reader (a
    failed allocation in Python is DuckDB's out-of-memory error too)."""
    if isinstance(exc, duckdb.Error):
        return exc
    if isinstance(exc, MemoryError):
        return duckdb.OutOfMemoryException(str(exc) or "out of memory")
    text = str(exc)
    for prefix, kind in _ERROR_KINDS:
        if text.startswith(prefix):
            return kind(text)
    return duckdb.DatabaseError(text)


def error_frame(exc: BaseException) -> bytes:
    """The ``ERROR`` payload of a DuckDB (or Arrow, or allocation) error."""
    error = as_duckdb_error(exc)
    return msgspec.json.encode(WorkerError(kind=type(error).__name__, message=str(error)))


def raised(error: WorkerError) -> duckdb.Error:
    """The DuckDB exception a worker's error stands for."""
    kind = getattr(duckdb, error.kind, None)
    if isinstance(kind, type) and issubclass(kind, duckdb.Error):
        return kind(error.message)
    return duckdb.DatabaseError(error.message)

"""Unflushed entries of the other writers of a shared catalog, fetched over HTTP.

A writer answers ``GET /svc/internal/head`` (one tenant, a time range) with its in-memory
rows, the streams they belong to and its flushed-WAL watermark, taken together under its
view lock. A reader fetches every live writer's head, then lists the catalog's files, then
reads the writers' watermarks: when a writer's watermark moved since its answer, a flush
committed in between (its rows may be in both, or in neither) and the reader fetches and
lists again. Otherwise the heads and the files hold each entry exactly once.

The body is two Arrow IPC streams, the streams table first, behind an 8-byte length.
"""

from __future__ import annotations

import logging
import struct
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.ipc as ipc

from schemas.log_rows import HEAD_SCHEMA
from svc.errors import (
    TIMEOUT_MESSAGE,
    GatewayTimeoutError,
    ServiceError,
    ServiceUnavailableError,
)
from svc.storage.members import Member, Members

__all__ = [
    "HEAD_PATH",
    "RemoteHead",
    "RemoteHeads",
    "decode_head",
    "encode_head",
    "unanswered",
]

log = logging.getLogger(__name__)

HEAD_PATH = "/svc/internal/head"
_LENGTH = struct.Struct(">Q")
_WATERMARK = b"svc.watermark"
_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class RemoteHead:
    """One writer's unflushed rows of a tenant, their streams, and its watermark then."""

    writer: str
    rows: pa.Table
    streams: pa.Table
    watermark: int


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def encode_head(rows: list[pa.Table], streams: pa.Table, watermark: int) -> bytes:
    """A writer's answer: its head rows, their streams and its watermark."""
    table = pa.concat_tables(rows) if rows else HEAD_SCHEMA.empty_table()
    table = table.replace_schema_metadata({_WATERMARK: str(watermark).encode()})
    first = _ipc(streams)
    return _LENGTH.pack(len(first)) + first + _ipc(table)


def decode_head(writer: str, body: bytes) -> RemoteHead:
    """A writer's answer as sent by :func:`encode_head`."""
    (length,) = _LENGTH.unpack_from(body)
    start = _LENGTH.size
    streams = ipc.open_stream(pa.py_buffer(body[start : start + length])).read_all()
    rows = ipc.open_stream(pa.py_buffer(body[start + length :])).read_all()
    watermark = int((rows.schema.metadata or {}).get(_WATERMARK, b"0"))
    return RemoteHead(writer, rows.replace_schema_metadata(None), streams, watermark)


class RemoteHeads:
    """Fetches the unflushed heads of the live writers other than this process.

    As the reference's querier asks its ingesters (replication factor 1): a query whose
    range ends more than ``within_seconds`` ago asks none; otherwise every writer in the
    ring must answer, and one that does not fails the query with the reference's status
    and message. A writer that left the ring (its heartbeat expired) is not asked.
    """

    def __init__(
        self, members: Members, writers: frozenset[str], *, within_seconds: float = 0.0
    ) -> None:
        self.members = members
        self.writer_targets = writers
        """Targets whose instances take writes (they have heads)."""
        self.within_ns = round(within_seconds * 1e9)

    def writers(self) -> list[Member]:
        """The live writers of the ring other than this process."""
        return [
            m
            for m in self.members.live()
            if m.name != self.members.name and m.target in self.writer_targets
        ]

    def fetch(
        self, tenant: str, start_ns: int, end_ns: int, *, rows: bool = True
    ) -> list[RemoteHead]:
        """Every other live writer's head rows of ``tenant`` in ``[start_ns, end_ns)``
        (with ``rows`` false, only the streams those rows belong to: label lookups)."""
        if self.within_ns > 0 and end_ns <= time.time_ns() - self.within_ns:
            return []
        writers = self.writers()
        if not writers:
            return []
        params = {"start": start_ns, "end": end_ns}
        if not rows:
            params["rows"] = 0
        query = urllib.parse.urlencode(params)

        def one(name: str, address: str) -> RemoteHead:
            request = urllib.request.Request(
                f"{address}{HEAD_PATH}?{query}", headers={"X-Scope-OrgID": tenant}
            )
            try:
                with urllib.request.urlopen(request, timeout=_TIMEOUT_SECONDS) as response:
                    return decode_head(name, response.read())
            except Exception as exc:
                raise unanswered(name, address, exc) from exc

        with ThreadPoolExecutor(max_workers=min(len(writers), 8)) as pool:
            return list(pool.map(lambda m: one(m.name, m.address), writers))


def unanswered(name: str, address: str, exc: Exception) -> ServiceError:
    """The query's error when a writer did not send its head: what the reference's querier
    answers when an ingester's gRPC call fails (its status: 500 for an unavailable
    ingester, 504 past the deadline, the ingester's own 503)."""
    host = urllib.parse.urlsplit(address).netloc
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    log.warning("writer %s at %s did not send its unflushed entries: %s", name, address, exc)
    if isinstance(exc, urllib.error.HTTPError):
        body = exc.read().decode(errors="replace").strip()
        message = body or f"rpc error: code = Unknown desc = {exc.reason}"
        return ServiceUnavailableError(message) if exc.code == 503 else ServiceError(message)
    if isinstance(reason, TimeoutError):
        return GatewayTimeoutError(TIMEOUT_MESSAGE)
    if isinstance(reason, ConnectionRefusedError):
        return ServiceError(
            "rpc error: code = Unavailable desc = connection error: desc = "
            f'"transport: Error while dialing: dial tcp {host}: connect: connection refused"'
        )
    if isinstance(reason, OSError):
        detail = reason.strerror or str(reason) or type(reason).__name__
        return ServiceError(
            f"rpc error: code = Unavailable desc = error reading from server: {detail.lower()}"
        )
    return ServiceError(f"rpc error: code = Internal desc = {reason}")

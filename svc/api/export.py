"""``GET /svc/api/v1/export``: every entry of a log query, streamed as Parquet or JSON lines.

For notebooks and bulk copies: no entry limit and no query-length limit, one tenant per
request. The answer is chunked and starts before the scan ends: each time slice of the
range (see :mod:`svc.query.export`) is queried and sent in turn, so a client that goes
away stops the work at the slice in progress. Parquet (``Accept:
application/vnd.columnar.parquet``) has SPEC 2.5's stream columns, ``timestamp``,
``labels``, ``line``, with the labels ``query_range`` reports (stream labels, structured
metadata and parsed labels), one row group per slice; otherwise JSON lines
``{"timestamp": "<ns>", "labels": {...}, "line": "..."}``. Entries come oldest first.
A failure after the answer started ends it early: a Parquet body then has no footer, and
the server logs why.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
from litestar import Request, get
from litestar.response import Stream

from logql_to_sql import ast
from svc.api.common import api_paths, org_header, request_params, runtime
from svc.api.params import range_params
from svc.api.parquet_results import STREAM_SCHEMA, parquet_media_type
from svc.api.query import parse_query
from svc.errors import BadRequestError
from svc.query.export import ExportSlice, export_slice, export_slices
from svc.runtime import Runtime

__all__ = ["export", "export_rows"]

log = logging.getLogger(__name__)

JSON_LINES = "application/x-ndjson"
EXPORT_DICTIONARY_COLUMNS = ["labels.key_value.key", "labels.key_value.value"]
"""The Parquet columns of an export written with dictionaries (the labels' keys and
values, not the lines)."""


class _Entry(msgspec.Struct):
    timestamp: str
    labels: dict[str, str]
    line: str


_encode = msgspec.json.Encoder().encode


class _Sink:
    """A write-only file that hands over what was written since the last ``take``."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0
        self.closed = False

    def write(self, data: bytes) -> int:
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        """Nothing is buffered."""

    def close(self) -> None:
        self.closed = True

    def take(self) -> bytes:
        data = b"".join(self.parts)
        self.parts.clear()
        return data


def export_rows(rows: pa.Table) -> pa.Table:
    """Slice rows (``ts``, ``labels``, ``line``) in SPEC 2.5's stream schema."""
    return pa.table(
        [rows["ts"].cast(pa.timestamp("ns", tz="UTC")), rows["labels"], rows["line"]],
        schema=STREAM_SCHEMA,
    )


def _json_lines(rows: pa.Table) -> bytes:
    data = rows.to_pydict()
    return b"".join(
        _encode(_Entry(str(ts), dict(labels or ()), line)) + b"\n"
        for ts, labels, line in zip(data["ts"], data["labels"], data["line"], strict=True)
    )


def _encoded(table: pa.Table, writer: pq.ParquetWriter | None, sink: _Sink) -> bytes:
    """A slice's rows as the next part of the body (a row group, or JSON lines)."""
    if writer is None:
        return _json_lines(table)
    writer.write_table(export_rows(table))
    return sink.take()


def _closed(writer: pq.ParquetWriter, sink: _Sink) -> bytes:
    """The end of a Parquet body (its footer)."""
    writer.close()
    return sink.take()


async def _body(
    rt: Runtime, tenant: str, query: ast.LogQuery, slices: list[ExportSlice], parquet: bool
) -> AsyncIterator[bytes]:
    sink = _Sink()
    writer = (
        pq.ParquetWriter(
            sink,
            STREAM_SCHEMA,
            compression="zstd",
            # Label keys and values repeat; lines rarely do, and trying a dictionary on
            # them cost about a tenth of the writer's CPU for a larger file.
            use_dictionary=EXPORT_DICTIONARY_COLUMNS,
        )
        if parquet
        else None
    )
    done = rows = 0
    finished = False
    try:
        for part in slices:
            table = await rt.engine.call(export_slice, tenant, query, part)
            done += 1
            rows += table.num_rows
            if table.num_rows:
                # Compressing a row group or encoding JSON lines takes tens to hundreds
                # of milliseconds a slice: not on the event loop.
                yield await asyncio.to_thread(_encoded, table, writer, sink)
        if writer is not None:
            yield await asyncio.to_thread(_closed, writer, sink)
        finished = True
    finally:
        log.info(
            "export %s: tenant=%s slices=%d/%d rows=%d",
            "finished" if finished else "stopped",
            tenant,
            done,
            len(slices),
            rows,
        )


@get(api_paths("/export"))
async def export(request: Request[Any, Any, Any]) -> Stream:
    """Every entry of a log query over ``start``..``end``, streamed (module docstring)."""
    rt = runtime(request)
    tenant = rt.resolver.single(org_header(request))
    params = await request_params(request)
    expr = parse_query(params)
    if not isinstance(expr, ast.LogQuery):
        raise BadRequestError("export takes a log query, not a metric query")
    window = range_params(params)
    rt.require_ready()
    parquet = parquet_media_type(request)
    slices = await rt.engine.call(export_slices, tenant, window.start_ns, window.end_ns)
    return Stream(
        _body(rt, tenant, expr, slices, parquet is not None),
        media_type=parquet or JSON_LINES,
    )

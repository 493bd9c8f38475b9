"""``/sql`` (ad hoc SQL next to LogQL) and ``/sql/explain`` (the SQL of a LogQL query).

The SQL text comes as the body (``text/plain`` or ``application/sql``), a form or JSON
field ``query``, or a ``query`` parameter; ``start``/``end``/``since`` bound what is read as
for ``query_range``. The answer's format follows ``Accept``: JSON (default, at most
``sql.max_rows`` rows), or CSV, Parquet and the Arrow IPC stream, streamed whole.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pyarrow as pa
from litestar import Request, Response, get, post
from litestar.response import Stream

import logql_to_sql
from svc.api.common import api_paths, org_header, request_params, runtime
from svc.api.legacy import rfc3339_nano
from svc.api.params import (
    Params,
    TimeRange,
    direction_param,
    limit_param,
    range_params,
    step_param,
)
from svc.api.parquet_results import PARQUET_MEDIA_TYPES
from svc.errors import BadRequestError, ServiceError, ServiceUnavailableError
from svc.query.engine import QueryEngine, ScanStats, too_much_memory
from svc.runtime import Runtime
from svc.sql.explain import explain_logql
from svc.sql.formats import StreamEncoder, stream_encoder
from svc.sql.service import SqlRequest, SqlResult, SqlService
from svc.sql.statement import SqlRefused
from svc.sql.values import json_values

__all__ = ["SQL_MEDIA_TYPES", "json_body", "sql_explain", "sql_get", "sql_post"]

SQL_MEDIA_TYPES = {
    "application/json": "json",
    "text/csv": "csv",
    PARQUET_MEDIA_TYPES[0]: "parquet",
    PARQUET_MEDIA_TYPES[1]: "parquet",
    "application/vnd.apache.arrow.stream": "arrow",
}
"""Media types the SQL endpoint answers in, and the format of each."""

MAX_QUERY_BYTES = 1024 * 1024
_TEXT_TYPES = ("text/plain", "application/sql")
_CHUNK_BYTES = 1024 * 1024
_ENCODER = msgspec.json.Encoder(decimal_format="number")


class _JsonBody(msgspec.Struct):
    query: str | None = None
    start: str | None = None
    end: str | None = None
    since: str | None = None


def _media_type(request: Request[Any, Any, Any]) -> str:
    """The first media type of ``Accept`` the endpoint answers in (JSON by default)."""
    for part in request.headers.get("accept", "").split(","):
        media_type = part.split(";", 1)[0].strip().lower()
        if media_type in SQL_MEDIA_TYPES:
            return media_type
    return "application/json"


async def _sql_params(request: Request[Any, Any, Any]) -> tuple[str, Params]:
    """The SQL text and the other parameters, wherever the client put them."""
    params = await request_params(request)
    values: dict[str, list[str]] = {}
    content_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if request.method == "POST" and content_type in (*_TEXT_TYPES, "application/json"):
        body = await request.body()
        if len(body) > MAX_QUERY_BYTES:
            raise BadRequestError(f"SQL query too long: more than {MAX_QUERY_BYTES} bytes")
        if content_type == "application/json":
            try:
                fields = msgspec.json.decode(body, type=_JsonBody)
            except msgspec.DecodeError as exc:
                raise BadRequestError(f"could not read the JSON body: {exc}") from exc
            for name in ("query", "start", "end", "since"):
                value = getattr(fields, name)
                if value is not None:
                    values[name] = [value]
        else:
            try:
                values["query"] = [body.decode()]
            except UnicodeDecodeError as exc:
                raise BadRequestError("the SQL query is not UTF-8 text") from exc
    merged = Params({**{n: params.getall(n) for n in ("query", "start", "end", "since")}, **values})
    text = merged.get("query")
    if text is None or not text.strip():
        raise BadRequestError("SQL parse error: the query is empty")
    if len(text.encode()) > MAX_QUERY_BYTES:
        raise BadRequestError(f"SQL query too long: more than {MAX_QUERY_BYTES} bytes")
    return text, merged


def _status(exc: BaseException | None) -> str:
    """The ``status`` label of a query's outcome."""
    if exc is None:
        return "success"
    if isinstance(exc, SqlRefused):
        return "refused"
    if isinstance(exc, ServiceError):
        if exc.status == 504:
            return "timeout"
        return "bad_request" if exc.status < 500 else "failed"
    if isinstance(exc, logql_to_sql.LogQLError):
        return "bad_request"
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return "canceled"
    return "failed"


def _range_object(window: TimeRange) -> dict[str, str]:
    return {"start": rfc3339_nano(window.start_ns), "end": rfc3339_nano(window.end_ns)}


def _stats_object(stats: ScanStats) -> dict[str, Any]:
    return {
        "files": stats.files,
        "fileRows": stats.file_rows,
        "fileBytes": stats.file_bytes,
        "headRows": stats.head_rows,
        "returnedRows": stats.returned,
        "execTime": stats.exec_seconds,
    }


def json_answer(
    _: QueryEngine, service: SqlService, request: SqlRequest, window: TimeRange
) -> tuple[bytes, int]:
    """The JSON body of a query, at most ``max_rows`` rows, and how many (on a query
    thread)."""
    limit = service.limits.max_rows
    result = service.open(dataclasses.replace(request, max_rows=limit))
    try:
        batches, rows, size = [], 0, 0
        while rows <= limit:
            batch = result.next_batch()
            if batch is None:
                break
            batches.append(batch)
            rows += batch.num_rows
            size += batch.nbytes
            # Held whole until encoded: as much as one query's memory, no more.
            if size > service.limits.memory_limit:
                raise too_much_memory(service.limits.memory_limit)
    finally:
        result.close()
    body = json_body(result.columns, batches, limit, result.stats, _range_object(window))
    return body, result.stats.returned


def json_body(
    columns: list[tuple[str, str]],
    batches: list[pa.RecordBatch],
    limit: int,
    stats: ScanStats,
    window: dict[str, str],
) -> bytes:
    """The JSON answer of a result's first batches: at most ``limit`` rows, ``truncated``
    when the batches hold more (``stats.returned`` is set to the rows answered)."""
    values: list[list[Any]] = [[] for _ in columns]
    taken = 0
    for batch in batches:
        batch = batch.slice(0, limit - taken)
        taken += batch.num_rows
        for index, column in enumerate(batch.columns):
            values[index] += json_values(column)
    stats.returned = taken
    envelope: dict[str, Any] = {"status": "success"}
    if stats.warnings:
        envelope["warnings"] = stats.warnings
    envelope["data"] = {
        "columns": [{"name": name, "type": kind} for name, kind in columns],
        "rows": list(zip(*values, strict=True)) if values else [[] for _ in range(taken)],
        "truncated": sum(batch.num_rows for batch in batches) > limit,
        "range": window,
    }
    envelope["stats"] = _stats_object(stats)
    return _ENCODER.encode(envelope) + b"\n"


def _open(_: QueryEngine, service: SqlService, request: SqlRequest) -> SqlResult:
    return service.open(request)


def _next_chunk(_: QueryEngine, result: SqlResult, encoder: StreamEncoder) -> bytes | None:
    """About a megabyte of the body (None once it has all been sent)."""
    if result.done:
        return None
    parts: list[bytes] = []
    size = 0
    while size < _CHUNK_BYTES:
        batch = result.next_batch()
        if batch is None:
            parts.append(encoder.finish())
            result.done = True
            break
        chunk = encoder.write(batch)
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


async def _streamed(
    rt: Runtime, result: SqlResult, encoder: StreamEncoder, record: Any
) -> AsyncIterator[bytes]:
    """The body, read and encoded on the query threads; the query stops (interrupted)
    when the client goes away."""
    pending: asyncio.Future[bytes | None] | None = None
    outcome: BaseException | None = None
    try:
        while True:
            pending = asyncio.ensure_future(rt.engine.call(_next_chunk, result, encoder))
            chunk = await asyncio.shield(pending)
            pending = None
            if chunk is None:
                break
            if chunk:
                yield chunk
    except BaseException as exc:
        outcome = exc
        raise
    finally:
        if pending is not None and not pending.done():
            result.interrupt()
            pending.add_done_callback(lambda _: result.close())
        else:
            result.close()
        record(outcome, result.stats.returned)


async def _run_sql(request: Request[Any, Any, Any]) -> Response[Any]:
    rt = runtime(request)
    started = time.monotonic()
    tenants: tuple[str, ...] = ()
    text = ""
    media_type = _media_type(request)
    result_format = SQL_MEDIA_TYPES[media_type]
    service = rt.sql
    if service is None:
        raise ServiceUnavailableError("SQL is not served by this instance")

    def record(outcome: BaseException | None, rows: int) -> None:
        service.metrics.record(
            tenants=tenants,
            status=_status(outcome),
            seconds=time.monotonic() - started,
            rows=rows,
            result_format=result_format,
            query=text,
        )

    try:
        tenants = rt.resolver.for_query(org_header(request))
        text, params = await _sql_params(request)
        limits = rt.config.limits_config
        window = range_params(params, max_length_ns=int(limits.max_query_length * 1e9))
        rt.require_ready()
        sql_request = SqlRequest(
            tenants, text, window.start_ns, window.end_ns, started + service.limits.timeout_seconds
        )
        if result_format == "json":
            body, rows = await rt.engine.call(json_answer, service, sql_request, window)
        else:
            result = await rt.engine.call(_open, service, sql_request)
    except BaseException as exc:
        record(exc, 0)
        raise
    if result_format == "json":
        record(None, rows)
        return Response(body, status_code=200, media_type=media_type)
    headers = {
        "X-Svc-Range-Start": rfc3339_nano(window.start_ns),
        "X-Svc-Range-End": rfc3339_nano(window.end_ns),
    }
    encoder = stream_encoder(result_format, result.schema)
    return Stream(_streamed(rt, result, encoder, record), media_type=media_type, headers=headers)


@get(api_paths("/sql"))
async def sql_get(request: Request[Any, Any, Any]) -> Response[Any]:
    """Run a read-only SQL query over the tenant's ``logs`` and ``streams`` views."""
    return await _run_sql(request)


@post(api_paths("/sql"), status_code=200)
async def sql_post(request: Request[Any, Any, Any]) -> Response[Any]:
    """The same, with the SQL text as the body or a form or JSON field."""
    return await _run_sql(request)


@get(api_paths("/sql/explain"))
async def sql_explain(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The SQL a LogQL query compiles to, formatted, over the SQL endpoint's views."""
    rt = runtime(request)
    params = await request_params(request)
    expr = logql_to_sql.parse(params.get("query") or "")
    limits = rt.config.limits_config
    window = range_params(params, max_length_ns=int(limits.max_query_length * 1e9))
    limit = limit_param(params, maximum=limits.max_entries_limit_per_query)
    explained = explain_logql(
        expr,
        start_ns=window.start_ns,
        end_ns=window.end_ns,
        limit=limit,
        direction=direction_param(params),
        step_ns=step_param(params, window),
    )
    data = {
        "kind": explained.kind,
        "sql": explained.sql,
        "runnable": explained.runnable,
        "logql": explained.logql,
        "range": _range_object(window),
    }
    body = _ENCODER.encode({"status": "success", "data": data}) + b"\n"
    return Response(body, status_code=200, media_type="application/json")

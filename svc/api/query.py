"""``query_range`` and ``query``: parse, validate parameters, run, encode the envelope."""

from __future__ import annotations

import math
import time
from typing import Any

from litestar import Request, Response, get, post

import logql_to_sql
from logql_to_sql import Grid, ast
from svc.api.common import api_paths, org_header, query_request, request_params, runtime
from svc.api.params import (
    Params,
    direction_param,
    interval_param,
    limit_param,
    range_params,
    step_param,
    timestamp_param,
)
from svc.api.parquet_results import (
    metric_result_parquet,
    parquet_media_type,
    parquet_response,
    streams_parquet,
)
from svc.api.responses import json_response, stats_object, success_envelope
from svc.errors import BadRequestError
from svc.frontend.frontend import QueryRequest
from svc.frontend.limits import check_length, clamp_start
from svc.query.engine import ScanStats
from svc.query.log_queries import LogQueryRequest
from svc.query.metric_queries import (
    MetricResult,
    format_sample_time,
    format_sample_value,
    range_grid,
)
from svc.query.streams import ResultStream
from svc.runtime import Runtime

__all__ = ["query", "query_post", "query_range", "query_range_post"]

_LOG_INSTANT_MESSAGE = (
    "log queries are not supported as an instant query type, please change your query to a "
    "range query type"
)


def parse_query(params: Params) -> ast.Expr:
    """The ``query`` parameter, parsed and validated (400 with the parse error)."""
    return logql_to_sql.parse(params.get("query") or "")


CATEGORIZE_HEADER = "X-Loki-Response-Encoding-Flags"
CATEGORIZE_FLAG = "categorize-labels"


def wants_categories(request: Request[Any, Any, Any]) -> bool:
    """Whether the client asked for categorized labels (``categorize-labels`` flag)."""
    flags = request.headers.get(CATEGORIZE_HEADER, "")
    return CATEGORIZE_FLAG in (flag.strip() for flag in flags.split(","))


def streams_payload(streams: list[ResultStream]) -> list[dict[str, Any]]:
    """``result`` of a ``streams`` response."""
    payload = []
    for stream in streams:
        if stream.categories is None:
            values: list[list[Any]] = [[str(ts), line] for ts, line in stream.values]
        else:
            values = [
                [str(ts), line, category]
                for (ts, line), category in zip(stream.values, stream.categories, strict=True)
            ]
        payload.append({"stream": dict(stream.labels), "values": values})
    return payload


async def _log_query(
    rt: Runtime,
    query: QueryRequest,
    request: LogQueryRequest,
    parquet: str | None = None,
) -> Response[bytes]:
    streams, stats = await rt.frontend.log_query(query, request)
    return _log_response(streams, stats, request.categorize, parquet)


def _log_response(
    streams: list[ResultStream], stats: ScanStats, categorize: bool, parquet: str | None
) -> Response[bytes]:
    if parquet:
        return parquet_response(streams_parquet(streams), parquet)
    data: dict[str, Any] = {"resultType": "streams"}
    if categorize:
        data["encodingFlags"] = [CATEGORIZE_FLAG]
    data["result"] = streams_payload(streams)
    data["stats"] = stats_object(stats)
    return json_response(success_envelope(data, stats))


def _tenant(rt: Runtime, request: Request[Any, Any, Any]) -> tuple[str, ...]:
    """The queried tenants: several only with ``multi_tenant_queries_enabled``."""
    return rt.resolver.for_query(org_header(request))


@get(api_paths("/query_range"))
async def query_range(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Range query: ``streams`` for log queries, ``matrix`` for metric queries."""
    return await _query_range(request)


@post(api_paths("/query_range"), status_code=200)
async def query_range_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Range query with parameters in a urlencoded form body."""
    return await _query_range(request)


async def _query_range(request: Request[Any, Any, Any]) -> Response[bytes]:
    rt = runtime(request)
    tenant = _tenant(rt, request)
    params = await request_params(request)
    expr = parse_query(params)
    limits = rt.frontend.limits_of(tenant)
    window = range_params(params)
    is_log = isinstance(expr, ast.LogQuery)
    limit = limit_param(params, maximum=limits.max_entries_limit_per_query if is_log else 0)
    direction = direction_param(params)
    step = step_param(params, window)
    interval = interval_param(params)
    start = clamp_start(window.start_ns, window.end_ns, limits, time.time_ns())
    check_length(window.start_ns if start is None else start, window.end_ns, limits)
    rt.require_ready()
    parquet = parquet_media_type(request)
    if not isinstance(expr, ast.LogQuery):
        if start is None:
            return _metric_response(_empty_metric(), ScanStats(), instant=False, parquet=parquet)
        grid = range_grid(
            start, window.end_ns, step, align=rt.config.query_range.align_queries_with_step
        )
        async with query_request(request, tenant) as query:
            return await _metric_query(rt, query, expr, grid, instant=False, parquet=parquet)
    categorize = wants_categories(request)
    if start is None:
        return _log_response([], ScanStats(), categorize, parquet)
    log_request = LogQueryRequest(
        expr, start, window.end_ns, limit, direction, interval, categorize=categorize
    )
    async with query_request(request, tenant) as query:
        return await _log_query(rt, query, log_request, parquet)


@get(api_paths("/query"))
async def query(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Instant query: metric queries only."""
    return await _query(request)


@post(api_paths("/query"), status_code=200)
async def query_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Instant query with parameters in a urlencoded form body (how rulers send it)."""
    return await _query(request)


async def _query(request: Request[Any, Any, Any]) -> Response[bytes]:
    rt = runtime(request)
    tenant = _tenant(rt, request)
    params = await request_params(request)
    expr = parse_query(params)
    limit_param(params)
    direction_param(params)
    at = timestamp_param(params, "time", time.time_ns())
    if isinstance(expr, ast.LogQuery):
        raise BadRequestError(_LOG_INSTANT_MESSAGE)
    rt.require_ready()
    parquet = parquet_media_type(request)
    limits = rt.frontend.limits_of(tenant)
    if clamp_start(at, at, limits, time.time_ns()) is None:
        return _metric_response(_empty_metric(), ScanStats(), instant=True, parquet=parquet)
    grid = Grid(start_ns=at, step_ns=1_000_000, steps=1)
    async with query_request(request, tenant) as query:
        return await _metric_query(rt, query, expr, grid, instant=True, parquet=parquet)


async def _metric_query(
    rt: Runtime,
    query: QueryRequest,
    expr: ast.MetricExpr,
    grid: Grid,
    *,
    instant: bool,
    parquet: str | None = None,
) -> Response[bytes]:
    result, stats = await rt.frontend.metric_query(query, expr, grid, instant=instant)
    return _metric_response(result, stats, instant=instant, parquet=parquet)


def _empty_metric() -> MetricResult:
    """The answer of a query entirely older than ``max_query_lookback``."""
    return MetricResult(Grid(start_ns=0, step_ns=1, steps=0), [], False, None)


def _metric_response(
    result: MetricResult, stats: ScanStats, *, instant: bool, parquet: str | None
) -> Response[bytes]:
    if parquet:
        return parquet_response(metric_result_parquet(result), parquet)
    kind, payload = metric_payload(result, instant=instant)
    data = {"resultType": kind, "result": payload, "stats": stats_object(stats)}
    return json_response(success_envelope(data, stats))


def metric_payload(result: MetricResult, *, instant: bool) -> tuple[str, Any]:
    """``(resultType, result)`` of a metric query: matrix, vector or scalar."""
    grid = result.grid

    def at(k: int) -> int | float:
        return format_sample_time(grid.start_ns + k * grid.step_ns)

    if instant and result.scalar:
        points = result.series[0].points if result.series else [(0, math.nan)]
        k, value = points[-1]
        return "scalar", [
            (grid.start_ns + k * grid.step_ns) // 1_000_000,
            format_sample_value(value),
        ]
    if instant:
        return "vector", [
            {"metric": dict(s.labels), "value": [at(k), format_sample_value(v)]}
            for s in result.series
            for k, v in s.points
        ]
    return "matrix", [
        {
            "metric": dict(s.labels),
            "values": [[at(k), format_sample_value(v)] for k, v in s.points],
        }
        for s in result.series
    ]

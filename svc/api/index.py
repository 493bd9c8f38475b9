"""``index/stats``, ``index/volume`` and ``index/volume_range``.

Parameters are validated in the reference's order: the range-query (or instant-query)
parameters first, then ``aggregateBy``, then the selector; ``volume_enabled: false``
answers 404 ``not found`` once the parameters are valid.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post

import logql_to_sql
from logql_to_sql import ast
from svc.api.common import api_paths, org_header, query_request, request_params, runtime
from svc.api.params import (
    Params,
    TimeRange,
    direction_param,
    interval_param,
    limit_param,
    range_params,
    step_param,
    timestamp_param,
)
from svc.api.responses import json_response, stats_object
from svc.errors import BadRequestError, NotFoundError
from svc.query.engine import ScanStats
from svc.query.index_stats import IndexStats, index_stats
from svc.query.volume import VolumeRequest, VolumeResult, run_volume
from svc.runtime import Runtime

__all__ = [
    "index_stats_get",
    "index_stats_post",
    "volume_get",
    "volume_post",
    "volume_range_get",
    "volume_range_post",
]

MATCH_ANY = "{}"
DEFAULT_VOLUME_LIMIT = 100
_ONLY_MATCHERS = "only label matchers are supported"


def parse_matchers(text: str | None) -> tuple[ast.Matcher, ...]:
    """The matchers of a stream selector; ``{}`` (every stream) is accepted as is."""
    text = text or ""
    if text.strip() == MATCH_ANY:
        return ()
    expr = logql_to_sql.parse(text)
    if not isinstance(expr, ast.LogQuery) or expr.stages:
        raise BadRequestError(_ONLY_MATCHERS)
    return expr.selector.matchers


def _tenants(rt: Runtime, request: Request[Any, Any, Any]) -> tuple[str, ...]:
    return rt.resolver.for_query(org_header(request))


def _range_query_params(params: Params, *, limit: bool = True) -> tuple[TimeRange, int]:
    """What the reference's range-query parsing validates; returns the window and step."""
    window = range_params(params)
    if limit:
        limit_param(params)
    direction_param(params)
    step = step_param(params, window)
    interval_param(params)
    return window, step


# index/stats ---------------------------------------------------------------------------


async def _index_stats(request: Request[Any, Any, Any]) -> Response[bytes]:
    rt = runtime(request)
    tenants = _tenants(rt, request)
    params = await request_params(request)
    window, _ = _range_query_params(params)
    matchers = parse_matchers(params.get("query"))
    rt.require_ready()
    total = IndexStats(0, 0, 0, 0)
    async with query_request(request, tenants) as query:
        found_each = [
            await query.run(
                index_stats, tenant, matchers, query.floored(window.start_ns), window.end_ns
            )
            for tenant in tenants
        ]
    for found in found_each:
        total = IndexStats(
            total.streams + found.streams,
            total.chunks + found.chunks,
            total.entries + found.entries,
            total.bytes + found.bytes,
        )
    return json_response(
        {
            "streams": total.streams,
            "chunks": total.chunks,
            "bytes": total.bytes,
            "entries": total.entries,
        }
    )


@get(api_paths("/index/stats"))
async def index_stats_get(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Streams, chunks, entries and bytes of the streams matching ``query``."""
    return await _index_stats(request)


@post(api_paths("/index/stats"), status_code=200)
async def index_stats_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Index stats with parameters in a urlencoded form body."""
    return await _index_stats(request)


# index/volume and index/volume_range ---------------------------------------------------


def _aggregate_by_series(params: Params) -> bool:
    value = params.get("aggregateBy")
    if value is None or value == "series":
        return True
    if value == "labels":
        return False
    raise BadRequestError("invalid aggregation option")


def _target_labels(params: Params) -> tuple[str, ...]:
    text = params.get("targetLabels")
    return () if text is None else tuple(text.split(","))


async def _volume(request: Request[Any, Any, Any], *, ranged: bool) -> Response[bytes]:
    rt = runtime(request)
    tenants = _tenants(rt, request)
    params = await request_params(request)
    limit = limit_param(params, default=DEFAULT_VOLUME_LIMIT, zero_is_default=True)
    window: TimeRange | None = None
    step = 0
    if ranged:
        window, step = _range_query_params(params, limit=False)
    else:
        direction_param(params)
        timestamp_param(params, "time", 0)
    by_series = _aggregate_by_series(params)
    if window is None:
        window = range_params(params)
    if not rt.frontend.limits_of(tenants).volume_enabled:
        raise NotFoundError("not found")
    matchers = parse_matchers(params.get("query"))
    targets = _target_labels(params)
    rt.require_ready()
    async with query_request(request, tenants) as query:
        volume_request = VolumeRequest(
            matchers=matchers,
            start_ns=query.floored(window.start_ns),
            end_ns=window.end_ns,
            limit=limit,
            step_ns=step,
            target_labels=targets,
            aggregate_by_series=by_series,
        )
        result = await query.run(run_volume, tenants, volume_request)
    return json_response(volume_payload(result))


def _seconds(ms: int) -> int | float:
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


def volume_payload(result: VolumeResult) -> dict[str, Any]:
    """The Prometheus-style envelope of a volume result."""
    if result.result_type == "vector":
        items: list[dict[str, Any]] = [
            {
                "metric": dict(s.labels),
                "value": [_seconds(s.samples[0][0]), str(s.samples[0][1])],
            }
            for s in result.series
        ]
    else:
        items = [
            {
                "metric": dict(s.labels),
                "values": [[_seconds(ms), str(value)] for ms, value in s.samples],
            }
            for s in result.series
        ]
    return {
        "status": "success",
        "data": {
            "resultType": result.result_type,
            "result": items,
            "stats": stats_object(ScanStats()),
        },
    }


@get(api_paths("/index/volume"))
async def volume_get(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Bytes per label set over the whole range, as a vector."""
    return await _volume(request, ranged=False)


@post(api_paths("/index/volume"), status_code=200)
async def volume_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Volume with parameters in a urlencoded form body."""
    return await _volume(request, ranged=False)


@get(api_paths("/index/volume_range"))
async def volume_range_get(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Bytes per label set and step, as a matrix."""
    return await _volume(request, ranged=True)


@post(api_paths("/index/volume_range"), status_code=200)
async def volume_range_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Volume range with parameters in a urlencoded form body."""
    return await _volume(request, ranged=True)

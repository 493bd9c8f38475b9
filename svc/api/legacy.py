"""The deprecated ``/api/prom/...`` read endpoints, in the legacy shapes the reference kept.

* ``/api/prom/query``: a log range query; ``{"streams": [{"labels": "{...}", "entries":
  [{"ts": "<RFC 3339 nano>", "line": "..."}]}], "stats": {...}}``; metric queries are
  rejected; ``regexp`` adds a ``|~`` line filter to the selector.
* ``/api/prom/label`` and ``/api/prom/label/<name>/values``: ``{"values": [...]}``
  (nothing when empty).
* ``/api/prom/series`` answers as its v1 twin (see ``labels.py``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from litestar import Request, Response, get
from litestar.params import FromPath

import logql_to_sql
from logql_to_sql import ast
from svc.api.common import org_header, query_request, request_params, runtime
from svc.api.labels import LABELS_DEFAULT_SINCE_NS
from svc.api.params import (
    Params,
    direction_param,
    interval_param,
    limit_param,
    range_params,
    step_param,
)
from svc.api.responses import json_response, stats_object
from svc.errors import BadRequestError
from svc.frontend.limits import check_length, clamp_start
from svc.ingest.labels import go_quote
from svc.query.engine import ScanStats
from svc.query.log_queries import LogQueryRequest
from svc.query.series import label_names, label_values
from svc.query.streams import ResultStream

__all__ = [
    "legacy_label_values",
    "legacy_labels",
    "legacy_query",
    "legacy_query_text",
    "rfc3339_nano",
]

LEGACY_ONLY_STREAMS = "legacy endpoints only support streams result type"


def rfc3339_nano(ts_ns: int) -> str:
    """Go's RFC3339Nano in UTC: ``2019-09-13T18:32:22.380001319Z``, trailing zeros cut."""
    seconds, nanos = divmod(ts_ns, 1_000_000_000)
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if nanos:
        text += "." + f"{nanos:09d}".rstrip("0")
    return text + "Z"


def legacy_query_text(params: Params) -> str:
    """``query``, with ``regexp`` (when given) appended as a ``|~`` line filter."""
    text = params.get("query") or ""
    regexp = params.get("regexp")
    if regexp is None:
        return text
    expr = logql_to_sql.parse(text)
    if not isinstance(expr, ast.LogQuery):
        raise BadRequestError(LEGACY_ONLY_STREAMS)
    return f"{logql_to_sql.to_text(expr)} |~ {go_quote(regexp)}"


def legacy_streams(streams: list[ResultStream]) -> list[dict[str, Any]]:
    """Streams in the legacy shape: a label string and ``{ts, line}`` entries."""
    return [
        {
            "labels": stream.key,
            "entries": [{"ts": rfc3339_nano(ts), "line": line} for ts, line in stream.values],
        }
        for stream in streams
    ]


@get("/api/prom/query")
async def legacy_query(request: Request[Any, Any, Any]) -> Response[bytes]:
    """A log range query answered in the legacy shape."""
    rt = runtime(request)
    tenants = rt.resolver.for_query(org_header(request))
    if len(tenants) > 1:
        raise BadRequestError("multi-tenant queries are not supported by this endpoint yet")
    params = await request_params(request)
    limits = rt.frontend.limits_of(tenants)
    window = range_params(params)
    limit = limit_param(params, maximum=limits.max_entries_limit_per_query)
    direction = direction_param(params)
    step_param(params, window)
    interval = interval_param(params)
    expr = logql_to_sql.parse(legacy_query_text(params))
    if not isinstance(expr, ast.LogQuery):
        raise BadRequestError(LEGACY_ONLY_STREAMS)
    start = clamp_start(window.start_ns, window.end_ns, limits, time.time_ns())
    check_length(window.start_ns if start is None else start, window.end_ns, limits)
    rt.require_ready()
    if start is None:
        return json_response({"streams": legacy_streams([]), "stats": stats_object(ScanStats())})
    query = LogQueryRequest(expr, start, window.end_ns, limit, direction, interval)
    async with query_request(request, tenants) as scheduled:
        streams, stats = await rt.frontend.log_query(scheduled, query)
    return json_response({"streams": legacy_streams(streams), "stats": stats_object(stats)})


async def _label_streams(request: Request[Any, Any, Any]) -> list[Any]:
    rt = runtime(request)
    tenants = rt.resolver.for_query(org_header(request))
    params = await request_params(request)
    window = range_params(params, default_since_ns=LABELS_DEFAULT_SINCE_NS)
    query = params.get("query")
    selectors: list[tuple[ast.Matcher, ...]] = []
    if query:
        expr = logql_to_sql.parse_expr(query)
        if not isinstance(expr, ast.LogQuery) or expr.stages:
            raise BadRequestError(f"only stream selectors are allowed here: {query}")
        selectors.append(expr.selector.matchers)
    rt.require_ready()
    async with query_request(request, tenants) as scheduled:
        by_tenant = await rt.frontend.matching_streams(
            scheduled, selectors, window.start_ns, window.end_ns
        )
    return [info for streams in by_tenant for info in streams]


def _values_response(values: list[str]) -> Response[bytes]:
    return json_response({"values": values} if values else {})


@get("/api/prom/label")
async def legacy_labels(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Label names, legacy shape."""
    return _values_response(label_names(await _label_streams(request)))


@get("/api/prom/label/{name:str}/values")
async def legacy_label_values(
    request: Request[Any, Any, Any], name: FromPath[str]
) -> Response[bytes]:
    """Values of one label, legacy shape."""
    return _values_response(label_values(await _label_streams(request), name))

"""``labels``, ``label/<name>/values`` and ``series``."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath

import logql_to_sql
from logql_to_sql import ast
from svc.api.common import api_paths, org_header, query_request, request_params, runtime
from svc.api.params import TimeRange, range_params
from svc.api.responses import json_response
from svc.errors import BadRequestError
from svc.frontend.limits import check_length, clamp_start
from svc.ingest.labels import label_key
from svc.query.series import label_names, label_values
from svc.query.tenants import TENANT_LABEL
from svc.runtime import Runtime
from svc.storage.streams import StreamInfo

__all__ = ["label_values_handler", "labels", "series", "series_post"]

LABELS_DEFAULT_SINCE_NS = 6 * 3_600 * 1_000_000_000


def _selector(text: str) -> tuple[ast.Matcher, ...]:
    """Matchers of a stream selector; unlike queries, ``{}`` (all streams) is allowed."""
    expr = logql_to_sql.parse_expr(text)
    if not isinstance(expr, ast.LogQuery) or expr.stages:
        raise BadRequestError(f"only stream selectors are allowed here: {text}")
    return expr.selector.matchers


@dataclass
class _Found:
    """The streams a metadata request matched, per tenant (in the header's order)."""

    runtime: Runtime
    tenants: tuple[str, ...]
    by_tenant: list[list[StreamInfo]]

    @property
    def streams(self) -> list[StreamInfo]:
        """Every tenant's streams."""
        return [info for streams in self.by_tenant for info in streams]


async def _streams(request: Request[Any, Any, Any], selectors: list[str] | None = None) -> _Found:
    rt = runtime(request)
    tenants = rt.resolver.for_query(org_header(request))
    params = await request_params(request)
    window: TimeRange = range_params(params, default_since_ns=LABELS_DEFAULT_SINCE_NS)
    if selectors is None:
        text = params.get("query")
        selectors = [text] if text else []
    parsed = [_selector(text) for text in dict.fromkeys(selectors)]
    rt.require_ready()
    async with query_request(request, tenants) as query:
        limits = query.limits
        start = clamp_start(window.start_ns, window.end_ns, limits, time.time_ns())
        check_length(window.start_ns if start is None else start, window.end_ns, limits)
        if start is None:
            return _Found(rt, tenants, [[] for _ in tenants])
        by_tenant = await rt.frontend.matching_streams(query, parsed, start, window.end_ns)
    return _Found(rt, tenants, by_tenant)


def _list_response(values: list[str]) -> Response[bytes]:
    if not values:
        return json_response({"status": "success"})
    return json_response({"status": "success", "data": values})


@get(api_paths("/labels"))
async def labels(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Label names of the streams with data in the window; across tenants, also
    ``__tenant_id__`` (as the reference's multi-tenant querier adds it)."""
    found = await _streams(request)
    names = label_names(found.streams)
    if len(found.tenants) > 1:
        names = sorted({*names, TENANT_LABEL})
    return _list_response(names)


@get(api_paths("/label/{name:str}/values"))
async def label_values_handler(
    request: Request[Any, Any, Any], name: FromPath[str]
) -> Response[bytes]:
    """Values of one label over the streams with data in the window. With multi-tenant
    queries enabled, ``__tenant_id__``'s values are the queried tenants."""
    found = await _streams(request)
    if name == TENANT_LABEL and found.runtime.resolver.multi_tenant_queries:
        return _list_response(sorted(found.tenants))
    return _list_response(label_values(found.streams, name))


async def _series(request: Request[Any, Any, Any]) -> Response[bytes]:
    params = await request_params(request)
    matches = params.getall("match[]") + params.getall("match")
    if not matches:
        raise BadRequestError("at least one match[] argument must be provided")
    found = await _streams(request, matches)
    series: set[tuple[tuple[str, str], ...]] = set()
    for tenant, streams in zip(found.tenants, found.by_tenant, strict=True):
        for info in streams:
            labels = dict(info.labels)
            # Across tenants each series names its tenant (one that already has the label
            # keeps its own value, as the reference's multi-tenant querier does).
            if len(found.tenants) > 1 and not labels.get(TENANT_LABEL):
                labels[TENANT_LABEL] = tenant
            series.add(tuple(sorted(labels.items())))
    ordered = sorted(series, key=lambda labels: label_key(labels).encode())
    return json_response({"status": "success", "data": [dict(labels) for labels in ordered]})


@get(api_paths("/series", "/api/prom/series"))
async def series(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Label sets of the streams matching ``match[]`` selectors."""
    return await _series(request)


@post(api_paths("/series"), status_code=200)
async def series_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Series with selectors in a urlencoded form body."""
    return await _series(request)

"""``GET /patterns``: decode and validate, mine (``svc.query.patterns``), encode."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get

import logql_to_sql
from logql_to_sql import ast
from svc.api.common import api_paths, org_header, query_request, request_params, runtime
from svc.api.params import now_ns, range_params, step_param
from svc.api.responses import json_response
from svc.errors import BadRequestError, NotFoundError
from svc.query.pattern_series import PatternSeries
from svc.query.patterns import PatternsRequest, query_patterns

__all__ = ["patterns"]

ONLY_MATCHERS = "only label matchers are supported"


def selector_matchers(text: str) -> tuple[ast.Matcher, ...]:
    """The matchers of a query that must be a plain stream selector."""
    expr = logql_to_sql.parse(text)
    if not isinstance(expr, ast.LogQuery) or expr.stages:
        raise BadRequestError(ONLY_MATCHERS)
    return expr.selector.matchers


def _payload(series: list[PatternSeries]) -> dict[str, Any]:
    return {
        "status": "success",
        "data": [
            {
                "pattern": s.pattern,
                "level": s.level,
                "samples": [[ts, count] for ts, count in s.samples],
            }
            for s in series
        ],
    }


@get(api_paths("/patterns"))
async def patterns(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Patterns detected in the lines of the matching streams (404 while disabled)."""
    rt = runtime(request)
    tenants = rt.resolver.for_query(org_header(request))
    config = rt.config.pattern_ingester
    if not config.enabled:
        raise NotFoundError("")
    params = await request_params(request)
    window = range_params(params)
    step = step_param(params, window)
    matchers = selector_matchers(params.get("query") or "")
    rt.require_ready()
    async with query_request(request, tenants) as query:
        found = await query.run(
            query_patterns,
            tenants,
            PatternsRequest(matchers, window.start_ns, window.end_ns, step),
            config,
            query.limits,
            now_ns(),
        )
    return json_response(_payload(found))

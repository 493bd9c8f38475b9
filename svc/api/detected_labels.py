"""``detected_labels``: stream labels with their cardinality (Grafana's Logs Drilldown).

``GET`` or ``POST`` (urlencoded form) with ``query`` (optional: label matchers only),
``start``/``end``/``since`` (default: the last hour). The answer is the reference's
``{"detectedLabels": [{"label": "app", "cardinality": 2}]}``, or ``{}`` when no label
qualifies.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post

import logql_to_sql
from logql_to_sql import ast
from svc.api.common import api_paths, org_header, request_params, runtime
from svc.api.params import range_params
from svc.api.responses import json_response
from svc.errors import BadRequestError
from svc.query.detected_labels import detected_labels
from svc.query.series import matching_streams

__all__ = ["detected_labels_get", "detected_labels_post"]

ONLY_MATCHERS = "only label matchers are supported"


def _matchers(text: str) -> list[tuple[ast.Matcher, ...]]:
    """The query's matchers, parsed and validated as the reference's ``ParseMatchers``."""
    if not text:
        return []
    expr = logql_to_sql.parse(text)
    if not isinstance(expr, ast.LogQuery) or expr.stages:
        raise BadRequestError(ONLY_MATCHERS)
    return [expr.selector.matchers]


async def _detected_labels(request: Request[Any, Any, Any]) -> Response[bytes]:
    rt = runtime(request)
    tenants = rt.resolver.for_query(org_header(request))
    params = await request_params(request)
    window = range_params(params)
    selectors = _matchers(params.get("query") or "")
    rt.require_ready()
    streams = []
    for tenant in tenants:
        streams += await rt.engine.call(
            matching_streams, tenant, selectors, window.start_ns, window.end_ns
        )
    found = detected_labels(info.labels for info in streams)
    if not found:
        return json_response({})
    labels = [{"label": name, "cardinality": count} for name, count in found]
    return json_response({"detectedLabels": labels})


@get(api_paths("/detected_labels"))
async def detected_labels_get(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Labels of the streams with data in the window, with their number of values."""
    return await _detected_labels(request)


@post(api_paths("/detected_labels"), status_code=200)
async def detected_labels_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """``detected_labels`` with parameters in a urlencoded form body."""
    return await _detected_labels(request)

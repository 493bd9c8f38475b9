"""``detected_fields`` and ``detected_field/{name}/values``: decode, delegate, encode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath

import logql_to_sql
from gocompat.fmt import go_quote
from logql_to_sql import ast
from svc.api.common import api_paths, org_header, query_request, request_params, runtime
from svc.api.params import Params, range_params, step_param
from svc.api.responses import json_response
from svc.errors import BadRequestError
from svc.query.detected_fields import Entry, detect_fields, field_values, recent_entries
from svc.runtime import Runtime

__all__ = [
    "detected_field_values",
    "detected_field_values_post",
    "detected_fields",
    "detected_fields_post",
]

DEFAULT_LINE_LIMIT = 100
DEFAULT_FIELD_LIMIT = 1000
ONLY_LOG_SELECTOR = "only log selector is supported"


@dataclass(frozen=True)
class _Scan:
    entries: list[Entry]
    limit: int


def _positive_int(params: Params, names: tuple[str, ...], default: int) -> int:
    """The first of ``names`` that is set, as Go's ``strconv.Atoi`` reads it; must be > 0."""
    text = next((found for name in names if (found := params.get(name)) is not None), None)
    if text is None:
        return default
    try:
        if not text.lstrip("+-").isascii() or not text.lstrip("+-").isdigit():
            raise ValueError
        value = int(text)
    except ValueError as exc:
        raise BadRequestError(f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax") from exc
    if not -(2**63) <= value < 2**63:
        raise BadRequestError(f"strconv.Atoi: parsing {go_quote(text)}: value out of range")
    if value <= 0:
        raise BadRequestError("limit must be a positive value")
    return value


def _log_query(text: str) -> ast.LogQuery:
    expr = logql_to_sql.parse(text)
    if not isinstance(expr, ast.LogQuery):
        raise BadRequestError(ONLY_LOG_SELECTOR)
    return expr


async def _scan(request: Request[Any, Any, Any]) -> _Scan:
    rt: Runtime = runtime(request)
    tenants = rt.resolver.for_query(org_header(request))
    params = await request_params(request)
    window = range_params(params)
    line_limit = _positive_int(params, ("line_limit",), DEFAULT_LINE_LIMIT)
    limit = _positive_int(params, ("limit", "field_limit"), DEFAULT_FIELD_LIMIT)
    step_param(params, window)
    query = _log_query(params.get("query") or "")
    rt.require_ready()
    async with query_request(request, tenants) as scheduled:
        entries = await scheduled.run(
            recent_entries, tenants, query, window.start_ns, window.end_ns, line_limit
        )
    return _Scan(entries, limit)


def _with_limit(body: dict[str, Any], found: list[Any], limit: int) -> dict[str, Any]:
    """The reference sets ``limit`` only when something was found ("otherwise all they get
    is the field limit"), placed as its response struct orders it: fields, limit, values."""
    if not found:
        return body
    ordered = {k: v for k, v in body.items() if k == "fields"}
    return {**ordered, "limit": limit, **{k: v for k, v in body.items() if k != "fields"}}


async def _fields(request: Request[Any, Any, Any]) -> Response[bytes]:
    scan = await _scan(request)
    fields = [f.record() for f in detect_fields(scan.entries, scan.limit)]
    return json_response(_with_limit({"fields": fields}, fields, scan.limit))


async def _values(request: Request[Any, Any, Any], name: FromPath[str]) -> Response[bytes]:
    scan = await _scan(request)
    values = field_values(scan.entries, name, scan.limit)
    return json_response(_with_limit({"values": values}, values, scan.limit))


@get(api_paths("/detected_fields"))
async def detected_fields(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Fields found in the newest ``line_limit`` lines of the query."""
    return await _fields(request)


@post(api_paths("/detected_fields"), status_code=200)
async def detected_fields_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """``detected_fields`` with parameters in a urlencoded form body."""
    return await _fields(request)


@get(api_paths("/detected_field/{name:str}/values"))
async def detected_field_values(
    request: Request[Any, Any, Any], name: FromPath[str]
) -> Response[bytes]:
    """Distinct values of one detected field."""
    return await _values(request, name)


@post(api_paths("/detected_field/{name:str}/values"), status_code=200)
async def detected_field_values_post(
    request: Request[Any, Any, Any], name: FromPath[str]
) -> Response[bytes]:
    """``detected_field/{name}/values`` with parameters in a urlencoded form body."""
    return await _values(request, name)

"""``/ready``, build info and ``format_query``."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post

import logql_to_sql
from logql_to_sql import LogQLError
from svc.api.common import api_paths, request_params, runtime
from svc.api.responses import json_response
from svc.version import VERSION, build_info

__all__ = ["VERSION", "buildinfo", "format_query_get", "format_query_post", "ready"]


@get("/ready")
async def ready(request: Request[Any, Any, Any]) -> Response[bytes]:
    """200 ``ready`` when every service runs and the ingester is ready; 503 (SPEC 7.3)."""
    rt = runtime(request)
    if rt.shutdown_requested.is_set():
        return _http_error("Application is stopping", 503)
    if not rt.services.healthy():
        lines = "".join(f"{state}: {count}\n" for state, count in rt.services.by_state())
        return _http_error("Some services are not Running:\n" + lines, 503)
    reason = rt.ingester.not_ready_reason() if rt.writes else None
    if reason is not None:
        return _http_error(f"Ingester not ready: {reason}", 503)
    return _http_error("ready", 200)


def _http_error(message: str, status: int) -> Response[bytes]:
    # Go's http.Error: the text plus a newline, and nosniff.
    return Response(
        (message + "\n").encode(),
        status_code=status,
        media_type="text/plain",
        headers={"X-Content-Type-Options": "nosniff"},
    )


@get(api_paths("/status/buildinfo"))
async def buildinfo() -> Response[bytes]:
    """Version, revision, branch, build date and user, and the runtime's version."""
    return json_response(build_info())


async def _format_query(request: Request[Any, Any, Any]) -> Response[bytes]:
    params = await request_params(request)
    try:
        formatted = logql_to_sql.format_query(params.get("query") or "")
    except LogQLError as exc:
        return json_response({"status": "invalid-query", "error": str(exc)}, status=400)
    return json_response({"status": "success", "data": formatted})


@get(api_paths("/format_query"))
async def format_query_get(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The query pretty-printed, or its parse error."""
    return await _format_query(request)


@post(api_paths("/format_query"), status_code=200)
async def format_query_post(request: Request[Any, Any, Any]) -> Response[bytes]:
    """format_query with the query as a form value."""
    return await _format_query(request)

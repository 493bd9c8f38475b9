"""Helpers every handler uses: the runtime, merged parameters, mount paths."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

from litestar import Request

from svc.api.params import Params
from svc.frontend.frontend import QueryRequest
from svc.runtime import Runtime
from svc.tenancy import ORG_ID_HEADER

__all__ = ["api_paths", "org_header", "query_request", "request_params", "runtime"]

API_PREFIXES = ("/svc/api/v1", "/loki/api/v1")


def api_paths(suffix: str, *legacy: str) -> list[str]:
    """A route under the canonical and the compatibility prefix, plus any legacy paths."""
    return [prefix + suffix for prefix in API_PREFIXES] + list(legacy)


def runtime(request: Request[Any, Any, Any]) -> Runtime:
    """The service runtime the app was built with."""
    found: Runtime = request.app.state.runtime
    return found


def org_header(request: Request[Any, Any, Any]) -> str | None:
    """The raw ``X-Scope-OrgID`` value."""
    return request.headers.get(ORG_ID_HEADER)


async def request_params(request: Request[Any, Any, Any]) -> Params:
    """Query-string parameters, plus urlencoded form values on POST."""
    values: dict[str, list[str]] = {}
    for name, value in request.query_params.multi_items():
        values.setdefault(name, []).append(value)
    content_type = request.headers.get("content-type", "")
    if request.method == "POST" and content_type.startswith("application/x-www-form-urlencoded"):
        form = await request.form()
        for name, value in form.multi_items():
            values.setdefault(name, []).append(str(value))
    return Params(values)


def query_request(
    request: Request[Any, Any, Any], tenants: tuple[str, ...]
) -> AbstractAsyncContextManager[QueryRequest]:
    """The request's way through the query frontend: its limits, queue, deadline, and a
    watch on the client (a client that goes away cancels its queries)."""
    return runtime(request).frontend.request(request.headers, request.receive, tenants)

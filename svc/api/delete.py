"""The log deletion API and cache generation numbers (SPEC 4.6, DELETION.md 1-4 and 7).

Served only by targets that run the compactor, and only with ``retention_enabled`` (the
routes do not exist otherwise: 404). Parameters come from the URL only. Order of checks:
tenant (401), the tenant's deletion mode (403 ``deletion is not available for this
tenant``), then the handler. Errors are Go ``http.Error`` texts (trailing newline,
``nosniff``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from litestar import Request, Response, delete, get, post, route
from litestar.handlers import HTTPRouteHandler

from gocompat import jsonesc
from svc.api.common import api_paths, org_header, runtime
from svc.api.ops import error_text
from svc.compactor.config import COMPACTOR_TARGETS
from svc.compactor.deletions import Deletions
from svc.compactor.limits import DISABLED, MODES, deletion_mode, deletion_served
from svc.compactor.request_store import DeleteRequest
from svc.config import Config
from svc.errors import ServiceError

__all__ = ["deletion_routes"]

_DELETION_OFF = "deletion is not available for this tenant"
_UNKNOWN_MODE = "unknown deletion mode: must be one of disabled|filter-only|filter-and-delete"


def _tenant(request: Request[Any, Any, Any]) -> str | Response[bytes]:
    """The request's tenant, or the answer when deletion is not available to it."""
    rt = runtime(request)
    tenant = rt.resolver.single(org_header(request))
    mode = deletion_mode(rt.limits_for(tenant))
    if mode == DISABLED:
        return error_text(_DELETION_OFF, 403)
    if mode not in MODES:
        return error_text(_UNKNOWN_MODE, 400)
    return tenant


def _go_json(payload: Any) -> bytes:
    """JSON as Go's encoder writes it, with its trailing newline."""
    return jsonesc.encode(payload) + b"\n"


def _deletions(request: Request[Any, Any, Any]) -> Deletions:
    found = runtime(request).deletions
    assert found is not None, "deletion routes exist only with retention enabled"
    return found


def _failed(exc: ServiceError) -> Response[bytes]:
    return error_text(exc.message, exc.status)


@route(api_paths("/delete"), http_method=["POST", "PUT"], status_code=200)
async def create_delete_request(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Store a delete request; 204 with ``X-Delete-Request-ID``."""
    tenant = _tenant(request)
    if isinstance(tenant, Response):
        return tenant
    params = request.query_params
    deletions = _deletions(request)
    try:
        identifier = await asyncio.to_thread(
            deletions.create,
            tenant,
            params.get("query"),
            params.get("start"),
            params.get("end"),
            params.get("max_interval"),
        )
    except ServiceError as exc:
        return _failed(exc)
    except Exception as exc:  # the store could not write: the reference answers its error
        return error_text(str(exc), 500)
    return Response(b"", status_code=204, headers={"X-Delete-Request-ID": identifier})


@get(api_paths("/delete"))
async def list_delete_requests(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The tenant's requests as a JSON array, oldest first (a time error is written
    first, with status 400, and the list still follows: the reference's quirk)."""
    tenant = _tenant(request)
    if isinstance(tenant, Response):
        return tenant
    params = request.query_params
    listing = await asyncio.to_thread(
        _deletions(request).listing,
        tenant,
        params.get("start"),
        params.get("end"),
        params.get("for_querytime_filtering"),
    )
    body = _go_json([_record(r) for r in listing.requests])
    if listing.errors:
        errors = "".join(f"{error}\n" for error in listing.errors).encode()
        return Response(
            errors + body,
            status_code=400,
            media_type="text/plain",
            headers={"X-Content-Type-Options": "nosniff"},
        )
    return Response(body, media_type="application/json")


@delete(api_paths("/delete"), status_code=200)
async def cancel_delete_request(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Cancel a request (``request_id``, ``force``)."""
    tenant = _tenant(request)
    if isinstance(tenant, Response):
        return tenant
    params = request.query_params
    try:
        await asyncio.to_thread(
            _deletions(request).cancel,
            tenant,
            params.get("request_id") or "",
            params.get("force") == "true",
        )
    except ServiceError as exc:
        return _failed(exc)
    except Exception as exc:  # the store could not remove it
        return error_text(str(exc), 500)
    return Response(b"", status_code=204)


@get(api_paths("/cache/generation_numbers"))
async def cache_generation_numbers(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The tenant's cache generation number, as a JSON string."""
    tenant = _tenant(request)
    if isinstance(tenant, Response):
        return tenant
    number = await asyncio.to_thread(runtime(request).cache_generations.get, tenant)
    return Response(_go_json(number), media_type="text/plain")


@post(api_paths("/cache/generation_numbers/increase"), status_code=200)
async def increase_cache_generation(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Raise the tenant's cache generation number: cached query results become stale."""
    tenant = _tenant(request)
    if isinstance(tenant, Response):
        return tenant
    await asyncio.to_thread(runtime(request).cache_generations.increase, tenant)
    return Response(b"", status_code=204)


def _seconds(ms: int) -> msgspec.Raw:
    """Unix ms as the reference's ``model.Time`` JSON: seconds with up to 3 decimals."""
    sign = "-" if ms < 0 else ""
    whole, fraction = divmod(abs(ms), 1000)
    text = f"{sign}{whole}" + (f".{fraction:03d}".rstrip("0") if fraction else "")
    return msgspec.Raw(text.encode())


def _record(found: DeleteRequest) -> dict[str, Any]:
    return {
        "request_id": found.request_id,
        "start_time": _seconds(found.start_ms),
        "end_time": _seconds(found.end_ms),
        "query": found.query,
        "status": found.status,
        "created_at": _seconds(found.created_ms),
        "user_id": "",
    }


DELETION_ROUTES: list[HTTPRouteHandler] = [
    create_delete_request,
    list_delete_requests,
    cancel_delete_request,
    cache_generation_numbers,
    increase_cache_generation,
]


def deletion_routes(config: Config) -> list[HTTPRouteHandler]:
    """The deletion routes, when this instance serves them (DELETION.md 1, SPEC 4.1)."""
    if config.target in COMPACTOR_TARGETS and deletion_served(config):
        return list(DELETION_ROUTES)
    return []

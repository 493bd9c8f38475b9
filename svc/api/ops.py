"""Operational endpoints (SPEC 4.4): services, log level, metrics, config, flush, shutdown
and index sync (cache generation numbers are with the deletion API, ``delete.py``).

Bodies follow the reference: ``http.Error``-style texts end with a newline, success of
flush and shutdown is 204 with no body. Which routes an instance serves depends on its
``target`` (SPEC 4.1), see :func:`ops_routes`.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

import yaml
from litestar import Request, Response, get, post, route
from litestar.background_tasks import BackgroundTask
from litestar.handlers import HTTPRouteHandler
from litestar.response import Stream

import logql_to_sql
from logql_to_sql import ast
from svc.api.common import org_header, request_params, runtime
from svc.api.responses import json_response
from svc.api.ring import RING_ROUTES
from svc.config import config_to_dict
from svc.errors import BadRequestError
from svc.logging_setup import LEVELS, current_level, set_level
from svc.ops.config_view import config_yaml
from svc.ops.metrics import CONTENT_TYPE
from svc.ops.services import State
from svc.runtime import Runtime
from svc.storage.remote_heads import HEAD_PATH
from svc.storage.remote_tails import TAIL_PATH, RowFeed
from svc.targets import runs

__all__ = ["error_text", "ops_routes"]

_TEXT = "text/plain"  # litestar appends "; charset=utf-8"
_SHUTDOWN_REFUSED = "Ingester is stopping or already stopped."
_TRUE = ("1", "t", "true")
_FALSE = ("0", "f", "false")


def error_text(message: str, status: int) -> Response[bytes]:
    """A plain-text answer as Go's ``http.Error`` writes it (trailing newline, nosniff)."""
    return Response(
        (message + "\n").encode(),
        status_code=status,
        media_type=_TEXT,
        headers={"X-Content-Type-Options": "nosniff"},
    )


def _no_content(background: BackgroundTask | None = None) -> Response[bytes]:
    return Response(b"", status_code=204, background=background)


def _flag(value: str | None, default: bool) -> bool:
    """A boolean URL parameter; unparsable values fall back to the default, as upstream."""
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return default


# status ----------------------------------------------------------------------------------


@get("/services")
async def services(request: Request[Any, Any, Any]) -> Response[bytes]:
    """``<service> => <State>`` per internal service (with the reason when degraded)."""
    lines = [f"{s.name} => {s.describe()}\n" for s in runtime(request).services]
    return Response("".join(lines).encode(), media_type=_TEXT)


@route("/log_level", http_method=["GET", "POST"], status_code=200)
async def log_level(request: Request[Any, Any, Any]) -> Response[bytes]:
    """GET: the current level; POST: set ``log_level`` (query or form value)."""
    if request.method == "GET":
        return json_response({"message": f"Current log level is {current_level()}"})
    params = await request_params(request)
    level = params.get("log_level") or ""
    if level not in LEVELS:
        return json_response({"message": f"Invalid log level: {level}"}, status=400)
    set_level(level)
    runtime(request).config.server.log_level = level
    return json_response({"message": f"Log level set to {level}", "status": "success"})


@get("/metrics")
async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Every metric in the Prometheus text format."""
    rt = runtime(request)
    body = await asyncio.to_thread(rt.metrics.exposition)
    return Response(body, media_type=CONTENT_TYPE)


@get("/config")
async def config(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The configuration as YAML; ``mode=diffs`` or ``mode=defaults``."""
    text = config_yaml(runtime(request).config, request.query_params.get("mode"))
    return Response(text.encode(), media_type=_TEXT)


@get("/runtime_config")
async def runtime_config(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The loaded runtime overrides as YAML; ``mode=diff``: each tenant's differences from
    ``limits_config``."""
    text = runtime(request).overrides.runtime_yaml(request.query_params.get("mode"))
    return Response(text.encode(), media_type=_TEXT)


@get("/config/tenant/v1/limits")
async def tenant_limits(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The limits in force for the request's tenant, as YAML."""
    rt = runtime(request)
    tenant = rt.resolver.single(org_header(request))
    text = yaml.safe_dump(
        config_to_dict(rt.limits_for(tenant)), sort_keys=False, default_flow_style=False
    )
    return Response(text.encode(), media_type=_TEXT)


# flush -----------------------------------------------------------------------------------


async def _flush(rt: Runtime) -> Response[bytes]:
    if rt.services["store"].state is not State.RUNNING:
        return error_text(_SHUTDOWN_REFUSED, 503)
    await asyncio.to_thread(rt.store.flush)
    return _no_content()


@route("/flush", http_method=["GET", "POST"], status_code=200)
async def flush(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Flush the whole head to Parquet now (synchronous here)."""
    return await _flush(runtime(request))


def _check_selector(text: str) -> None:
    expr = logql_to_sql.parse(text)
    if not isinstance(expr, ast.LogQuery) or expr.stages:
        raise BadRequestError(f"invalid streams selector: {text}: only a stream selector")


@post("/flush/tenant", status_code=200)
async def flush_tenant(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Flush the tenant's head data (with ``streams``: the matching streams), synchronously.

    The WAL is shared by all tenants, so the whole head is flushed: the tenant's data is
    durable in Parquet and the catalog when the answer comes.
    """
    rt = runtime(request)
    rt.resolver.single(org_header(request))
    params = await request_params(request)
    streams = params.get("streams")
    if streams:
        _check_selector(streams)
    return await _flush(rt)


# ingester shutdown -----------------------------------------------------------------------


@route("/ingester/prepare_shutdown", http_method=["GET", "POST", "DELETE"], status_code=200)
async def prepare_shutdown(request: Request[Any, Any, Any]) -> Response[bytes]:
    """GET ``set``/``unset``; POST sets the flag; DELETE unsets it (SPEC 3.2)."""
    ingester = runtime(request).ingester
    if request.method == "GET":
        text = "set" if ingester.prepared else "unset"
        return Response(text.encode(), media_type=_TEXT)
    if request.method == "POST":
        await asyncio.to_thread(ingester.prepare_shutdown)
    else:
        await asyncio.to_thread(ingester.unprepare_shutdown)
    return _no_content()


def _terminate_process() -> None:
    # The same path as an operator's SIGTERM: uvicorn shuts down gracefully, the app's
    # shutdown hook stops the remaining services, the process exits 0.
    os.kill(os.getpid(), signal.SIGTERM)


@route("/ingester/shutdown", http_method=["GET", "POST"], status_code=200)
async def shutdown(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Stop the ingester (``flush``, ``delete_ring_tokens``, ``terminate``)."""
    rt = runtime(request)
    if rt.ingester.service.state is not State.RUNNING:
        return Response(_SHUTDOWN_REFUSED.encode(), status_code=503, media_type=_TEXT)
    query = request.query_params
    do_flush = _flag(query.get("flush"), True)
    terminate = _flag(query.get("terminate"), True)
    # delete_ring_tokens: no token file is ever written (the ring is in memory).
    _flag(query.get("delete_ring_tokens"), False)
    await asyncio.to_thread(rt.ingester.shutdown, flush=do_flush)
    failure = rt.ingester.service.failure
    if failure is not None:
        return Response(str(failure).encode(), status_code=500, media_type=_TEXT)
    return _no_content(BackgroundTask(_terminate_process) if terminate else None)


@post("/ingester/flush_shutdown", status_code=200)
async def flush_shutdown(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Deprecated: flush and stop the ingester, the process keeps running (SPEC 9)."""
    rt = runtime(request)
    if rt.ingester.service.state is State.RUNNING:
        await asyncio.to_thread(rt.ingester.shutdown, flush=True)
    return _no_content()


_INT64_MAX = (1 << 63) - 1


@get(HEAD_PATH)
async def unflushed_head(request: Request[Any, Any, Any]) -> Response[bytes]:
    """This writer's unflushed rows of one tenant in ``[start, end)`` (nanoseconds), for the
    readers of a shared catalog (``svc.storage.remote_heads``); ``rows=0``: only their
    streams."""
    rt = runtime(request)
    tenant = rt.resolver.single(org_header(request))
    try:
        start, end = int(request.query_params["start"]), int(request.query_params["end"])
    except (KeyError, ValueError):
        start = end = _INT64_MAX + 1
    if not -_INT64_MAX - 1 <= min(start, end) <= max(start, end) <= _INT64_MAX:
        raise BadRequestError("start and end must be integer Unix nanoseconds")
    rows = request.query_params.get("rows", "1") != "0"
    body = await asyncio.to_thread(rt.store.head_snapshot, tenant, start, end, rows=rows)
    return Response(body, media_type="application/vnd.apache.arrow.stream")


_ROW_FEED = "row_feed"


@get(TAIL_PATH)
async def row_feed(request: Request[Any, Any, Any]) -> Stream:
    """This writer's pushes of one tenant from now on, as a stream of frames kept open,
    for the readers' live tails (``svc.storage.remote_tails``)."""
    rt = runtime(request)
    tenant = rt.resolver.single(org_header(request))
    state = request.app.state
    feed: RowFeed | None = state.get(_ROW_FEED)
    if feed is None:
        feed = state[_ROW_FEED] = RowFeed(rt.store.index.table)
        rt.store.on_rows.append(feed.publish)
    return Stream(feed.frames(tenant, rt.shutdown_requested), media_type="application/octet-stream")


# index gateway ---------------------------------------------------------------------------


@route("/sync-indexes", http_method=["GET", "PUT"], status_code=200)
async def sync_indexes(request: Request[Any, Any, Any]) -> Response[bytes]:
    """PUT starts a sync (202, or 409 while one runs); GET lists each store's status."""
    rt = runtime(request)
    syncer = rt.syncer
    if not syncer.can_sync or rt.services["index-gateway"].state is not State.RUNNING:
        return error_text("index store cannot sync on demand", 503)
    if request.method == "GET":
        return json_response(syncer.status())
    if not syncer.trigger("manual"):
        return error_text("index sync already in progress", 409)
    return Response(b"", status_code=202)


_STATUS_ROUTES = [
    services,
    log_level,
    metrics,
    config,
    runtime_config,
    tenant_limits,
    *RING_ROUTES,
]
_GROUPS: list[tuple[str, list[HTTPRouteHandler]]] = [
    (
        "ingester",
        [
            flush,
            flush_tenant,
            prepare_shutdown,
            shutdown,
            flush_shutdown,
            unflushed_head,
            row_feed,
        ],
    ),
    ("index-gateway", [sync_indexes]),
]


def ops_routes(target: str) -> list[HTTPRouteHandler]:
    """The operational routes an instance running ``target`` exposes (SPEC 4.1)."""
    routes = list(_STATUS_ROUTES)
    for component, handlers in _GROUPS:
        if runs(target, component):
            routes += handlers
    return routes

"""The litestar application: routes, error mapping, start-up and shutdown."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, cast

from litestar import Litestar, Request, Response
from litestar.config.compression import CompressionConfig
from litestar.exceptions import HTTPException
from litestar.types import Middleware

from logql_to_sql import LogQLError
from svc.api.backfill import backfill_upload
from svc.api.compression import AnswerCompression
from svc.api.delete import deletion_routes
from svc.api.detected_fields import (
    detected_field_values,
    detected_field_values_post,
    detected_fields,
    detected_fields_post,
)
from svc.api.detected_labels import detected_labels_get, detected_labels_post
from svc.api.export import export
from svc.api.home import home
from svc.api.index import (
    index_stats_get,
    index_stats_post,
    volume_get,
    volume_post,
    volume_range_get,
    volume_range_post,
)
from svc.api.labels import label_values_handler, labels, series, series_post
from svc.api.legacy import legacy_label_values, legacy_labels, legacy_query
from svc.api.openapi import openapi_json
from svc.api.ops import ops_routes
from svc.api.otlp import otlp_logs
from svc.api.patterns import patterns
from svc.api.prom_rules import PROM_RULES_ROUTES
from svc.api.push import push
from svc.api.query import query, query_post, query_range, query_range_post
from svc.api.request_log import request_log
from svc.api.responses import text_response
from svc.api.rules import RULES_ROUTES
from svc.api.sql import sql_explain, sql_get, sql_post
from svc.api.status import buildinfo, format_query_get, format_query_post, ready
from svc.api.tail import tail
from svc.config import Config
from svc.errors import ServiceError
from svc.runtime import Runtime

__all__ = ["create_app"]

log = logging.getLogger(__name__)

ROUTES = [
    home,
    push,
    otlp_logs,
    query_range,
    query_range_post,
    query,
    query_post,
    labels,
    label_values_handler,
    series,
    series_post,
    ready,
    buildinfo,
    format_query_get,
    format_query_post,
    index_stats_get,
    index_stats_post,
    volume_get,
    volume_post,
    volume_range_get,
    volume_range_post,
    tail,
    legacy_query,
    legacy_labels,
    legacy_label_values,
    patterns,
    detected_fields,
    detected_fields_post,
    detected_field_values,
    detected_field_values_post,
    detected_labels_get,
    detected_labels_post,
    openapi_json,
    sql_get,
    sql_post,
    sql_explain,
    export,
    backfill_upload,
]


COMPRESSION = CompressionConfig(
    backend="gzip",
    minimum_size=1400,
    gzip_compress_level=6,
    middleware_class=AnswerCompression,
)
"""Answers are gzipped for clients that accept it, as the reference's query frontend does
(``frontend.compress_responses``, on by default): from its 1400-byte threshold up, at
Go's default level; Parquet answers, compressed already, are not (``svc/api/compression``)."""

COMMON_ROUTES = [home, ready, buildinfo, format_query_get, format_query_post]
"""What every target serves besides its own routes (SPEC 4.1)."""


def _routes(config: Config, rt: Runtime) -> list[Any]:
    """The routes of an instance: ``-target=ruler`` serves only the ruler's and the common
    ones; the rules APIs need a ruler and ``ruler.enable_api``."""
    routes: list[Any] = list(COMMON_ROUTES if config.target == "ruler" else ROUTES)
    routes += ops_routes(config.target)
    routes += deletion_routes(config)
    if rt.ruler is not None and config.ruler.enable_api:
        routes += [*RULES_ROUTES, *PROM_RULES_ROUTES]
    return routes


def _service_error(_: Request[Any, Any, Any], exc: ServiceError) -> Response[bytes]:
    return text_response(exc.message, exc.status)


def _logql_error(_: Request[Any, Any, Any], exc: LogQLError) -> Response[bytes]:
    return text_response(str(exc), 400)


def _http_error(_: Request[Any, Any, Any], exc: HTTPException) -> Response[bytes]:
    if exc.status_code == 404:
        return text_response("404 page not found\n", 404)
    return text_response(str(exc.detail), exc.status_code)


def _too_deep(request: Request[Any, Any, Any], exc: RecursionError) -> Response[bytes]:
    # A client's input nested past what our recursive parsers and compiler handle
    # (LogQL pipelines, OTLP values): the request's fault, answered as such.
    log.warning("request nested too deeply on %s %s", request.method, request.url.path)
    return text_response("request nested too deeply to process", 400)


def _unexpected_error(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return text_response("internal server error", 500)


def _watch_shutdown_signals(rt: Runtime, delay: float) -> None:
    """Make /ready answer ``Application is stopping`` from the moment SIGTERM/SIGINT arrives.

    The server's own handlers stay in charge of the shutdown; with ``shutdown_delay`` they
    run only after the delay, while the instance still serves and reports not ready.
    """
    if threading.current_thread() is not threading.main_thread():
        return  # test clients run the app off the main thread and own no signals
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)
        if not callable(previous):
            continue

        def handler(
            signum: int,
            frame: FrameType | None,
            previous: Callable[[int, FrameType | None], Any] = previous,
        ) -> None:
            rt.shutdown_requested.set()
            if delay > 0:
                log.info("shutdown requested: waiting %ss before shutting down", delay)
                loop.call_soon_threadsafe(loop.call_later, delay, previous, signum, frame)
            else:
                previous(signum, frame)

        signal.signal(sig, handler)


def create_app(config: Config, runtime: Runtime | None = None) -> Litestar:
    """The HTTP application of one service instance (started and stopped with the app)."""
    rt = runtime or Runtime.from_config(config)

    async def start() -> None:
        _watch_shutdown_signals(rt, config.shutdown_delay)
        rt.start_in_background()

    async def stop() -> None:
        await asyncio.to_thread(rt.stop)

    app = Litestar(
        route_handlers=_routes(config, rt),
        middleware=[
            cast(Middleware, rt.metrics.middleware),
            cast(
                Middleware, request_log(None if config.auth_enabled else rt.resolver.no_auth_tenant)
            ),
        ],
        exception_handlers={
            ServiceError: _service_error,
            LogQLError: _logql_error,
            HTTPException: _http_error,
            RecursionError: _too_deep,
            Exception: _unexpected_error,
        },
        on_startup=[start],
        on_shutdown=[stop],
        request_max_body_size=None,
        compression_config=COMPRESSION,
        openapi_config=None,
        logging_config=None,
    )
    app.state.runtime = rt
    return app

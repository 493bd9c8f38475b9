"""``GET /tail`` over WebSocket (and the deprecated ``/api/prom/tail``, legacy shape).

Invalid requests are refused before the upgrade with a plain-text HTTP answer, as the
reference does. After the upgrade the client first gets the matching history (best
effort, the newest ``limit`` entries since ``start``, oldest first), then every newly
pushed entry the query returns, held back ``delay_for`` seconds. Entries that did not fit
in the client's bounded buffer are reported in ``dropped_entries`` of the next message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

import msgspec
from litestar import WebSocket, websocket
from litestar.types.asgi_types import WebSocketResponseBodyEvent, WebSocketResponseStartEvent

import logql_to_sql
from gocompat import jsonesc
from logql_to_sql import Direction, ast
from svc.api.common import API_PREFIXES
from svc.api.legacy import legacy_query_text, rfc3339_nano
from svc.api.params import Params, limit_param, timestamp_param
from svc.errors import BadRequestError, ServiceError, UnauthorizedError
from svc.model import Labels, label_key
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.query.tail import TailEntry, TailHub, TailSubscription
from svc.runtime import Runtime
from svc.storage.remote_tails import WriterFeeds
from svc.tenancy import ORG_ID_HEADER

__all__ = ["tail"]

log = logging.getLogger(__name__)

MAX_DELAY_SECONDS = 5
DEFAULT_LOOKBACK_NS = 3_600 * 1_000_000_000
MAX_ENTRIES_PER_MESSAGE = 1000
LEGACY_PATH = "/api/prom/tail"
_HUB_KEY = "tail_hub"
_OPEN_KEY = "open_tails"
_ONLY_LOG_SELECTORS = "only log selector is supported"


def _json(payload: Any) -> str:
    return jsonesc.encode(payload).decode()


class TailRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A validated tail request."""

    tenant: str
    query: ast.LogQuery
    limit: int
    start_ns: int
    delay_seconds: int
    legacy: bool


def _delay_for(params: Params) -> int:
    text = params.get("delay_for")
    if text is None:
        return 0
    try:
        delay = int(text)
    except ValueError as exc:
        raise BadRequestError(f'strconv.Atoi: parsing "{text}": invalid syntax') from exc
    # The reference reads it as unsigned: a negative value is as invalid as a large one.
    if delay < 0 or delay > MAX_DELAY_SECONDS:
        raise BadRequestError(f"delay_for can't be greater than {MAX_DELAY_SECONDS}")
    return delay


def parse_tail_request(rt: Runtime, socket: WebSocket[Any, Any, Any]) -> TailRequest:
    """The tail parameters validated in the reference's order, then the one tenant."""
    header = socket.headers.get(ORG_ID_HEADER)
    if rt.resolver.auth_enabled and not header:
        raise UnauthorizedError("no org id")
    values: dict[str, list[str]] = {}
    for name, value in socket.query_params.multi_items():
        values.setdefault(name, []).append(value)
    params = Params(values)
    logql_to_sql.parse(params.get("query") or "")
    expr = logql_to_sql.parse(legacy_query_text(params))
    limit = limit_param(params)
    start = timestamp_param(params, "start", time.time_ns() - DEFAULT_LOOKBACK_NS)
    timestamp_param(params, "end", 0)
    delay = _delay_for(params)
    tenant = rt.resolver.single(header)
    if not isinstance(expr, ast.LogQuery):
        raise BadRequestError(_ONLY_LOG_SELECTORS)
    return TailRequest(
        tenant=tenant,
        query=expr,
        limit=limit,
        start_ns=start,
        delay_seconds=delay,
        legacy=socket.url.path.startswith(LEGACY_PATH),
    )


async def _refuse(socket: WebSocket[Any, Any, Any], status: int, message: str) -> None:
    """Answer the upgrade request with a plain HTTP error instead of accepting it."""
    await socket.receive()
    extensions = socket.scope.get("extensions") or {}
    if "websocket.http.response" in extensions:
        start: WebSocketResponseStartEvent = {
            "type": "websocket.http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
        body: WebSocketResponseBodyEvent = {
            "type": "websocket.http.response.body",
            "body": message.encode(),
            "more_body": False,
        }
        await socket.send(start)
        await socket.send(body)
    else:
        await socket.close(code=1008, reason=message[:120])


def tail_hub(socket: WebSocket[Any, Any, Any], rt: Runtime) -> TailHub:
    """The app's tail hub, created (and hooked to the store) on first use."""
    state = socket.app.state
    hub: TailHub | None = state.get(_HUB_KEY)
    if hub is None:
        hub = TailHub(rt.engine)
        rt.store.on_rows.append(hub.publish)
        if rt.store.remote is not None:  # a reader: the other writers' pushes too
            hub.feeds = WriterFeeds(rt.store.remote, hub.publish, hub.tailed)
        state[_HUB_KEY] = hub
    return hub


def _open_tails(socket: WebSocket[Any, Any, Any]) -> dict[str, int]:
    state = socket.app.state
    found: dict[str, int] | None = state.get(_OPEN_KEY)
    if found is None:
        found = state[_OPEN_KEY] = {}
    return found


def _reserve(rt: Runtime, socket: WebSocket[Any, Any, Any], tenant: str) -> None:
    """Count one more open tail of the tenant; 400 past ``max_concurrent_tail_requests``."""
    open_tails = _open_tails(socket)
    count = open_tails.get(tenant, 0)
    most = rt.limits_for(tenant).max_concurrent_tail_requests
    if most > 0 and count >= most:
        raise BadRequestError(
            f"max concurrent tail requests limit exceeded, count > limit ({count + 1} > {most})"
        )
    open_tails[tenant] = count + 1


def _release(socket: WebSocket[Any, Any, Any], tenant: str) -> None:
    open_tails = _open_tails(socket)
    left = open_tails.get(tenant, 1) - 1
    if left > 0:
        open_tails[tenant] = left
    else:
        open_tails.pop(tenant, None)


@websocket([prefix + "/tail" for prefix in API_PREFIXES] + [LEGACY_PATH])
async def tail(socket: WebSocket[Any, Any, Any]) -> None:
    """Stream matching history, then new entries, as JSON text messages."""
    rt: Runtime = socket.app.state.runtime
    try:
        request = parse_tail_request(rt, socket)
        rt.require_ready()
        _reserve(rt, socket, request.tenant)
    except ServiceError as exc:
        await _refuse(socket, exc.status, exc.message)
        return
    except logql_to_sql.LogQLError as exc:
        await _refuse(socket, 400, str(exc))
        return
    try:
        await _tail(rt, socket, request)
    finally:
        _release(socket, request.tenant)


async def _tail(rt: Runtime, socket: WebSocket[Any, Any, Any], request: TailRequest) -> None:
    await socket.accept()
    wake = asyncio.Event()
    hub = tail_hub(socket, rt)
    subscription = hub.subscribe(
        request.tenant, request.query, request.delay_seconds, asyncio.get_running_loop(), wake
    )
    closed = asyncio.create_task(_wait_closed(socket))
    try:
        # Before the history: a push is then in the history, or fed, or both (deduplicated).
        await asyncio.to_thread(hub.follow_writers, request.tenant)
        await _serve(rt, socket, request, subscription, wake, closed)
    except Exception as exc:  # the client went away mid-send, or the query failed
        log.debug("tail ended: %s", exc)
    finally:
        hub.unsubscribe(subscription)
        closed.cancel()
        with contextlib.suppress(Exception):
            await socket.close()


async def _wait_closed(socket: WebSocket[Any, Any, Any]) -> None:
    while True:
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return


async def _serve(
    rt: Runtime,
    socket: WebSocket[Any, Any, Any],
    request: TailRequest,
    subscription: TailSubscription,
    wake: asyncio.Event,
    closed: asyncio.Task[None],
) -> None:
    history_end = time.time_ns()
    seen: set[TailEntry] = set()
    if request.start_ns < history_end:
        query = LogQueryRequest(
            request.query, request.start_ns, history_end, request.limit, Direction.BACKWARD
        )
        async with rt.frontend.request(socket.headers, None, (request.tenant,)) as scheduled:
            streams, _ = await scheduled.run(run_log_query, request.tenant, query)
        history = sorted(
            (TailEntry(s.labels, ts, line) for s in streams for ts, line in s.values),
            key=lambda e: e.ts,
        )
        seen = set(history)
        if history:
            await socket.send_text(tail_message(history, [], legacy=request.legacy))
    while not closed.done():
        wake.clear()
        entries, dropped, following = subscription.take(MAX_ENTRIES_PER_MESSAGE)
        if seen:
            entries = [e for e in entries if e.ts >= history_end or e not in seen]
        if entries or dropped:
            await socket.send_text(tail_message(entries, dropped, legacy=request.legacy))
            continue
        timeout = None if following is None else max(following - time.monotonic(), 0.0)
        waiter = asyncio.create_task(wake.wait())
        await asyncio.wait({waiter, closed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()


def _grouped(entries: list[TailEntry]) -> list[tuple[Labels, list[tuple[int, str]]]]:
    groups: dict[Labels, list[tuple[int, str]]] = {}
    for entry in entries:
        groups.setdefault(entry.labels, []).append((entry.ts, entry.line))
    ordered = sorted(groups.items(), key=lambda item: label_key(item[0]).encode())
    for _, values in ordered:
        values.sort(key=lambda value: value[0])
    return ordered


def tail_message(
    entries: list[TailEntry], dropped: list[tuple[Labels, int]], *, legacy: bool
) -> str:
    """One tail message in the v1 or the legacy shape."""
    groups = _grouped(entries)
    if legacy:
        return _json(
            {
                "streams": [
                    {
                        "labels": label_key(labels),
                        "entries": [{"ts": rfc3339_nano(ts), "line": line} for ts, line in values],
                    }
                    for labels, values in groups
                ]
                or None,
                "dropped_entries": [
                    {"Timestamp": rfc3339_nano(ts), "Labels": label_key(labels)}
                    for labels, ts in dropped
                ]
                or None,
            }
        )
    payload: dict[str, Any] = {}
    if groups:
        payload["streams"] = [
            {"stream": dict(labels), "values": [[str(ts), line] for ts, line in values]}
            for labels, values in groups
        ]
    if dropped:
        payload["dropped_entries"] = [
            {"timestamp": str(ts), "labels": dict(labels)} for labels, ts in dropped
        ]
    return _json(payload)

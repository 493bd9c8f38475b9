"""One log line per HTTP request, at info: what was asked, by whom, and how it ended.

``msg=request method=GET path=/loki/api/v1/query_range org_id=team-a status=200
duration=12.5ms bytes=5120 query="{app=\\"web\\"}"``, plus ``err="..."`` (the start of
the answer's text) for 4xx and 5xx answers, as the reference logs each query with its
outcome. Health checks and metric scrapes (``/ready``, ``/metrics``) log at debug only,
so that probes do not flood the log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import parse_qs

from gocompat.durations import format_go_duration
from svc.ops.metrics import ASGIApp, Receive, Scope, Send
from svc.tenancy import ORG_ID_HEADER

__all__ = ["request_log"]

log = logging.getLogger("svc.request")
_QUIET = frozenset({"/ready", "/metrics"})
_ORG_HEADER = ORG_ID_HEADER.lower().encode()
_REASON_BYTES = 256
_FORM_BYTES = 64 * 1024
# The answer itself stays the reference's bare "no org id"; the log says what to do.
_NO_TENANT_HINT = (
    "send the tenant in the X-Scope-OrgID header, or serve one tenant without it"
    " (auth_enabled: false, or -auth.enabled=false)"
)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _query(scope: Scope, form: bytearray | None) -> str | None:
    """``query`` from the query string, else from a urlencoded form body."""
    for text in (bytes(scope.get("query_string", b"")), form or b""):
        found = parse_qs(text.decode("utf-8", "replace")).get("query")
        if found:
            return found[0]
    return None


def _is_form(scope: Scope) -> bool:
    content_type = _header(scope, b"content-type") or ""
    return content_type.startswith("application/x-www-form-urlencoded")


def request_log(default_tenant: str | None) -> Any:
    """ASGI middleware factory; ``default_tenant`` is the tenant when auth is off."""

    def middleware(app: ASGIApp) -> ASGIApp:
        async def logged(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            status, size, reason, encoded = 500, 0, bytearray(), False
            # Grafana and logcli may POST queries as forms: keep the start of the body.
            form = bytearray() if _is_form(scope) else None

            async def listen() -> MutableMapping[str, Any]:
                message = await receive()
                if form is not None and len(form) < _FORM_BYTES:
                    form.extend(message.get("body", b"")[: _FORM_BYTES - len(form)])
                return message

            async def capture(message: MutableMapping[str, Any]) -> None:
                nonlocal status, size, encoded
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    encoded = any(k.lower() == b"content-encoding" for k, _ in message["headers"])
                elif message["type"] == "http.response.body":
                    body = message.get("body", b"")
                    size += len(body)
                    if status >= 400 and not encoded and len(reason) < _REASON_BYTES:
                        reason.extend(body[: _REASON_BYTES - len(reason)])
                await send(message)

            started = time.perf_counter_ns()
            try:
                await app(scope, listen if form is not None else receive, capture)
            finally:
                elapsed = time.perf_counter_ns() - started
                _log(scope, status, elapsed, (size, reason, form), default_tenant)

        return logged

    return middleware


def _log(
    scope: Scope,
    status: int,
    elapsed_ns: int,
    body: tuple[int, bytearray, bytearray | None],
    tenant: str | None,
) -> None:
    size, reason, form = body
    path = str(scope["path"])
    level = logging.DEBUG if path in _QUIET and status < 400 else logging.INFO
    if not log.isEnabledFor(level):
        return
    fields: dict[str, Any] = {
        "method": scope.get("method", ""),
        "path": path,
        "org_id": _header(scope, _ORG_HEADER) or tenant or "",
        "status": status,
        "duration": format_go_duration(elapsed_ns),
        "bytes": size,
    }
    query = _query(scope, form)
    if query is not None:
        fields["query"] = query
    if status >= 400:
        fields["err"] = reason.decode("utf-8", "replace").strip()
    if status == 401:
        fields["hint"] = _NO_TENANT_HINT
    log.log(level, "request", extra={"fields": fields})

"""Carry a browser's tenant to the WebSocket ``tail`` endpoint.

A browser's ``WebSocket`` cannot send ``X-Scope-OrgID``; it can only offer subprotocols.
The UI offers ``svc.tenant.<hex of the tenant's UTF-8>``; this middleware turns that into
the header (when the request has none) and accepts the offered subprotocol, as browsers
require. Anything else passes through unchanged, so the endpoint behaves as it always did.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from svc.ops.metrics import ASGIApp, Receive, Scope, Send
from svc.tenancy import ORG_ID_HEADER

__all__ = ["TENANT_PROTOCOL_PREFIX", "tail_tenant", "tenant_from_protocols"]

TENANT_PROTOCOL_PREFIX = "svc.tenant."
"""The subprotocol that names a tenant: this prefix, then the tenant as hex."""

_ORG_HEADER = ORG_ID_HEADER.lower().encode()
_PROTOCOL_HEADER = b"sec-websocket-protocol"


def tenant_from_protocols(offered: str) -> tuple[str, str] | None:
    """The tenant and the subprotocol naming it, from a ``Sec-WebSocket-Protocol`` value."""
    for token in offered.split(","):
        token = token.strip()
        if not token.startswith(TENANT_PROTOCOL_PREFIX):
            continue
        try:
            return bytes.fromhex(token[len(TENANT_PROTOCOL_PREFIX) :]).decode(), token
        except (ValueError, UnicodeDecodeError):
            return None
    return None


def tail_tenant(app: ASGIApp) -> ASGIApp:
    """ASGI middleware: a WebSocket's tenant subprotocol becomes its ``X-Scope-OrgID``."""

    async def shim(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await app(scope, receive, send)
            return
        headers = list(scope.get("headers", ()))
        names = {bytes(key).lower() for key, _ in headers}
        offered = ", ".join(
            bytes(value).decode("latin-1")
            for key, value in headers
            if bytes(key).lower() == _PROTOCOL_HEADER
        )
        found = tenant_from_protocols(offered) if offered else None
        if found is None or _ORG_HEADER in names:
            await app(scope, receive, send)
            return
        tenant, protocol = found
        scope = {**scope, "headers": [*headers, (_ORG_HEADER, tenant.encode())]}

        async def accept_protocol(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "websocket.accept":
                message = {**message, "subprotocol": protocol}
            await send(message)

        await app(scope, receive, accept_protocol)

    return shim

"""Hash ring status pages and the memberlist page (HTML).

A single instance is the only member of each ring, with an in-memory key-value store:
the pages show it with its state (derived from the service behind the ring), health,
registration time and last heartbeat. An ingester that has stopped has left the ring.
"""

from __future__ import annotations

import html
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from litestar import Request, Response, get

from svc.api.common import runtime
from svc.ops.services import State
from svc.runtime import Runtime
from svc.targets import runs

__all__ = ["RING_ROUTES"]

_HTML = "text/html; charset=utf-8"
_RING_STATE = {
    State.NEW: "PENDING",
    State.STARTING: "JOINING",
    State.RUNNING: "ACTIVE",
    State.STOPPING: "LEAVING",
}
# ring page path -> (title, service whose state the member's state follows)
_RINGS = {
    "/ring": ("Ingester", "ingester"),
    "/distributor/ring": ("Distributor", "distributor"),
    "/indexgateway/ring": ("Index gateway", "index-gateway"),
    "/ruler/ring": ("Ruler", "ruler"),
    "/compactor/ring": ("Compactor", "compactor"),
}
_STARTED = time.time()

_PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="UTF-8">
<title>{title}</title>
<style>
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #999; padding: 2px 8px; text-align: left; }}
tr.unhealthy {{ background-color: #fbb; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p>Current time: {now}</p>
{body}
</body>
</html>
"""


@dataclass(frozen=True)
class Member:
    """One ring member as the page shows it."""

    instance_id: str
    zone: str
    state: str
    healthy: bool
    address: str
    registered_at: float
    heartbeat: float
    tokens: int


def _format_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _members(rt: Runtime, service_name: str) -> list[Member]:
    if rt.members is not None:
        return _shared_members(rt, service_name)
    if rt.shutdown_requested.is_set() and service_name != "ingester":
        return []
    service = next((s for s in rt.services if s.name == service_name), None)
    if service is None:  # this target does not run the component
        return []
    state = _RING_STATE.get(service.state)
    if state is None:  # Terminated or Failed: unregistered
        return []
    server = rt.config.server
    tokens = rt.config.ingester.lifecycler.num_tokens if service_name == "ingester" else 1
    return [
        Member(
            instance_id=socket.gethostname(),
            zone="",
            state=state,
            healthy=state == "ACTIVE",
            address=f"{server.http_listen_address}:{server.grpc_listen_port}",
            registered_at=_STARTED,
            heartbeat=time.time(),
            tokens=tokens,
        )
    ]


def _shared_members(rt: Runtime, component: str) -> list[Member]:
    """The live instances of a shared catalog that run ``component``."""
    assert rt.members is not None
    tokens = rt.config.ingester.lifecycler.num_tokens if component == "ingester" else 1
    return [
        Member(
            instance_id=m.name,
            zone="",
            state="ACTIVE",
            healthy=True,
            address=m.address.removeprefix("http://"),
            registered_at=m.registered_ns / 1e9,
            heartbeat=m.heartbeat_ns / 1e9,
            tokens=tokens,
        )
        for m in rt.members.live()
        if runs(m.target, component)
    ]


def _ring_table(members: list[Member], now: float) -> str:
    if not members:
        return "<p>The ring is empty.</p>"
    head = (
        "<tr><th>Instance ID</th><th>Availability Zone</th><th>State</th><th>Health</th>"
        "<th>Address</th><th>Registered At</th><th>Last Heartbeat</th><th>Tokens</th>"
        "<th>Ownership</th></tr>"
    )
    rows = []
    for m in members:
        ago = max(0, int(now - m.heartbeat))
        cells = [
            m.instance_id,
            m.zone,
            m.state,
            "HEALTHY" if m.healthy else "UNHEALTHY",
            m.address,
            _format_time(m.registered_at),
            f"{ago}s ago ({_format_time(m.heartbeat)})",
            str(m.tokens),
            f"{100 / len(members):.1f}%",
        ]
        css = "" if m.healthy else ' class="unhealthy"'
        rows.append(f"<tr{css}>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table>\n<thead>{head}</thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>"


def _page(title: str, body: str) -> Response[bytes]:
    text = _PAGE.format(title=html.escape(title), now=_format_time(time.time()), body=body)
    return Response(text.encode(), media_type=_HTML)


@get(list(_RINGS))
async def ring_status(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The ring's members: state, health, last heartbeat."""
    title, service_name = _RINGS[request.url.path]
    members = _members(runtime(request), service_name)
    return _page(f"{title} Ring Status", _ring_table(members, time.time()))


@get("/memberlist")
async def memberlist(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Gossip status: this instance runs no memberlist cluster (in-memory ring)."""
    rt = runtime(request)
    server = rt.config.server
    alive = "Alive" if not rt.shutdown_requested.is_set() else "Left"
    body = (
        "<p>Memberlist is not configured: the rings are kept in memory and this instance "
        "is their only member.</p>\n<h2>Members</h2>\n<table>\n<thead><tr><th>Name</th>"
        "<th>Address</th><th>State</th></tr></thead>\n<tbody>\n"
        f"<tr><td>{html.escape(socket.gethostname())}</td>"
        f"<td>{html.escape(server.http_listen_address)}:7946</td><td>{alive}</td></tr>\n"
        "</tbody>\n</table>"
    )
    return _page("Memberlist Status", body)


RING_ROUTES = [ring_status, memberlist]

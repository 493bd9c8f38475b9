"""The built-in web UI: static files under ``/ui/`` and what the browser needs of the API.

The UI is hand-written ES modules and CSS in ``static/`` (no build step), talking only to
the public endpoints. Two small pieces live here: the routes serving the files, and the
WebSocket shim that lets a browser name its tenant for ``tail`` (browsers cannot set
headers on a WebSocket).
"""

from __future__ import annotations

from svc.ui.routes import UI_PATH, prefers_html, ui_routes
from svc.ui.tail_tenant import TENANT_PROTOCOL_PREFIX, tail_tenant

__all__ = ["TENANT_PROTOCOL_PREFIX", "UI_PATH", "prefers_html", "tail_tenant", "ui_routes"]

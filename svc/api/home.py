"""``GET /``: a small HTML page with the version and links to the API and operations pages;
browsers (``Accept`` preferring HTML) are sent to the web UI, which shows the page too."""

from __future__ import annotations

from html import escape
from typing import Any

from litestar import Request, Response, get
from litestar.response import Redirect

from svc.ui import UI_PATH, prefers_html
from svc.version import build_info

__all__ = ["home"]

_LINKS = (
    ("/svc/api/v1/openapi.json", "HTTP API (OpenAPI); every path is also under /loki/api/v1"),
    ("/ready", "readiness"),
    ("/metrics", "Prometheus metrics"),
    ("/config", "effective configuration (?mode=diffs: what differs from the defaults)"),
    ("/services", "internal services and their states"),
    ("/svc/api/v1/status/buildinfo", "build information"),
)


def _page() -> str:
    info = build_info()
    items = "\n".join(
        f'    <li><a href="{escape(href)}">{escape(href)}</a>: {escape(text)}</li>'
        for href, text in _LINKS
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>svc {escape(info["version"])}</title></head>
<body>
  <h1>svc {escape(info["version"])}</h1>
  <p>A multi-tenant log store with Grafana Loki's HTTP API and LogQL
  (revision {escape(info["revision"] or "unknown")}, {escape(info["goVersion"])}).
  Push to <code>/loki/api/v1/push</code> or <code>/otlp/v1/logs</code>; point Grafana's
  Loki data source at this address, with the tenant in the <code>X-Scope-OrgID</code>
  header. The README of the source tree tells the rest.</p>
  <ul>
{items}
  </ul>
</body>
</html>
"""


@get("/", media_type="text/html")
async def home(request: Request[Any, Any, Any]) -> Response[bytes] | Redirect:
    """The home page: version and links; a browser is redirected to the UI."""
    vary = {"Vary": "Accept"}
    if prefers_html(request.headers.get("accept", "")):
        return Redirect(UI_PATH, status_code=302, headers=vary)
    return Response(_page().encode(), media_type="text/html", headers=vary)

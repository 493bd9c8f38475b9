"""The routes of the web UI: its static files under ``/ui/``, shipped in the package."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from litestar.datastructures import CacheControlHeader
from litestar.static_files import create_static_files_router

__all__ = ["STATIC_DIR", "UI_PATH", "prefers_html", "ui_routes"]

UI_PATH = "/ui/"
"""Where the UI is served; ``/`` redirects there for browsers."""

STATIC_DIR = Path(str(files("svc.ui") / "static"))
"""The UI's files, as installed with the package (``package-data``)."""

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def _quality(params: list[str]) -> float:
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def prefers_html(accept: str) -> bool:
    """Whether an ``Accept`` header names HTML explicitly, with no other type preferred.

    Browsers navigating send ``text/html,...,*/*;q=0.8``; API clients send ``*/*`` or
    nothing, and keep getting the plain page.
    """
    html = 0.0
    others = 0.0
    for part in accept.split(","):
        media_type, *params = part.split(";")
        media_type = media_type.strip().lower()
        if not media_type:
            continue
        quality = _quality(params)
        if media_type in _HTML_TYPES:
            html = max(html, quality)
        else:
            others = max(others, quality)
    return html > 0 and html >= others


def ui_routes() -> list[Any]:
    """The static-files router of ``/ui/`` (``index.html`` for the directory).

    ``no-cache`` makes browsers revalidate (by ETag) so that an upgrade shows at once.
    """
    return [
        create_static_files_router(
            path=UI_PATH.rstrip("/"),
            directories=[STATIC_DIR],
            html_mode=True,
            name="ui",
            cache_control=CacheControlHeader(no_cache=True),
        )
    ]

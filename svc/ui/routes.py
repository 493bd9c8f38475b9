"""The routes of the web UI: its files under ``/ui/``, shipped in the package.

The files are read once, when the app is built, and answered from memory by their path:
no request touches the file system, so no path a client sends (``..``, NUL bytes, names
too long for the OS) can reach a file or an OS error.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from litestar import Request, Response, get

from svc.errors import NotFoundError

__all__ = ["STATIC_DIR", "UI_PATH", "StaticFile", "load_static_files", "prefers_html", "ui_routes"]

UI_PATH = "/ui/"
"""Where the UI is served; ``/`` redirects there for browsers."""

STATIC_DIR = Path(str(files("svc.ui") / "static"))
"""The UI's files, as installed with the package (``package-data``)."""

INDEX = "index.html"
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Browsers revalidate (by ETag) each time, so that an upgraded server shows its new UI.
_CACHE_CONTROL = "no-cache"


@dataclass(frozen=True, slots=True)
class StaticFile:
    """One file of the UI, held in memory."""

    body: bytes
    media_type: str
    etag: str


def load_static_files(root: Path = STATIC_DIR) -> dict[str, StaticFile]:
    """Every file under ``root`` by its relative path (``js/main.js``)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        body = path.read_bytes()
        # Litestar adds "; charset=utf-8" to text types.
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        found[path.relative_to(root).as_posix()] = StaticFile(body, media_type, etag)
    return found


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


def _answer(request: Request[Any, Any, Any], found: StaticFile) -> Response[bytes]:
    headers = {"ETag": found.etag, "Cache-Control": _CACHE_CONTROL}
    if request.headers.get("if-none-match") == found.etag:
        return Response(b"", status_code=304, headers=headers)
    return Response(found.body, media_type=found.media_type, headers=headers)


def ui_routes(root: Path = STATIC_DIR) -> list[Any]:
    """``/ui`` (the page) and ``/ui/<file>``, answered from the files read now."""
    static = load_static_files(root)

    @get("/ui", include_in_schema=False, name="ui")
    async def ui_page(request: Request[Any, Any, Any]) -> Response[bytes]:
        """The UI's page."""
        return _answer(request, static[INDEX])

    @get("/ui/{file_path:path}", include_in_schema=False, name="ui-file")
    async def ui_file(request: Request[Any, Any, Any]) -> Response[bytes]:
        """One of the UI's files (the page for the directory itself)."""
        found = static.get(str(request.path_params["file_path"]).strip("/") or INDEX)
        if found is None:
            raise NotFoundError("404 page not found\n")
        return _answer(request, found)

    return [ui_page, ui_file]

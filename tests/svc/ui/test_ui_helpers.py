"""The UI's server-side helpers: who is redirected to it, and the tail tenant shim."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from svc.ui.routes import STATIC_DIR, prefers_html
from svc.ui.tail_tenant import tenant_from_protocols


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        pytest.param(
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8",
            True,
            id="chromium",
        ),
        pytest.param("text/html,application/xhtml+xml,*/*;q=0.8", True, id="firefox"),
        pytest.param("*/*", False, id="curl-httpx"),
        pytest.param("", False, id="none"),
        pytest.param("application/json", False, id="json"),
        pytest.param("application/json, text/html;q=0.5", False, id="json-first"),
        pytest.param("text/html;q=0", False, id="html-refused"),
        pytest.param("text/html;q=oops", False, id="bad-quality"),
        pytest.param("TEXT/HTML", True, id="case"),
    ],
)
def test_prefers_html(accept: str, expected: bool) -> None:
    assert prefers_html(accept) is expected


@pytest.mark.parametrize(
    ("offered", "expected"),
    [
        pytest.param("svc.tenant.7465616d2d61", ("team-a", "svc.tenant.7465616d2d61"), id="one"),
        pytest.param("chat, svc.tenant.61", ("a", "svc.tenant.61"), id="among-others"),
        pytest.param("chat", None, id="other"),
        pytest.param("svc.tenant.zz", None, id="not-hex"),
        pytest.param("svc.tenant.ff", None, id="not-utf8"),
    ],
)
def test_tenant_from_protocols(offered: str, expected: tuple[str, str] | None) -> None:
    assert tenant_from_protocols(offered) == expected


def test_every_static_file_ships_in_the_package() -> None:
    """pyproject's package-data globs cover each file under ``static/`` (a wheel install
    serves the same UI as a checkout)."""
    config = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["svc.ui"]
    package = STATIC_DIR.parent
    for path in STATIC_DIR.rglob("*"):
        if path.is_file():
            relative = path.relative_to(package)
            assert any(relative.match(glob) for glob in globs), relative

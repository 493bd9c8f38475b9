"""Headless Chromium (Debian's package) driven by Playwright, and the data the UI tests
and the screenshot script read.

Playwright's own browser downloads are never used: ``executable_path`` points at the
Debian binary, which ``.ci/run`` (and ``make test``) install when it is missing.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright

from tests.e2e.clients import now_ns, push
from tests.e2e.server import DISCOVERY, Server

__all__ = [
    "BULK_LINES",
    "TENANT_A",
    "TENANT_B",
    "UI_OVERRIDES",
    "chromium",
    "require_chromium",
    "seed",
]

SECOND = 1_000_000_000
TENANT_A = "ui-team-a"
TENANT_B = "ui-team-b"
BULK_LINES = 5000
UI_OVERRIDES = {"limits_config": {**DISCOVERY, "max_entries_limit_per_query": BULK_LINES}}
"""``detected_level`` and ``service_name`` as in a default install, and room for the
5,000-line page the render timing reads."""


def require_chromium() -> str:
    """The Chromium binary; fail (never skip) when it is missing: CI installs it."""
    path = shutil.which("chromium")
    assert path, (
        "chromium not installed: apt-get install -y --no-install-recommends chromium (.ci/run does)"
    )
    return path


@contextmanager
def chromium() -> Iterator[Browser]:
    """One headless Chromium for a whole test module."""
    path = require_chromium()
    with sync_playwright() as playwright:
        # Root (CI) cannot use Chromium's sandbox; the pages are our own loopback server.
        browser = playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def seed(server: Server) -> int:
    """Push the UI's data: two tenants' web logs, JSON lines with structured metadata,
    and ``BULK_LINES`` lines for the render timing. Returns the newest timestamp."""
    now = now_ns()
    web = [
        (
            now - i * 10 * SECOND,
            f'level={"error" if i % 7 == 0 else "info"} msg="GET /index {i}" status=200',
        )
        for i in range(300)
    ]
    api = [
        (
            now - i * 30 * SECOND,
            json.dumps({"level": "warn", "msg": f"slow call {i}", "took_ms": 900 + i}),
            {"trace_id": f"trace-{i}"},
        )
        for i in range(100)
    ]
    bulk = [
        (now - 600 * SECOND + i * 1000, f"bulk line {i} of the render timing")
        for i in range(BULK_LINES)
    ]
    with server.client(TENANT_A) as client:
        response = push(
            client, [({"app": "web", "env": "prod"}, web), ({"app": "api", "env": "prod"}, api)]
        )
        assert response.status_code == 204, response.text
        response = push(client, [({"app": "bulk"}, bulk)])
        assert response.status_code == 204, response.text
    with server.client(TENANT_B) as client:
        beta = [(now - i * 2 * SECOND, f'level=info msg="beta-only {i}"') for i in range(20)]
        response = push(client, [({"app": "web", "env": "staging"}, beta)])
        assert response.status_code == 204, response.text
    return now

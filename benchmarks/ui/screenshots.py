"""Screenshots of each screen of the web UI, for the README (not run in CI).

Starts a real server on a loopback port, pushes the browser tests' data
(``tests/e2e/browser.py``), and writes one PNG per screen beside this file, at
1280x800 (and one phone-sized). Needs Debian's ``chromium``, as the browser tests do.

    .venv/bin/python -m benchmarks.ui.screenshots [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import Browser, Page

from tests.e2e.browser import TENANT_A, UI_OVERRIDES, chromium, seed
from tests.e2e.clients import now_ns, push
from tests.e2e.server import Server

HERE = Path(__file__).parent
WIDE = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def _open(browser: Browser, url: str, viewport: dict[str, int], theme: str) -> Page:
    context = browser.new_context(viewport=viewport, color_scheme=theme)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(url)
    page.wait_for_load_state("networkidle")
    return page


def _shoot(page: Page, out: Path, name: str) -> None:
    page.wait_for_timeout(300)
    page.screenshot(path=out / f"{name}.png")
    print(out / f"{name}.png")
    page.context.close()


def screens(server: Server, browser: Browser, out: Path) -> None:
    """Write every screen's PNG under ``out``."""

    def url(**state: str) -> str:
        return f"{server.url}/ui/?{urlencode({'tenant': TENANT_A, **state})}"

    logs = url(q='{env="prod"} |= "GET /index 1"')
    for theme, name in (("light", "explore-logs"), ("dark", "explore-logs-dark")):
        page = _open(browser, logs, WIDE, theme)
        page.locator('.label-name[data-name="app"]').click()
        page.locator(".label-value").first.wait_for()
        _shoot(page, out, name)

    page = _open(browser, url(q='{app="api"} | json'), WIDE, "light")
    page.locator("#results .log-row .line").first.click()
    _shoot(page, out, "line-details")

    page = _open(browser, url(q='sum by (app) (count_over_time({env="prod"}[1m]))'), WIDE, "light")
    box = page.locator("#results .chart-svg").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)
    _shoot(page, out, "metric-chart")

    page = _open(browser, url(q='{app="web"} | logfmt | status >'), WIDE, "light")
    _shoot(page, out, "invalid-query")

    page = _open(browser, url(tab="tail", tail='{app="web"}'), WIDE, "dark")
    page.locator("#tail-start").click()
    page.locator("#tail-status").filter(has_text="live").wait_for()
    with server.client(TENANT_A) as client:
        lines = [(now_ns(), f'level=warn msg="pushed while tailing {i}"') for i in range(3)]
        push(client, [({"app": "web", "env": "prod"}, lines)])
    page.locator("#tail-lines .line", has_text="pushed while tailing 2").wait_for()
    _shoot(page, out, "live-tail")

    sql = (
        "SELECT labels['app'] AS app, count(*) AS lines,\n"
        "       min(ts) AS first, max(ts) AS last\nFROM logs GROUP BY 1 ORDER BY 2 DESC"
    )
    page = _open(browser, url(tab="sql", sql=sql), WIDE, "light")
    page.locator("#sql-results table").wait_for()
    _shoot(page, out, "sql-console")

    _shoot(_open(browser, url(q='{app="web"}'), PHONE, "light"), out, "phone")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE, help="where the PNGs go")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as root:
        server = Server(Path(root), UI_OVERRIDES).start()
        try:
            seed(server)
            with chromium() as browser:
                screens(server, browser, args.out)
        finally:
            server.stop()


if __name__ == "__main__":
    main()

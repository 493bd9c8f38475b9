"""The web UI in headless Chromium against a real server with real pushed data: every
scenario of the UI's issue, one browser for the whole module."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pyarrow.parquet as pq
import pytest
from playwright.sync_api import Browser, Page, expect

from svc.ui.routes import STATIC_DIR
from tests.e2e.browser import BULK_LINES, TENANT_A, TENANT_B, UI_OVERRIDES, chromium, seed
from tests.e2e.clients import now_ns, push
from tests.e2e.server import Server

SECOND = 1_000_000_000


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("ui"), UI_OVERRIDES).start()
    seed(srv)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as instance:
        yield instance


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh context per test: its own local storage (history, last tenant)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert not errors, errors


def ui(server: Server, **state: str) -> str:
    return f"{server.url}/ui/?{urlencode(state)}"


def url_state(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def editor(page: Page, view: str = "explore") -> str:
    return page.locator(f"#{view}-editor textarea").input_value()


def run(page: Page, query: str) -> None:
    page.locator("#explore-editor textarea").fill(query)
    page.keyboard.press("Control+Enter")


def test_a_browser_asking_for_html_lands_on_the_ui_which_shows_the_home_page(
    ui_server: Server, page: Page
) -> None:
    page.goto(ui_server.url + "/")
    assert urlsplit(page.url).path == "/ui/"
    expect(page.locator("#brand")).to_have_text(re.compile(r"^svc \d"))
    page.get_by_role("tab", name="About").click()
    expect(page.locator("#about-page h1")).to_have_text(re.compile(r"^svc \d"))
    expect(page.locator('#about-page a[href="/metrics"]')).to_be_visible()
    assert url_state(page)["tab"] == "about"
    theme = page.evaluate("document.documentElement.dataset.theme")
    page.locator("#theme").click()
    assert page.evaluate("document.documentElement.dataset.theme") != theme


def test_a_log_query_shows_its_lines_highlighted_and_the_volume_by_level(
    ui_server: Server, page: Page
) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, q='{app="web"} |= "GET /index 1"'))
    rows = page.locator("#results .log-row")
    expect(rows.first).to_be_visible()
    # 1, 10-19, 100-199: 111 lines, newest first.
    expect(page.locator(".logs-toolbar .summary")).to_have_text("111 lines")
    expect(rows.first.locator(".line")).to_have_text('level=info msg="GET /index 1" status=200')
    expect(rows.first.locator("mark")).to_have_text("GET /index 1")
    expect(page.locator(".histogram rect.level-error").first).to_be_attached()
    expect(page.locator(".histogram rect.level-info").first).to_be_attached()


def test_clicking_a_label_chip_or_a_browsed_value_adds_a_matcher(
    ui_server: Server, page: Page
) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, q='{app="web"}'))
    page.locator('#results .log-row .chip[data-name="env"]').first.click()
    assert editor(page) == '{app="web", env="prod"}'
    expect(page).to_have_url(re.compile(r"q=%7Bapp%3D%22web%22%2C\+env%3D%22prod%22%7D"))
    page.locator('.label-name[data-name="app"]').click()
    value = page.locator('.label-value[data-value="api"]')
    expect(value.locator(".count")).to_have_text("1")
    value.click()
    assert editor(page) == '{app="api", env="prod"}'
    expect(page.locator("#results .log-row .line").first).to_contain_text("slow call 0")


def test_a_line_opens_to_its_stream_labels_metadata_and_parsed_fields(
    ui_server: Server, page: Page
) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, q='{app="api"} | json'))
    page.locator("#results .log-row .line").first.click()
    details = page.locator(".details")
    expect(details).to_be_visible()
    expect(details.locator(".details-line")).to_contain_text('"slow call 0"')
    sections = details.locator(".details-section")
    expect(sections.nth(0).locator("tr", has_text="app")).to_contain_text("api")
    expect(sections.nth(1).locator("tr", has_text="trace_id")).to_contain_text("trace-0")
    expect(sections.nth(1).locator("tr", has_text="detected_level")).to_contain_text("warn")
    expect(sections.nth(2).locator("tr", has_text="took_ms")).to_contain_text("900")


def test_scrolling_to_the_end_loads_older_lines_without_repeats(
    ui_server: Server, page: Page
) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, q='{app="web"}', limit="100"))
    summary = page.locator(".logs-toolbar .summary")
    expect(summary).to_have_text("100 lines")
    # Each page ends one nanosecond after the oldest line shown (it repeats that line,
    # which is dropped): 100, 199, 298, 300.
    viewport = page.locator("#results .vl-viewport")
    for expected in ("199 lines", "298 lines", "300 lines"):
        viewport.evaluate("v => { v.scrollTop = v.scrollHeight; }")
        expect(summary).to_have_text(expected)
    expect(page.locator(".logs-toolbar .more")).to_contain_text("all of the range")
    lines = page.evaluate(
        "() => [...document.querySelectorAll('#results .log-row .line')].map(e => e.textContent)"
    )
    assert lines[-1] == 'level=info msg="GET /index 299" status=200'
    assert len(lines) == len(set(lines))


def test_a_metric_query_draws_a_chart_with_toggled_series_and_an_instant_table(
    ui_server: Server, page: Page
) -> None:
    # An hour's window: the instant table is evaluated now, and the module's data was
    # pushed when it started (a minute's window was empty once the module ran slowly).
    query = 'sum by (app) (count_over_time({env="prod"}[1h]))'
    page.goto(ui(ui_server, tenant=TENANT_A, q=query))
    series = page.locator("#results path.series")
    expect(series).to_have_count(2)
    legend = page.locator("#results .series-toggle")
    expect(legend).to_have_text(['{app="api"}', '{app="web"}'])
    legend.first.click()
    expect(series).to_have_count(1)
    box = page.locator("#results .chart-svg").bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] - 20, box["y"] + box["height"] / 2)
    expect(page.locator("#results .tooltip")).to_contain_text('{app="web"}')
    page.locator("#qtype").select_option("instant")
    expect(page.locator("#results .vector-table tbody tr")).to_have_count(2)
    assert url_state(page)["type"] == "instant"


def test_a_started_tail_shows_a_line_pushed_afterwards(ui_server: Server, page: Page) -> None:
    tenant = "ui-tail"
    page.goto(ui(ui_server, tenant=tenant, tab="tail"))
    page.locator("#tail-editor textarea").fill('{app="tailed"}')
    page.locator("#tail-start").click()
    expect(page.locator("#tail-status")).to_have_text("live")
    with ui_server.client(tenant) as client:
        assert (
            push(client, [({"app": "tailed"}, [(now_ns(), "first live line")])]).status_code == 204
        )
    expect(page.locator("#tail-lines .log-row .line")).to_have_text(
        ["first live line"], timeout=10_000
    )
    page.locator("#tail-pause").click()
    with ui_server.client(tenant) as client:
        push(client, [({"app": "tailed"}, [(now_ns(), "second live line")])])
    expect(page.locator("#tail-status")).to_have_text("paused, 1 new", timeout=10_000)
    page.locator("#tail-pause").click()
    expect(page.locator("#tail-lines .log-row .line")).to_have_text(
        ["first live line", "second live line"]
    )
    page.locator("#tail-stop").click()
    expect(page.locator("#tail-dropped")).to_be_hidden()


def test_entries_the_server_dropped_for_a_slow_tail_are_counted(
    ui_server: Server, page: Page
) -> None:
    tenant = "ui-tail-drop"
    page.goto(ui(ui_server, tenant=tenant, tab="tail"))
    page.locator("#tail-editor textarea").fill('{app="flood"}')
    page.locator("#tail-start").click()
    expect(page.locator("#tail-status")).to_have_text("live")
    badge = page.locator("#tail-dropped")
    with ui_server.client(tenant) as client:
        # 50,000 entries fill the tail's buffer (10,000) for the dozens of messages it takes
        # to send them: the pushes right after find it full and are dropped, reported to
        # the browser in the next message. (A round whose late pushes all came once the
        # buffer had room again is followed by another.)
        for _ in range(5):
            at = now_ns()
            flood = [(at + i, f"line {i}") for i in range(50_000)]
            assert push(client, [({"app": "flood"}, [*flood])]).status_code == 204
            for n in range(5):
                late = [(at + 50_000 + n * 10 + i, f"late {n} {i}") for i in range(10)]
                assert push(client, [({"app": "flood"}, [*late])]).status_code == 204
            page.wait_for_timeout(1_000)
            if badge.is_visible():
                break
    expect(badge).to_be_visible(timeout=10_000)
    expect(badge).to_have_text(re.compile(r"^[1-9][0-9]* dropped$"))
    expect(badge).to_have_attribute("title", "Entries the server could not send fast enough")
    page.locator("#tail-stop").click()


def test_a_tail_the_server_refuses_says_so(ui_server: Server, page: Page) -> None:
    page.goto(ui(ui_server, tenant=f"{TENANT_A}|{TENANT_B}", tab="tail", tail='{app="web"}'))
    page.locator("#tail-start").click()
    expect(page.locator("#tail-status")).to_contain_text("refused by the server")
    expect(page.locator("#tail-start")).to_be_enabled()


def test_a_sql_query_shows_typed_columns_and_downloads_as_csv(
    ui_server: Server, page: Page, tmp_path: Path
) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, tab="sql"))
    sql = "SELECT labels['app'] AS app, count(*) AS n FROM logs GROUP BY 1 ORDER BY 1"
    page.locator("#sql-editor textarea").fill(sql)
    page.keyboard.press("Control+Enter")
    table = page.locator("#sql-results table")
    expect(table.locator("th")).to_have_text(["appVARCHAR", "nBIGINT"])
    expect(table.locator("tbody tr")).to_have_text(["api100", "bulk5000", "web300"])
    with page.expect_download() as download:
        page.locator("#sql-csv").click()
    path = tmp_path / "out.csv"
    download.value.save_as(path)
    rows = list(csv.reader(path.read_text().splitlines()))
    assert rows == [["app", "n"], ["api", "100"], ["bulk", "5000"], ["web", "300"]]
    assert url_state(page)["sql"] == sql


def test_show_sql_starts_the_console_from_a_log_query(ui_server: Server, page: Page) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, q='{app="web"} |= "GET"'))
    page.locator("#show-sql").click()
    expect(page.locator("#sql")).to_be_visible()
    assert "FROM" in editor(page, "sql")
    expect(page.locator("#sql-note")).to_contain_text('{app="web"} |= "GET"')


def test_an_invalid_query_shows_the_servers_message_at_its_place(
    ui_server: Server, page: Page
) -> None:
    query = '{app="web"}\n  | logfmt | status >'
    with ui_server.client(TENANT_A) as client:
        answer = client.get("/loki/api/v1/query_range", params={"query": query})
    assert answer.status_code == 400
    message = answer.text.strip()
    line, col = map(int, re.search(r"line (\d+), col (\d+)", message).groups())  # type: ignore[union-attr]
    page.goto(ui(ui_server, tenant=TENANT_A))
    run(page, query)
    error = page.locator("#explore .editor-error")
    expect(error.locator(".error-text")).to_have_text(message)
    assert (error.get_attribute("data-line"), error.get_attribute("data-col")) == (
        str(line),
        str(col),
    )
    offset = sum(len(text) + 1 for text in query.split("\n")[: line - 1]) + col - 1
    marked = page.locator("#explore .err-mark")
    expect(marked).to_have_count(1)
    prefix = page.evaluate(
        """() => { const hl = document.querySelector('#explore .hl'); let text = '';
        for (const node of hl.childNodes) { if (node.classList?.contains('err-mark')) break;
        text += node.textContent; } return text.length; }"""
    )
    assert prefix == offset
    page.locator("#explore-editor textarea").press("End")
    page.keyboard.type(" 1")
    expect(error).to_be_hidden()


def test_two_tenants_see_only_their_own_lines(ui_server: Server, page: Page) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, q='{app="web"}'))
    lines = page.locator("#results .log-row .line")
    expect(lines.first).to_contain_text("GET /index 0")
    expect(page.locator("#results")).not_to_contain_text("beta-only")
    page.locator("#tenant").fill(TENANT_B)
    page.locator("#tenant").press("Enter")
    expect(page.locator(".logs-toolbar .summary")).to_have_text("20 lines")
    expect(lines.first).to_contain_text("beta-only 0")
    assert (
        page.evaluate("() => document.querySelector('#results').textContent.includes('GET /index')")
        is False
    )
    assert url_state(page)["tenant"] == TENANT_B
    page.go_back()
    expect(page.locator(".logs-toolbar .summary")).to_have_text("300 lines")


def test_the_range_can_be_absolute_and_format_query_has_a_key(
    ui_server: Server, page: Page
) -> None:
    with ui_server.client(TENANT_A) as client:
        answer = client.get("/loki/api/v1/query_range", params={"query": '{app="web"}'})
    result = answer.json()["data"]["result"]
    stamps = sorted((int(ts) for stream in result for ts, _ in stream["values"]), reverse=True)
    iso = lambda ns: datetime.fromtimestamp(ns / 1e9, UTC).isoformat()  # noqa: E731
    start, end = iso(stamps[20] - 5 * SECOND), iso(stamps[10] + 5 * SECOND)
    page.goto(
        ui(ui_server, tenant=TENANT_A, q='{app = "web"}|="GET"', **{"from": start, "to": end})
    )
    expect(page.locator(".logs-toolbar .summary")).to_have_text("11 lines")
    page.locator("#explore-editor textarea").press("Alt+Shift+F")
    expect(page.locator("#explore-editor textarea")).to_have_value('{app="web"} |= "GET"')
    assert url_state(page)["q"] == '{app="web"} |= "GET"'


def test_run_queries_are_kept_in_a_history_to_run_again(ui_server: Server, page: Page) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A))
    for query in ('{app="api"}', '{app="web"} |= "error"'):
        run(page, query)
        expect(page.locator("#history option").nth(1)).to_have_attribute("value", query)
    page.locator("#history").select_option('{app="api"}')
    assert editor(page) == '{app="api"}'
    expect(page.locator("#results .log-row .line").first).to_contain_text("slow call 0")
    assert url_state(page)["q"] == '{app="api"}'


def test_downloads_the_whole_log_result_as_json_lines_and_parquet(
    ui_server: Server, page: Page, tmp_path: Path
) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, q='{app="web"} |= "error"', limit="10"))
    # Ten lines do not fill the view: the next pages load at once.
    expect(page.locator(".logs-toolbar .summary")).to_have_text("43 lines")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download JSON lines").click()
    path = tmp_path / "logs.jsonl"
    download.value.save_as(path)
    assert len(path.read_text().splitlines()) == 43  # every seventh of 300, not the limit
    with page.expect_download() as download:
        page.get_by_role("button", name="Download Parquet").click()
    path = tmp_path / "logs.parquet"
    download.value.save_as(path)
    table = pq.read_table(path)
    assert table.num_rows == 43
    assert set(table.column("line").to_pylist()) == {
        f'level=error msg="GET /index {i}" status=200' for i in range(0, 300, 7)
    }


def test_a_phone_sized_screen_reads_lines_without_sideways_scrolling(
    ui_server: Server, browser: Browser
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(ui(ui_server, tenant=TENANT_A, q='{app="web"}'))
        expect(page.locator("#results .log-row").first).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_the_first_view_is_small_and_compressed(
    ui_server: Server, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [p for p in STATIC_DIR.rglob("*") if p.is_file()]
    total = 0
    with httpx.Client(base_url=ui_server.url, headers={"Accept-Encoding": "gzip"}) as client:
        for path in files:
            response = client.get("/ui/" + path.relative_to(STATIC_DIR).as_posix())
            assert response.status_code == 200
            if len(response.content) >= 1400:
                assert response.headers["content-encoding"] == "gzip"
            total += response.num_bytes_downloaded
    assert total < 300 * 1024, total
    with capsys.disabled():
        print(f"\nUI: first view {total / 1024:.1f} KiB compressed ({len(files)} files)")


@pytest.mark.parametrize(
    "path",
    ["/ui/%00", "/ui/..%2F..%2Fapp.py", "/ui/index.html/x", "/ui/" + "a" * 5000, "/ui/js"],
)
def test_no_file_path_reaches_the_file_system(ui_server: Server, path: str) -> None:
    answer = httpx.get(ui_server.url + path)
    assert (answer.status_code, answer.text) == (404, "404 page not found\n")


def test_files_are_revalidated_by_etag(ui_server: Server) -> None:
    first = httpx.get(ui_server.url + "/ui/js/main.js")
    assert first.headers["content-type"] == "text/javascript; charset=utf-8"
    assert first.headers["cache-control"] == "no-cache"
    again = httpx.get(
        ui_server.url + "/ui/js/main.js", headers={"If-None-Match": first.headers["etag"]}
    )
    assert (again.status_code, again.content) == (304, b"")
    for path in ("/ui", "/ui/", "/ui/index.html"):
        assert httpx.get(ui_server.url + path).content == (STATIC_DIR / "index.html").read_bytes()


def test_render_time_of_5000_lines_is_reported(
    ui_server: Server, page: Page, capsys: pytest.CaptureFixture[str]
) -> None:
    page.goto(ui(ui_server, tenant=TENANT_A, q='{app="bulk"}', limit=str(BULK_LINES)))
    expect(page.locator(".logs-toolbar .summary")).to_have_text(
        f"{BULK_LINES} lines", timeout=20_000
    )
    page.wait_for_function("() => (window.svcRenderTimings || []).some(t => t.rows === 5000)")
    timing = page.evaluate("() => window.svcRenderTimings.find(t => t.rows === 5000).ms")
    with capsys.disabled():
        print(f"\nUI: {BULK_LINES} lines parsed and rendered in {timing:.0f} ms (target 300 ms)")

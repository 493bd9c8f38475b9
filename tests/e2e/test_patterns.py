"""``GET /patterns`` through the HTTP API (the app in process): shape, levels, samples, limits, config."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import now_ns, push
from tests.e2e.server import DISCOVERY
from tests.timeline import SECOND

MINUTE = 60 * SECOND
PATHS = ["/svc/api/v1/patterns", "/loki/api/v1/patterns"]


def _get(client: httpx.Client, **params: Any) -> httpx.Response:
    return client.get(PATHS[0], params=params)


def _minute0() -> int:
    """A whole minute ten minutes ago."""
    return (now_ns() // MINUTE - 10) * MINUTE


@pytest.mark.parametrize("path", PATHS)
def test_disabled_answers_404(make_app: Callable[..., InProcessApp], path: str) -> None:
    srv = make_app({"pattern_ingester": {"enabled": False}})
    with srv.client("t") as client:
        response = client.get(path, params={"query": '{app="a"}'})
    assert response.status_code == 404
    assert response.text == ""


def test_enabled_by_default(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        response = _get(client, query='{app="none"}')
    assert response.status_code == 200
    assert response.content == b'{"status":"success","data":[]}\n'


def test_tenant_is_checked_first(app: InProcessApp) -> None:
    with app.client() as client:
        response = _get(client, query='{app="a"}')
    assert (response.status_code, response.text) == (401, "no org id")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param({}, "parse error : syntax error: unexpected $end", id="missing-query"),
        pytest.param(
            {"query": '{app="a"} |= "x"'}, "only label matchers are supported", id="pipeline"
        ),
        pytest.param(
            {"query": 'rate({app="a"}[1m])'}, "only label matchers are supported", id="metric"
        ),
        pytest.param(
            {"query": '{app="a"}', "start": "20", "end": "10"},
            "end timestamp must not be before or equal to start time",
            id="end-before-start",
        ),
        pytest.param(
            {"query": '{app="a"}', "start": "x"},
            "could not parse 'start' parameter",
            id="bad-start",
        ),
        pytest.param(
            {"query": '{app="a"}', "step": "0"},
            "zero or negative query resolution step widths are not accepted. "
            "Try a positive integer",
            id="zero-step",
        ),
        pytest.param(
            {"query": '{app="a"}', "start": "0", "end": "100000", "step": "1"},
            "exceeded maximum resolution of 11,000 points per time series. "
            "Try increasing the value of the step parameter",
            id="too-many-points",
        ),
    ],
)
def test_validation(app: InProcessApp, tenant: str, params: dict[str, str], message: str) -> None:
    with app.client(tenant) as client:
        response = _get(client, **params)
    assert response.status_code == 400
    assert response.text.startswith(message)


def _shop(minute0: int) -> list[tuple[int, str]]:
    """Plain text over three minutes: login 20+15 lines, GET 25+0+12, cache misses 0+40."""
    m = [minute0 + k * MINUTE for k in range(3)]
    entries = []
    for i in range(20):
        entries.append((m[0] + i * SECOND, f"login succeeded for user {1000 + i} from 10.0.0.{i}"))
    for i in range(15):
        entries.append((m[1] + i * SECOND, f"login succeeded for user {2000 + i} from 10.0.1.{i}"))
    for i in range(25):
        entries.append((m[0] + 30 * SECOND + i, f"GET /api/items/{i} returned 200 in {i * 9}ms"))
    for i in range(12):
        entries.append((m[2] + i * SECOND, f"GET /api/items/{50 + i} returned 404 in {i}ms"))
    for i in range(40):
        entries.append((m[1] + 20 * SECOND + i, f"cache miss for key {0xABCDEF00 + i:x}"))
    return sorted(entries)


@pytest.mark.parametrize("path", PATHS)
def test_templates_are_found_and_counted_per_step(
    app: InProcessApp, tenant: str, path: str
) -> None:
    minute0 = _minute0()
    with app.client(tenant) as client:
        push(client, [({"app": "shop"}, _shop(minute0))])
        push(
            client,
            [
                (
                    {"app": "other"},
                    [(minute0 + i, f"unrelated line {i} elsewhere") for i in range(40)],
                )
            ],
        )
        response = client.get(
            path,
            params={
                "query": '{app="shop"}',
                "start": str(minute0 - MINUTE),
                "end": str(minute0 + 5 * MINUTE),
                "step": "60s",
            },
        )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    t0 = minute0 // SECOND
    assert response.json() == {
        "status": "success",
        "data": [
            # Most lines first; zero buckets only between a series' first and last.
            {"pattern": "cache miss for key <_>", "level": "unknown", "samples": [[t0 + 60, 40]]},
            {
                "pattern": "GET <_> returned <_> in <_>",
                "level": "unknown",
                "samples": [[t0, 25], [t0 + 60, 0], [t0 + 120, 12]],
            },
            {
                "pattern": "login succeeded for user <_> from <_>",
                "level": "unknown",
                "samples": [[t0, 20], [t0 + 60, 15]],
            },
        ],
    }


def test_response_bytes_are_the_references(app: InProcessApp, tenant: str) -> None:
    # Keys in the order pattern, level, samples; <, > and & escaped as Go escapes them;
    # a closing newline.
    minute0 = _minute0()
    entries = [(minute0 + i * SECOND, f"a&b <tag> took {i}ms now") for i in range(30)]
    with app.client(tenant) as client:
        push(client, [({"app": "bytes"}, entries)])
        response = _get(
            client, query='{app="bytes"}', start=str(minute0), end=str(minute0 + MINUTE), step="60s"
        )
    t0 = minute0 // SECOND
    assert response.content == (
        b'{"status":"success","data":[{"pattern":"a\\u0026b \\u003ctag\\u003e took '
        b'\\u003c_\\u003e now","level":"unknown","samples":[[' + str(t0).encode() + b",30]]}]}\n"
    )


def test_levels_split_patterns(make_app: Callable[..., InProcessApp], tenant: str) -> None:
    app = make_app({"limits_config": DISCOVERY})
    minute0 = _minute0()
    json_lines = [
        (
            minute0 + i * SECOND // 4,
            json.dumps({"level": ("info", "error")[i % 2], "msg": f"job {i} done in {i}ms"}),
        )
        for i in range(80)
    ]
    metadata_lines = [
        (minute0 + i * SECOND, f"disk {i} almost full", {"detected_level": "WARNING"})
        for i in range(30)
    ]
    logfmt_lines = [
        (minute0 + i * SECOND, f'level=debug msg="cache warmed" keys={i}') for i in range(30)
    ]
    with app.client(tenant) as client:
        push(
            client,
            [
                ({"app": "jobs"}, json_lines),
                ({"app": "disk"}, metadata_lines),
                ({"app": "cache"}, logfmt_lines),
            ],
        )
        data = _get(
            client,
            query='{app=~"jobs|disk|cache"}',
            start=str(minute0),
            end=str(minute0 + 2 * MINUTE),
            step="120s",
        ).json()["data"]
    t0 = minute0 // SECOND - minute0 // SECOND % 120
    assert sorted((r["pattern"], r["level"], r["samples"]) for r in data) == [
        ("<_>job <_> done in <_>", "error", [[t0, 40]]),
        ("<_>job <_> done in <_>", "info", [[t0, 40]]),
        ("disk <_> almost full", "warn", [[t0, 30]]),
        ('level=debug msg="cache warmed" keys=<_>', "debug", [[t0, 30]]),
    ]


def test_patterns_filter_the_lines_they_came_from(app: InProcessApp, tenant: str) -> None:
    minute0 = _minute0()
    with app.client(tenant) as client:
        push(client, [({"app": "shop"}, _shop(minute0))])
        data = _get(client, query='{app="shop"}', start=str(minute0 - SECOND)).json()["data"]
        assert len(data) == 3
        for record in data:
            query = '{app="shop"} |> "' + record["pattern"].replace('"', '\\"') + '"'
            found = client.get(
                "/svc/api/v1/query_range",
                params={"query": query, "start": str(minute0 - SECOND), "limit": 1000},
            ).json()["data"]["result"]
            count = sum(len(stream["values"]) for stream in found)
            assert count == sum(c for _, c in record["samples"])


def test_default_step_and_window(app: InProcessApp, tenant: str) -> None:
    now = now_ns()
    entries = [
        (now - (100 + i) * SECOND, f"periodic sync completed in {i}ms ok") for i in range(30)
    ]
    with app.client(tenant) as client:
        push(client, [({"app": "sync"}, entries)])
        response = _get(client, query='{app="sync"}')
    assert response.status_code == 200, response.text
    (record,) = response.json()["data"]
    # One hour by default: step max(3600 / 250, 1) = 14s (above the 10s floor).
    assert all(ts % 14 == 0 for ts, _ in record["samples"])
    assert sum(count for _, count in record["samples"]) == 30


def test_small_patterns_are_left_out(app: InProcessApp, tenant: str) -> None:
    now = now_ns()
    with app.client(tenant) as client:
        push(
            client,
            [
                (
                    {"app": "rare"},
                    [(now - i * SECOND, f"this happened {i} times here") for i in range(29)],
                )
            ],
        )
        rare = _get(client, query='{app="rare"}')
    assert rare.json() == {"status": "success", "data": []}


def test_step_at_the_sample_interval_gives_raw_samples(app: InProcessApp, tenant: str) -> None:
    # With the step at the 10s interval (1s is raised to it), samples come as recorded:
    # no zero sample for the empty interval between them.
    base = _minute0()
    entries = [(base + i * SECOND, f"heartbeat number {i} sent to peer") for i in range(15)]
    entries += [
        (base + 30 * SECOND + i * SECOND, f"heartbeat number {i} sent to peer") for i in range(15)
    ]
    with app.client(tenant) as client:
        push(client, [({"app": "hb"}, entries)])
        response = _get(
            client, query='{app="hb"}', start=str(base), end=str(base + MINUTE), step="1s"
        )
    (record,) = response.json()["data"]
    t0 = base // SECOND
    assert record["samples"] == [[t0, 10], [t0 + 10, 5], [t0 + 30, 10], [t0 + 40, 5]]


def test_lines_beyond_retention_are_not_mined(app: InProcessApp, tenant: str) -> None:
    # The reference keeps patterns for retain_for (3h): older lines count for nothing,
    # and a query that ends before then answers nothing.
    now = now_ns()
    old = [
        (now - 4 * 3600 * SECOND + i * SECOND, f"sweeper pass {i} finished cleanly")
        for i in range(40)
    ]
    recent = [
        (now - 3600 * SECOND + i * SECOND, f"sweeper pass {i} finished cleanly") for i in range(40)
    ]
    with app.client(tenant) as client:
        push(client, [({"app": "sweeper"}, old + recent)])
        whole = _get(
            client, query='{app="sweeper"}', start=str(now - 5 * 3600 * SECOND), step="3600s"
        )
        before = _get(
            client,
            query='{app="sweeper"}',
            start=str(now - 5 * 3600 * SECOND),
            end=str(now - int(3.5 * 3600) * SECOND),
        )
    (record,) = whole.json()["data"]
    assert sum(count for _, count in record["samples"]) == 40
    assert before.json() == {"status": "success", "data": []}


def test_tenants_merge_by_pattern(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"querier": {"multi_tenant_queries_enabled": True}})
    minute0 = _minute0()
    lines = [f"worker {i} picked job {i * 3}" for i in range(30)]
    with srv.client("a") as client:
        push(
            client, [({"app": "w"}, [(minute0 + i * SECOND, line) for i, line in enumerate(lines)])]
        )
    with srv.client("b") as client:
        push(
            client,
            [
                (
                    {"app": "w"},
                    [(minute0 + MINUTE + i * SECOND, line) for i, line in enumerate(lines)],
                )
            ],
        )
    with srv.client("a|b") as client:
        response = _get(
            client, query='{app="w"}', start=str(minute0), end=str(minute0 + 2 * MINUTE), step="60s"
        )
    t0 = minute0 // SECOND
    # Each tenant's answer is kept separately, then joined by pattern text.
    assert response.json()["data"] == [
        {
            "pattern": "worker <_> picked job <_>",
            "level": "unknown",
            "samples": [[t0, 30], [t0 + 60, 30]],
        }
    ]


def test_streams_the_reference_writes_itself_are_not_mined(app: InProcessApp, tenant: str) -> None:
    minute0 = _minute0()
    entries = [(minute0 + i * SECOND, f"pattern entry {i} written back") for i in range(40)]
    with app.client(tenant) as client:
        pushed = push(client, [({"app": "internal", "__pattern__": "svc"}, entries)])
        assert pushed.status_code == 204, pushed.text
        response = _get(client, query='{app="internal"}', start=str(minute0))
    assert response.json() == {"status": "success", "data": []}

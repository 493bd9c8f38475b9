"""``GET /patterns``: disabled answer, validation, mined patterns and their samples."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.app import InProcessApp
from tests.e2e.clients import now_ns, push
from tests.timeline import SECOND

PATHS = ["/svc/api/v1/patterns", "/loki/api/v1/patterns"]


@pytest.fixture(scope="module")
def enabled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessApp]:
    srv = InProcessApp(tmp_path_factory.mktemp("patterns"), {"pattern_ingester": {"enabled": True}})
    srv.start()
    yield srv
    srv.stop()


def _get(client: httpx.Client, **params: Any) -> httpx.Response:
    return client.get(PATHS[0], params=params)


@pytest.mark.parametrize("path", PATHS)
def test_disabled_answers_404(app: InProcessApp, tenant: str, path: str) -> None:
    with app.client(tenant) as client:
        response = client.get(path, params={"query": '{app="a"}'})
    assert response.status_code == 404
    assert response.text == ""


def test_tenant_is_checked_first(enabled: InProcessApp) -> None:
    with enabled.client() as client:
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
def test_validation(
    enabled: InProcessApp, tenant: str, params: dict[str, str], message: str
) -> None:
    with enabled.client(tenant) as client:
        response = _get(client, **params)
    assert response.status_code == 400
    assert response.text.startswith(message)


def _templated(minute0: int) -> list[tuple[int, str]]:
    """Three templates: A 5+3 lines, B 4+0+2 lines (a gap), C 0+6 lines over 3 minutes."""
    m = [minute0 + k * 60 * SECOND for k in range(3)]
    entries: list[tuple[int, str]] = []
    for i in range(5):
        entries.append((m[0] + i * SECOND, f"login succeeded for user {1000 + i} from 10.0.0.{i}"))
    for i in range(3):
        entries.append((m[1] + i * SECOND, f"login succeeded for user {2000 + i} from 10.0.1.{i}"))
    for i in range(4):
        entries.append((m[0] + 30 * SECOND + i, f"GET /api/items/{i} returned 200 in {i * 9}ms"))
    for i in range(2):
        entries.append((m[2] + i * SECOND, f"GET /api/items/{50 + i} returned 404 in {i}ms"))
    for i in range(6):
        entries.append((m[1] + 20 * SECOND + i, f"cache miss for key {0xABCDEF00 + i:x}"))
    return sorted(entries)


@pytest.mark.parametrize("path", PATHS)
def test_templates_are_found_and_counted_per_step(
    enabled: InProcessApp, tenant: str, path: str
) -> None:
    minute0 = (now_ns() // (60 * SECOND) - 10) * 60 * SECOND
    with enabled.client(tenant) as client:
        push(client, [({"app": "shop"}, list(_templated(minute0)))])
        push(client, [({"app": "other"}, [(minute0, "unrelated line in another stream")] * 3)])
        response = client.get(
            path,
            params={
                "query": '{app="shop"}',
                "start": str(minute0 - 60 * SECOND),
                "end": str(minute0 + 5 * 60 * SECOND),
                "step": "60s",
            },
        )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    t0 = minute0 // SECOND
    assert response.json() == {
        "status": "success",
        "data": [
            {
                "pattern": "login succeeded for user <_> from <_>",
                "samples": [[t0, 5], [t0 + 60, 3]],
            },
            {
                "pattern": "GET /api/items/<_> returned <_> in <_>",
                "samples": [[t0, 4], [t0 + 60, 0], [t0 + 120, 2]],
            },
            {"pattern": "cache miss for key <_>", "samples": [[t0 + 60, 6]]},
        ],
    }


def test_patterns_filter_the_lines_they_came_from(enabled: InProcessApp, tenant: str) -> None:
    minute0 = (now_ns() // (60 * SECOND) - 10) * 60 * SECOND
    with enabled.client(tenant) as client:
        push(client, [({"app": "shop"}, list(_templated(minute0)))])
        data = _get(client, query='{app="shop"}', start=str(minute0 - SECOND)).json()["data"]
        for record in data:
            query = '{app="shop"} |> "' + record["pattern"].replace('"', '\\"') + '"'
            found = client.get(
                "/svc/api/v1/query_range",
                params={"query": query, "start": str(minute0 - SECOND), "limit": 1000},
            ).json()["data"]["result"]
            count = sum(len(stream["values"]) for stream in found)
            assert count == sum(c for _, c in record["samples"])


def test_default_step_and_window(enabled: InProcessApp, tenant: str) -> None:
    now = now_ns()
    entries = [(now - (100 + i) * SECOND, f"periodic sync completed in {i}ms ok") for i in range(5)]
    with enabled.client(tenant) as client:
        push(client, [({"app": "sync"}, entries)])
        response = _get(client, query='{app="sync"}')
    assert response.status_code == 200, response.text
    (record,) = response.json()["data"]
    # One hour by default: step max(3600 / 250, 1) = 14s (above the 10s sample interval).
    assert all(ts % 14 == 0 for ts, _ in record["samples"])
    assert sum(count for _, count in record["samples"]) == 5


def test_small_clusters_and_no_data(enabled: InProcessApp, tenant: str) -> None:
    now = now_ns()
    with enabled.client(tenant) as client:
        push(client, [({"app": "rare"}, [(now - SECOND, "this happened only twice here")] * 2)])
        rare = _get(client, query='{app="rare"}')
        empty = _get(client, query='{app="none"}')
    assert rare.json() == {"status": "success", "data": []}
    assert empty.json() == {"status": "success", "data": []}


def test_step_below_sample_interval_uses_the_interval(enabled: InProcessApp, tenant: str) -> None:
    base = (now_ns() // (60 * SECOND) - 5) * 60 * SECOND
    entries = [(base + i * 3 * SECOND, f"heartbeat number {i} sent to peer") for i in range(8)]
    with enabled.client(tenant) as client:
        push(client, [({"app": "hb"}, entries)])
        response = _get(
            client, query='{app="hb"}', start=str(base), end=str(base + 60 * SECOND), step="1s"
        )
    (record,) = response.json()["data"]
    t0 = base // SECOND
    assert record["samples"] == [[t0, 4], [t0 + 10, 3], [t0 + 20, 1]]

"""No query can stall the server or exhaust its memory (issue #12), through real HTTP."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.clients import push
from tests.e2e.server import Server
from tests.timeline import BASE

WINDOW = {"start": str(BASE - 10**9), "end": str(BASE + 3600 * 10**9)}
TIMEOUT = 3.0


def _rss_peak_kib(server: Server) -> int:
    assert server.process is not None
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(
        tmp_path_factory.mktemp("safety"),
        {"limits_config": {"query_timeout": f"{TIMEOUT:g}s"}},
    ).start()
    with srv.client("hostile") as client:
        streams: list[tuple[dict[str, str], list[Any]]] = [
            ({"app": "n40"}, [(BASE, "a" * 40 + "!")]),
            ({"app": "x"}, [(BASE + i, f"line {i}") for i in range(50)]),
            ({"app": "heavy"}, [(BASE + i, f"heavy {i} " + "b" * 100) for i in range(3000)]),
        ]
        assert push(client, streams).status_code == 204
    yield srv
    srv.stop()


def _get(server: Server, query: str, tenant: str = "hostile") -> tuple[httpx.Response, float]:
    started = time.monotonic()
    with server.client(tenant) as client:
        response = client.get(
            "/loki/api/v1/query_range", params={"query": query, "limit": 5000, **WINDOW}
        )
    return response, time.monotonic() - started


def test_catastrophic_regex_answers_fast(hostile: Server) -> None:
    response, took = _get(
        hostile, '{app="n40"} | line_format "{{ regexReplaceAll \\"(a+)+$\\" __line__ \\"x\\" }}"'
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"]["result"][0]["values"][0][1] == "a" * 40 + "!"
    assert took < 5.0


@pytest.mark.parametrize(
    ("query", "entry"),
    [
        ('{app="x"} | line_format "{{ repeat 100000000 \\"x\\" }}"', "4.2MB"),
        ('{app="x"} | line_format "{{ printf \\"%010000000d\\" 1 }}"', "4.2MB"),
    ],
)
def test_unbounded_template_output_answers_400_with_bounded_memory(
    hostile: Server, query: str, entry: str
) -> None:
    before = _rss_peak_kib(hostile)
    response, took = _get(hostile, query)
    assert response.status_code == 400
    assert response.text.startswith(f"template output too large (entry: more than {entry}")
    assert took < 5.0
    assert _rss_peak_kib(hostile) - before < 200 * 1024


def test_heavy_query_stops_at_the_deadline_and_never_stalls_the_server(hostile: Server) -> None:
    """While two pathological queries run, /ready, /metrics and another tenant's pushes
    each answer within a second; the queries end with 504 near the timeout."""
    pathological = [
        '{app="heavy"} | line_format "{{ range 100000000 }}{{ end }}"',
        'sum(count_over_time({app="heavy"} | line_format "{{ range 20000 }}{{ end }}" [1h]))',
    ]
    results: list[tuple[httpx.Response, float]] = []
    workers = [
        threading.Thread(target=lambda q=q: results.append(_get(hostile, q))) for q in pathological
    ]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    latencies: list[float] = []
    with hostile.client("bystander") as client:
        index = 0
        while any(worker.is_alive() for worker in workers):
            for call in (
                lambda: client.get("/ready"),
                lambda: client.get("/metrics"),
                lambda i=index: push(client, [({"app": "calm"}, [(BASE + i, f"still {i}")])]),
            ):
                started = time.monotonic()
                assert call().status_code in (200, 204)
                latencies.append(time.monotonic() - started)
            index += 1
            time.sleep(0.05)
    for worker in workers:
        worker.join()
    assert max(latencies) < 1.0
    assert index >= 5
    for response, took in results:
        assert response.status_code == 504, response.text
        assert response.text.startswith("request timed out")
        assert TIMEOUT - 0.5 < took < TIMEOUT + 3.0
    with hostile.client("bystander") as client:
        data = client.get("/loki/api/v1/query_range", params={"query": '{app="calm"}', **WINDOW})
        assert len(data.json()["data"]["result"][0]["values"]) == index

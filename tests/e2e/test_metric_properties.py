"""No metric query a client can write gets a 5xx: random compositions of range
aggregations (with unwrap conversions), vector aggregations, binary operators, groupings
and literals over a small corpus with malformed values and lines, half of it flushed to
Parquet and half in the head (``benchmarks/metric_fuzz.py``, which also runs any number
of random draws: ``python -m benchmarks.metric_fuzz --count 5000``).

Derandomized: CI draws the same queries on every run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from benchmarks.metric_fuzz import load, requests, run_request
from tests.e2e.server import Server

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
)


@pytest.fixture(scope="module")
def fuzz_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    server = Server(tmp_path_factory.mktemp("metric-fuzz")).start()
    client = server.client("fuzz")
    load(client)
    yield client
    client.close()
    server.stop()


@SETTINGS
@given(request=requests())
def test_no_server_error(fuzz_client: httpx.Client, request: tuple[str, dict[str, str]]) -> None:
    started = time.monotonic()
    run_request(fuzz_client, *request)
    # A slow answer on this small corpus would be a plan gone quadratic.
    assert time.monotonic() - started < 20, request

"""Cached plans (``svc.query.plan_cache``): compiled once per query shape with stand-ins for
the range, run for each request's range; a query mentioning a stand-in is compiled for its
own range and must keep its own numbers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from logql_to_sql import Direction, Grid, ast, parse
from svc.ingest.labels import label_key
from svc.ingest.model import PushStream
from svc.query.engine import QueryEngine
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.query.metric_queries import run_metric_query
from svc.query.plan_cache import START
from svc.storage.store import Store, StoreSettings

TENANT = "t"
BASE = 1_700_000_000_000_000_000
SECOND = 10**9
LABELS = (("app", "p"),)
LINES = [f"n{i} {START}" if i % 2 else f"n{i} other" for i in range(20)]
"""One line every second; the odd ones mention the stand-in start."""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryEngine]:
    root = Path(tmp_path_factory.mktemp("store"))
    store = Store(StoreSettings(root, 1 << 30, 1e9, 1e9, 64 << 20, 4096))
    store.open()
    stream = PushStream(
        LABELS, label_key(LABELS), [BASE + i * SECOND for i in range(20)], LINES, None
    )
    asyncio.run(store.push(TENANT, [stream]))
    engine = QueryEngine(store, timeout_seconds=60)
    yield engine
    engine.close()
    store.close(flush=False)


def _lines(engine: QueryEngine, logql: str, start: int, end: int) -> list[str]:
    query = parse(logql)
    assert isinstance(query, ast.LogQuery)
    request = LogQueryRequest(
        query, BASE + start * SECOND, BASE + end * SECOND, 100, Direction.FORWARD
    )
    streams, _ = run_log_query(engine, TENANT, request)
    return [line for stream in streams for _, line in stream.values]


@pytest.mark.parametrize(("start", "end"), [(0, 20), (3, 7), (15, 16)])
def test_a_cached_log_plan_runs_for_each_range(engine: QueryEngine, start: int, end: int) -> None:
    assert _lines(engine, '{app="p"} |= "n"', start, end) == LINES[start:end]


def test_a_log_query_mentioning_the_stand_in_keeps_its_numbers(engine: QueryEngine) -> None:
    assert _lines(engine, f'{{app="p"}} |= "{START}"', 2, 9) == [LINES[i] for i in (3, 5, 7)]


def _counts(engine: QueryEngine, logql: str, start: int) -> list[float]:
    expr = parse(logql)
    assert isinstance(expr, ast.MetricExpr)
    grid = Grid(start_ns=BASE + start * SECOND, step_ns=5 * SECOND, steps=3)
    result, _ = run_metric_query(engine, TENANT, expr, grid, max_series=100, instant=False)
    return [value for series in result.series for _, value in series.points]


@pytest.mark.parametrize("start", [5, 8])
def test_a_cached_metric_plan_runs_for_each_grid_start(engine: QueryEngine, start: int) -> None:
    # Windows (t - 5s, t]: five entries each, the grid inside the data.
    assert _counts(engine, 'sum(count_over_time({app="p"} |= "n" [5s]))', start) == [5.0] * 3


def test_a_metric_query_mentioning_the_stand_in_keeps_its_numbers(engine: QueryEngine) -> None:
    counts = _counts(engine, f'sum(count_over_time({{app="p"}} |= "{START}" [4s]))', 5)
    # Windows (1s, 5s], (6s, 10s], (11s, 15s]: the odd seconds among them.
    assert counts == [2.0, 2.0, 2.0]

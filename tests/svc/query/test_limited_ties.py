"""A limited log query whose limit falls in a run of entries of one time answers the same
entries every time: the scan that stops early reads further when it stopped in the run."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from logql_to_sql import ast, parse
from logql_to_sql.sql.compiler import Direction
from svc.ingest.labels import label_key
from svc.model import PushStream
from svc.query.engine import QueryEngine
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.storage.store import Store
from tests.stores import open_store
from tests.timeline import BASE

TENANT = "t"
STREAMS = 10
LATEST = BASE + 10**9
EARLIEST = BASE


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """Ten streams, each with one entry at the earliest and one at the latest time (all
    ten of a time share it), and entries in between."""
    streams = []
    for n in range(STREAMS):
        labels = (("app", "x"), ("n", str(n)))
        between = [BASE + (n + 1) * 10**7 + i for i in range(5)]
        streams.append(
            PushStream(
                labels,
                label_key(labels),
                [EARLIEST, *between, LATEST],
                [f"tie {n}", *(f"other {n} {i}" for i in range(5)), f"tie {n}"],
                None,
            )
        )
    with open_store(Path(tmp_path_factory.mktemp("store"))) as opened:
        asyncio.run(opened.push(TENANT, streams))
        yield opened


def _lines(store: Store, tmp_path: Path, direction: Direction, limit: int) -> list[str]:
    engine = QueryEngine(store, timeout_seconds=30.0, spill_dir=tmp_path / "spill")
    query = parse('{app="x"} |= "tie"')
    assert isinstance(query, ast.LogQuery)
    request = LogQueryRequest(query, BASE, BASE + 10**10, limit, direction)
    try:
        streams, _ = run_log_query(engine, TENANT, request)
    finally:
        engine.close()
    return sorted(line for stream in streams for _, line in stream.values)


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_the_limit_in_a_run_of_one_time_takes_the_same_entries(
    store: Store, tmp_path: Path, limit: int
) -> None:
    # Ties are broken by the line: backward the last lines, forward the first.
    backward = _lines(store, tmp_path, Direction.BACKWARD, limit)
    assert backward == sorted(f"tie {n}" for n in range(STREAMS - limit, STREAMS))
    forward = _lines(store, tmp_path, Direction.FORWARD, limit)
    assert forward == sorted(f"tie {n}" for n in range(limit))

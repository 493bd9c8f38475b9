"""A query engine and an SQL service over the test's store, and reading an answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from svc.query.engine import QueryEngine
from svc.sql.service import SqlLimits, SqlRequest, SqlService
from svc.storage.store import Store


@pytest.fixture
def engine(store: Store) -> Iterator[QueryEngine]:
    started = QueryEngine(store, timeout_seconds=30)
    yield started
    started.close()


@pytest.fixture
def service(engine: QueryEngine, tmp_path: Path) -> Iterator[SqlService]:
    limits = SqlLimits(timeout_seconds=30, max_rows=10_000, memory_limit=256 << 20, threads=1)
    started = SqlService(engine, limits, tmp_path / "spill")
    yield started
    started.close()


def sql_rows(
    service: SqlService, tenant: str, text: str, start_ns: int, end_ns: int
) -> list[dict[str, Any]]:
    """Every row of a statement's answer."""
    result = service.open(SqlRequest((tenant,), text, start_ns, end_ns, time.monotonic() + 30))
    rows: list[dict[str, Any]] = []
    try:
        while (batch := result.next_batch()) is not None:
            rows += batch.to_pylist()
    finally:
        result.close()
    return rows

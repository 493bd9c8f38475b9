"""Every valid query of the front end's fixtures compiles to SQL that DuckDB binds.

The compiler builds trees without copying them (nodes are handed over, not cloned), so
this also checks that compiling a query twice renders the same text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

import logql_to_sql as L
from logql_to_sql import ast
from logql_to_sql.sql.compiler import Direction, compile_log_query
from logql_to_sql.sql.metric_query import compile_metric_query
from logql_to_sql.sql.range_aggregation import Grid
from svc.query.engine import QueryEngine
from svc.storage.store import Store, StoreSettings
from tests.logql_to_sql.syntax._cases import load_pairs

GRID = Grid(start_ns=1_700_000_000_000_000_000, step_ns=60 * 10**9, steps=5)


def _queries() -> list[object]:
    queries = []
    for query, _ in load_pairs("identity.txt"):
        try:
            L.parse(query)
        except L.LogQLError:
            continue
        queries.append(pytest.param(query, id=query[:60]))
    return queries


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryEngine]:
    store = Store(
        StoreSettings(Path(tmp_path_factory.mktemp("empty")), 1 << 30, 1e9, 1e9, 1 << 26, 4096)
    )
    store.open()
    engine = QueryEngine(store, timeout_seconds=60)
    yield engine
    engine.close()
    store.close(flush=False)


def _texts(expr: ast.Expr) -> list[str]:
    if isinstance(expr, ast.LogQuery):
        return [
            compile_log_query(
                expr,
                start_ns=0,
                end_ns=10**18,
                limit=limit,
                direction=Direction.BACKWARD,
                leave_json_labels=leave,
            ).sql()
            for limit, leave in ((100, False), (100, True), (None, False))
        ]
    assert isinstance(expr, ast.MetricExpr)
    plan = compile_metric_query(expr, grid=GRID)
    selects = [plan.select]
    selects += [query for pair in plan.error_probes for query in pair]
    selects += [build() for build in plan.error_labels]
    return [select.sql(dialect="duckdb") for select in selects]


@pytest.mark.parametrize("query", _queries())
def test_compiles_binds_and_renders_the_same_twice(engine: QueryEngine, query: str) -> None:
    expr = L.parse(query)
    texts = _texts(expr)
    assert _texts(expr) == texts
    view = engine.store.view("t", 0, 10**18)
    cursor = engine._db.cursor()
    try:
        for text in texts:
            cursor.execute("EXPLAIN " + engine.bound_sql(text, view, cursor)).fetchall()
    except duckdb.Error as exc:  # pragma: no cover - the failure message is the point
        pytest.fail(f"DuckDB rejects the SQL of {query!r}: {exc}")
    finally:
        cursor.close()

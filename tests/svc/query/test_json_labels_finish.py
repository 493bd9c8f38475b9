"""A limited ``| json`` query finishes its labels in Python (``json_result_labels``); the
result must be what the SQL second phase gives for the same query, line for line."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from logql_to_sql import ast, parse
from logql_to_sql.sql.compiler import Direction, compile_log_query
from svc.ingest.labels import label_key
from svc.model import PushStream
from svc.query.engine import QueryEngine
from svc.query.log_queries import (
    LogQueryRequest,
    _cached_plan,
    run_log_query,
    stream_labels_lookup,
)
from svc.query.streams import ResultStream, group_streams
from tests.stores import open_store
from tests.timeline import BASE

TENANT = "t"

LINES = [
    '{"level":"info","status":500,"msg":"a"}',
    '{"level":"warn","status":"abc","n":{"x":1,"y":{"z":"deep"}}}',
    '{"app":"from-line","status":503,"app_extracted":"twice"}',
    '{"dup":1,"dup":2,"status":501}',
    '{"lvl":"x", "status": 502, broken',
    "not json at all status=500",
    '{"num":1.50,"e":1e3,"neg":-0,"status":"1e3"}',
    '{"s":"x\\ud800y","status":null,"t":true,"f":false,"arr":[1],"o":{}}',
    '{"9x":"lead","a-b":"dash","":"empty","status":"","env":"line-env"}',
    "",
    '  {"status":599}  ',
    '{"trace":"' + "q" * 50 + '","status":500}',
]


def _streams() -> list[PushStream]:
    streams = []
    for index, labels in enumerate(
        [
            (("app", "a"), ("env", "prod")),
            (("app", "b"), ("env", "dev"), ("status", "stream")),
        ]
    ):
        metadata: list[tuple[tuple[str, str], ...]] = [
            (("env", "md"), ("trace_id", f"t{i}")) if i % 3 == 0 else () for i in range(len(LINES))
        ]
        streams.append(
            PushStream(
                labels,
                label_key(labels),
                [BASE + (index * len(LINES) + i) * 10**9 for i in range(len(LINES))],
                list(LINES),
                metadata,
            )
        )
    return streams


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryEngine]:
    with open_store(Path(tmp_path_factory.mktemp("store"))) as store:
        asyncio.run(store.push(TENANT, _streams()))
        engine = QueryEngine(store, timeout_seconds=60)
        yield engine
        engine.close()


def _through_sql(engine: QueryEngine, query: ast.LogQuery, limit: int) -> list[ResultStream]:
    plan = compile_log_query(
        query, start_ns=BASE, end_ns=BASE + 10**12, limit=limit, direction=Direction.BACKWARD
    )
    assert not plan.json_labels_left
    rows, _, _ = engine.run_log_query(TENANT, plan, BASE, BASE + 10**12)
    return group_streams(rows, stream_labels_lookup(engine, TENANT), backward=True)


@pytest.mark.parametrize(
    "logql",
    [
        '{app=~".+"} | json',
        '{app=~".+"} | json | status >= 500',
        '{app=~".+"} | json | status > 100 or level="warn"',
        '{app=~".+"} |= "status" | json | __error__ != "" ',
        '{app=~".+"} | json | app_extracted != ""',
        '{app=~".+"} | json | status=~"5.*" |= "a"',
        '{app="b"} | json | status="stream"',
    ],
)
@pytest.mark.parametrize("limit", [3, 100])
def test_python_finish_matches_sql(engine: QueryEngine, logql: str, limit: int) -> None:
    query = parse(logql)
    assert isinstance(query, ast.LogQuery)
    request = LogQueryRequest(query, BASE, BASE + 10**12, limit, Direction.BACKWARD)
    assert _cached_plan(query, limit, Direction.BACKWARD, 2)[0].json_labels_left
    finished, _ = run_log_query(engine, TENANT, request)
    expected = _through_sql(engine, query, limit)
    assert [(s.labels, s.values) for s in finished] == [(s.labels, s.values) for s in expected]
    assert finished  # every query above matches some entries

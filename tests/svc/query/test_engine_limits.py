"""The engine bounds every query: deadline (also inside Python functions), template output
per line and per query, and DuckDB memory, each with its own answer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from logql_to_sql import parse
from logql_to_sql.sql.compiler import Direction, compile_log_query
from svc.errors import BadRequestError, GatewayTimeoutError, ServiceError
from svc.ingest.labels import label_key
from svc.model import PushStream
from svc.query.context import TIMEOUT_MESSAGE
from svc.query.engine import QueryEngine, ScanStats
from svc.storage.store import Store
from tests.stores import open_store
from tests.timeline import BASE

TENANT = "t"
ROWS = 3000


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    labels = (("app", "x"),)
    stream = PushStream(
        labels,
        label_key(labels),
        [BASE + i * 10**6 for i in range(ROWS)],
        [f"line {i} " + "a" * 40 + "!" for i in range(ROWS)],
        [()] * ROWS,
    )
    with open_store(Path(tmp_path_factory.mktemp("store"))) as opened:
        asyncio.run(opened.push(TENANT, [stream]))
        yield opened


def _engine(store: Store, tmp_path: Path, **options: object) -> QueryEngine:
    settings: dict[str, object] = {"timeout_seconds": 30.0, "spill_dir": tmp_path / "spill"}
    settings.update(options)
    return QueryEngine(store, **settings)  # type: ignore[arg-type]


def _run(engine: QueryEngine, logql: str, limit: int = 5000) -> int:
    plan = compile_log_query(
        parse(logql),  # type: ignore[arg-type]
        start_ns=BASE,
        end_ns=BASE + 10**12,
        limit=limit,
        direction=Direction.BACKWARD,
    )
    rows, _, _ = engine.run_log_query(TENANT, plan, BASE, BASE + 10**12)
    return int(rows.num_rows)


def _fails(engine: QueryEngine, logql: str) -> tuple[ServiceError, float]:
    started = time.perf_counter()
    with pytest.raises(ServiceError) as info:
        _run(engine, logql)
    return info.value, time.perf_counter() - started


def test_a_template_that_loops_forever_stops_at_the_deadline(store: Store, tmp_path: Path) -> None:
    engine = _engine(store, tmp_path, timeout_seconds=1.0)
    try:
        error, took = _fails(engine, '{app="x"} | line_format "{{ range 1000000000 }}{{ end }}"')
    finally:
        engine.close()
    assert isinstance(error, GatewayTimeoutError)
    assert error.message == TIMEOUT_MESSAGE
    assert 0.9 < took < 3.0


def test_catastrophic_regex_in_a_template_is_fast(store: Store, tmp_path: Path) -> None:
    engine = _engine(store, tmp_path)
    try:
        started = time.perf_counter()
        count = _run(
            engine, '{app="x"} | line_format `{{ regexReplaceAll "(a+)+$" __line__ "x" }}`'
        )
        assert count == ROWS
        assert time.perf_counter() - started < 5.0
    finally:
        engine.close()


def test_one_oversized_line_answers_400(store: Store, tmp_path: Path) -> None:
    engine = _engine(store, tmp_path, template_line_chars=1_000_000)
    try:
        error, took = _fails(engine, '{app="x"} | line_format `{{ repeat 100000000 "x" }}`')
    finally:
        engine.close()
    assert isinstance(error, BadRequestError)
    assert error.message == (
        "template output too large (entry: more than 1.0MB, limit: 1.0MB); reduce what "
        "line_format or label_format builds with repeat, padding, indent or printf widths"
    )
    assert took < 2.0


def test_printf_width_answers_400(store: Store, tmp_path: Path) -> None:
    engine = _engine(store, tmp_path)
    try:
        error, _ = _fails(engine, '{app="x"} | label_format a=`{{ printf "%010000000d" 1 }}`')
    finally:
        engine.close()
    assert isinstance(error, BadRequestError)
    assert error.message.startswith("template output too large (entry: more than 4.2MB")


def test_template_output_of_a_query_is_bounded(store: Store, tmp_path: Path) -> None:
    engine = _engine(store, tmp_path, template_query_chars=200_000)
    try:
        error, _ = _fails(engine, '{app="x"} | line_format `{{ repeat 10 __line__ }}`')
        assert isinstance(error, BadRequestError)
        assert error.message == (
            "template output too large (query: more than 200kB, limit: 200kB); consider "
            "adding more specific stream selectors or reduce the time range of the query"
        )
        assert _run(engine, '{app="x"} | line_format `{{ __line__ }}`', limit=100) == 100
    finally:
        engine.close()


def test_a_query_over_the_memory_limit_answers_400(store: Store, tmp_path: Path) -> None:
    engine = _engine(store, tmp_path, memory_limit=64 * 1024 * 1024)
    view = engine.view((TENANT,), BASE, BASE + 10**12)
    try:
        with pytest.raises(BadRequestError) as info:
            engine.execute(
                "SELECT max(len(l)) AS n FROM (SELECT list(range) AS l FROM range(30000000))",
                view,
                ScanStats(),
            )
        # The engine still serves the next query.
        assert _run(engine, '{app="x"}', limit=10) == 10
    finally:
        engine.close()
    assert info.value.message == (
        "un-shardable query too large to execute on a single querier: (query: more than "
        "67MB of memory, limit: 67MB); consider adding more specific stream selectors or "
        "reduce the time range of the query"
    )


def test_spill_directory_is_emptied_at_start(store: Store, tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    (spill / "duckdb_temp_storage-0.tmp").write_bytes(b"left by a killed process")
    _engine(store, tmp_path).close()
    assert spill.is_dir() and not any(spill.iterdir())


def test_statements_of_one_request_share_its_deadline(store: Store, tmp_path: Path) -> None:
    engine = _engine(store, tmp_path, timeout_seconds=0.5)

    def request(engine: QueryEngine) -> int:
        first = _run(engine, '{app="x"}', limit=10)
        time.sleep(0.6)  # the request's time is spent: the next statement does not start
        return first + _run(engine, '{app="x"}', limit=10)

    try:
        with pytest.raises(GatewayTimeoutError):
            asyncio.run(engine.call(request))
        assert asyncio.run(engine.call(_run, '{app="x"}', 10)) == 10
    finally:
        engine.close()


def test_a_result_over_a_quarter_of_the_memory_limit_answers_400(
    store: Store, tmp_path: Path
) -> None:
    engine = _engine(store, tmp_path, memory_limit=64 * 1024 * 1024)
    view = engine.view((TENANT,), BASE, BASE + 10**12)
    try:
        with pytest.raises(BadRequestError):
            engine.execute("SELECT range AS n FROM range(10000000)", view, ScanStats())
        table = engine.execute("SELECT range AS n FROM range(100000)", view, ScanStats())
        assert table.num_rows == 100_000
    finally:
        engine.close()

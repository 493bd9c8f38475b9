"""The columnar pipeline (``sql/columnar.py``) against the generic label-map pipeline
(``sql/stages.py``): same pipelines, same rows in a real store flushed to Parquet.

The columnar pipeline is an optimisation; the compiler picks it when the labels that
matter are known in advance (a log query's filters, a metric's ``by`` labels). Its
answers must be the generic pipeline's:

- per entry: for each pipeline, the columnar pipeline and the generic one with its
  parsers hinted (extracting only the tracked labels) are run over every entry, tracking a
  broad set of labels, and must agree with the generic pipeline extracting every label on
  which entries survive, their line, ``__error__``, ``__error_details__`` and the value of
  every tracked label;
- per query: log and metric queries compiled with ``columnar=False`` (the generic path
  everywhere) must return what the default plan returns, and the default plan must have
  taken the columnar path.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from logql_to_sql import DIALECT, Direction, Grid, ast, compile_log_query, compile_metric_query
from logql_to_sql import parse as parse_query
from logql_to_sql.sql.columnar import columnar_pipeline, columnar_supported, stream_lookups
from logql_to_sql.sql.compiler import compile_pipeline, entry_source
from logql_to_sql.sql.frame import ERROR, ERROR_DETAILS, LINE, STORED_LINE, STREAM_ID, TS
from logql_to_sql.sql.hints import stage_reads
from logql_to_sql.sql.label_filters import label_value
from svc.ingest.labels import label_key
from svc.ingest.model import PushStream
from svc.query.common_labels import common_labels
from svc.query.engine import QueryEngine, ScanStats
from svc.storage.store import Store, StoreSettings, StoreView

TENANT = "t"
BASE = 1_700_000_000_000_000_000
END = BASE + 10**13

JSON_LINES = [
    '{"level":"error","status":500,"msg":"boom","method":"GET","path":"/api/x","latency":"250ms"}',
    '{"level":"info","status":200,"a":{"b":"nested"},"arr":[1,2],"n":{"y":{"z":"deep"}}}',
    '{"level":"warn","status":"abc","app":"from-line","env":"line-env","size":"2KB"}',
    '{"dup":1,"dup":2,"status":501,"a_b":"flat","level":""}',
    '{"lvl":"x", "status": 502, broken',
    '  {"status":599,"level":"error","addr":"10.1.2.3"}  ',
    "[1,2,3]",
    '"just a string"',
    '{"level":null,"status":true,"size":"1.5MiB","latency":"1h2m"}',
    '{"a":{"b":{"c":1}},"a_b":"shadow","n_y_z":"flat-first","n":{"y":{"z":"deep"}}}',
]
LOGFMT_LINES = [
    "level=error status=500 method=GET path=/api/x latency=250ms size=2KB addr=10.1.2.3",
    'level=info status=200 msg="quoted \\"value\\" here" empty= path=/',
    'level="warn" app=from-line env=line-env trace_id=abc',
    "bad==pair level=debug =x status",
    "level=error level=info status=abc latency=1h2m size=1.5MiB addr=192.168.1.1",
    "\x1b[31mlevel=error\x1b[0m status=503 method=\x1b[1mPOST\x1b[0m",
    "level= status=404 path=/missing latency=12",
]
ACCESS_LINES = [
    '10.0.0.1 - alice [10/Oct/2000:13:55:36] "GET /index.html HTTP/1.1" 200 2326',
    '192.168.1.9 - - [10/Oct/2000:13:55:37] "POST /api HTTP/1.1" 500 12',
    "garbage line without the pattern",
    "",
]
LINES = JSON_LINES + LOGFMT_LINES + ACCESS_LINES

STREAMS = [
    (("app", "a"), ("env", "prod")),
    (("app", "b"), ("env", "dev"), ("level", "stream-level")),
    (("app", "c"), ("status", "stream")),
]
METADATA = [
    (),
    (("trace_id", "t1"),),
    (("env", "md-env"),),
    (("level", "md-level"), ("trace_id", "t2")),
]

TRACKED = frozenset(
    {
        "level",
        "status",
        "method",
        "path",
        "msg",
        "latency",
        "size",
        "addr",
        "app",
        "env",
        "trace_id",
        "a_b",
        "n_y_z",
        "first",
        "ip",
        "user",
        "verb",
        "missing",
        "level_extracted",
        "env_extracted",
        "app_extracted",
        "status_extracted",
    }
)
"""Labels both pipelines are asked about, beyond those a pipeline's filters read."""

PIPELINES = [
    "",
    '|= "level" != "debug"',
    "| json",
    '| json | level="error"',
    "| json | status >= 500",
    '| json | status > 100 or level="warn"',
    '| json first="a.b", arr="arr[0]", level',
    '| json | n_y_z != ""',
    '| json | app_extracted != "" or env_extracted != ""',
    '| json | __error__ = ""',
    '| json | __error__ != "" | __error_details__ = ""',
    "| json | latency > 100ms",
    "| json | size >= 1KB",
    '| json | addr = ip("10.0.0.0/8")',
    "| logfmt",
    "| logfmt --keep-empty",
    '| logfmt method, route="path", level',
    '| logfmt | level=~"err.*" | latency > 100ms',
    '| logfmt | level!~"debug|info" | status != 404',
    "| logfmt | size > 1KB",
    '| logfmt | addr != ip("192.168.0.0/16")',
    '| logfmt | level_extracted != ""',
    '| regexp "(?P<ip>\\\\S+) - (?P<user>\\\\S+)"',
    '| regexp "(?P<env>[a-z]+)=" | env_extracted != ""',
    '| pattern "<ip> - <user> [<_>] \\"<verb> <path> <_>\\" <status> <size>"',
    '| pattern "<_> status=<status> <_>" | status = "500"',
    '| json | drop level, status="500" | status != ""',
    '| json | keep level, status!="500"',
    '| logfmt | drop __error__, method=~"G.*"',
    '| decolorize | logfmt | level="error"',
    "| logfmt | json",
    "| json | logfmt",
    '| json | level="error" | logfmt | status >= 500',
    '| json | level="info" or status >= 500 or __error__ != ""',
    '|= "status" | logfmt | status == 500 and method="GET"',
    '| logfmt level, level_extracted | level_extracted != ""',
    '| regexp "(?P<env_extracted>[a-z]+)=(?P<env>[a-z]+)" | env_extracted != ""',
    '| regexp "(?P<level>[a-z]+)=(?P<level_extracted>[a-z]+)"',
    '| pattern "<level_extracted>=<level> <_>" | level_extracted != ""',
]


def _streams() -> list[PushStream]:
    streams = []
    count = len(LINES)
    for index, labels in enumerate(STREAMS):
        streams.append(
            PushStream(
                labels,
                label_key(labels),
                [BASE + (index * count + i) * 10**9 for i in range(count)],
                list(LINES),
                [METADATA[i % len(METADATA)] for i in range(count)],
            )
        )
    return streams


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QueryEngine]:
    store = Store(
        StoreSettings(Path(tmp_path_factory.mktemp("store")), 1 << 30, 1e9, 1e9, 64 << 20, 4096)
    )
    store.open()
    asyncio.run(store.push(TENANT, _streams()))
    store.flush()
    engine = QueryEngine(store, timeout_seconds=60)
    yield engine
    engine.close()
    store.close(flush=False)


@pytest.fixture(scope="module")
def view(engine: QueryEngine) -> StoreView:
    found = engine.store.view(TENANT, BASE, END)
    assert found.files and not found.head_tables  # rows read back from Parquet
    return found


def _rows(engine: QueryEngine, view: StoreView, select: exp.Select) -> list[tuple[Any, ...]]:
    table = engine.execute(select, view, ScanStats())
    return sorted(tuple(row.values()) for row in table.to_pylist())


def _stages(pipeline: str) -> tuple[ast.Stage, ...]:
    query = parse_query('{app=~".+"} ' + pipeline)
    assert isinstance(query, ast.LogQuery)
    return query.stages


def _per_entry(frame_select: exp.Select, values: list[exp.Expr]) -> exp.Select:
    columns = [
        exp.column(name) for name in (TS, STREAM_ID, STORED_LINE, LINE, ERROR, ERROR_DETAILS)
    ]
    labels = [value.as_(f"label_{i}") for i, value in enumerate(values)]
    return exp.select(*columns, *labels).from_(frame_select.subquery("pipeline"))


def _names(stages: tuple[ast.Stage, ...]) -> list[str]:
    reads: set[str] = set()
    for stage in stages:
        reads |= stage_reads(stage) or set()
    return sorted((TRACKED | reads) - {"__error__", "__error_details__"})


def _entries(
    engine: QueryEngine, view: StoreView, pipeline: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Per entry, what the columnar pipeline, the generic one extracting only the tracked
    labels (parsers hinted) and the generic one extracting every label make of it."""
    stages = _stages(pipeline)
    assert columnar_supported(stages)
    names = _names(stages)
    matchers = (ast.Matcher("app", ast.MatchOp.RE, ".+"),)
    lookups = stream_lookups(frozenset(names))
    columnar = columnar_pipeline(
        entry_source(matchers, [], stream_values=lookups, with_labels=False),
        stages,
        names=frozenset(names),
    )
    assert columnar is not None
    frame, tracked = columnar
    fast = _rows(engine, view, _per_entry(frame.select, [tracked.value(n) for n in names]))
    generic = [
        compile_pipeline(entry_source(matchers, []), stages, wanted=wanted)
        for wanted in (frozenset(names), None)
    ]
    hinted, full = (
        _rows(engine, view, _per_entry(g.select, [label_value(n) for n in names])) for g in generic
    )
    keys = ["ts", "stream_id", "line0", "line", "err", "errd", *names]
    return tuple(  # type: ignore[return-value]
        [dict(zip(keys, row, strict=True)) for row in rows] for rows in (fast, hinted, full)
    )


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_columnar_entries_match_the_generic_pipeline(
    engine: QueryEngine, view: StoreView, pipeline: str
) -> None:
    fast, hinted, full = _entries(engine, view, pipeline)
    assert full  # every pipeline keeps some entries
    assert fast == full
    assert hinted == full


LOG_QUERIES = [
    '{app=~".+"} | json | status > 100 or level="warn"',
    '{app=~".+"} | json | app_extracted != "" or env_extracted != ""',
    '{app=~".+"} |= "level" | logfmt | level!~"debug|info" | status != 404',
    '{app=~".+"} | logfmt level, level_extracted | level_extracted != ""',
    '{app=~".+"} | decolorize | logfmt | level="error" | line_format "{{.status}}"',
    '{app="b"} | pattern "<_> status=<status> <_>" | status = "500"',
]
"""Log queries whose filtering phase takes the columnar path."""


@pytest.mark.parametrize("logql", LOG_QUERIES)
@pytest.mark.parametrize(
    ("limit", "direction"), [(None, Direction.BACKWARD), (7, Direction.FORWARD)]
)
def test_log_query_on_the_generic_path_answers_the_same(
    engine: QueryEngine, logql: str, limit: int | None, direction: Direction
) -> None:
    query = parse_query(logql)
    assert isinstance(query, ast.LogQuery)

    def run(columnar: bool) -> tuple[str, list[dict[str, Any]]]:
        plan = compile_log_query(
            query,
            start_ns=BASE,
            end_ns=END,
            limit=limit,
            direction=direction,
            leave_json_labels=True,
            columnar=columnar,
        )
        rows, _, _ = engine.run_log_query(TENANT, plan, BASE, END)
        return plan.sql(), rows.to_pylist()

    fast_sql, fast = run(True)
    slow_sql, slow = run(False)
    assert fast_sql != slow_sql  # the default plan did take the columnar path
    assert fast == slow


METRICS = [
    'sum by (level) (count_over_time({app=~".+"} | logfmt [30s]))',
    'sum by (level, status) (rate({app=~".+"} | json | level != "info" [30s]))',
    'sum by (ip, verb) (count_over_time({app=~".+"} '
    '| pattern "<ip> - <_> [<_>] \\"<verb> <_>" [30s]))',
    'max_over_time({app=~".+"} | logfmt | unwrap latency [30s]) by (method)',
    'avg_over_time({app=~".+"} | logfmt | unwrap bytes(size) | __error__="" [30s]) by (level)',
    'sum by (env_extracted) (count_over_time({app=~".+"} | regexp "(?P<env>[a-z]+)=" [30s]))',
    'sum by (level_extracted) (count_over_time({app=~".+"} | logfmt [30s]))',
]


@pytest.mark.parametrize("logql", METRICS)
def test_metric_query_on_the_generic_path_answers_the_same(
    engine: QueryEngine, view: StoreView, logql: str
) -> None:
    expr = parse_query(logql)
    assert isinstance(expr, ast.MetricExpr)
    grid = Grid(start_ns=BASE, step_ns=10 * 10**9, steps=8)

    def run(columnar: bool) -> tuple[str, list[str]]:
        plan = compile_metric_query(expr, grid=grid, columnar=columnar)
        samples = engine.execute(plan.select, view, ScanStats()).to_pylist()
        # An entry that failed the pipeline adds a row naming the error (NULL step).
        return plan.select.sql(dialect=DIALECT), sorted(repr(row) for row in samples)

    fast_sql, fast = run(True)
    slow_sql, slow = run(False)
    assert fast_sql != slow_sql
    assert fast
    assert fast == slow


COMMON_METRICS = [
    'sum by (app) (count_over_time({app=~".+"} | logfmt [30s]))',
    'sum by (app, app_extracted) (count_over_time({app=~".+"} | json [30s]))',
    'sum by (app) (count_over_time({app=~".+"} | json | app != "a" [30s]))',
    'avg_over_time({app=~".+"} | logfmt | unwrap bytes(size) | __error__="" [30s]) by (app)',
    'sum by (app) (count_over_time({app=~".+"} | pattern "<app> - <_> [<_>]" [30s]))',
    'sum by (app, app_extracted) (count_over_time({app=~".+"} | regexp "(?P<app>[a-z]+)=" [30s]))',
    'sum by (app, env) (count_over_time({app=~".+"} | logfmt app, env [30s]))',
]


@pytest.mark.parametrize("logql", COMMON_METRICS)
def test_metric_query_skipping_labels_every_stream_has_answers_the_same(
    engine: QueryEngine, view: StoreView, logql: str
) -> None:
    """``common`` (``app`` is on every stream, ``env`` on some): parsers skip ``app``
    unless ``app_extracted`` is wanted, and the answers are the generic pipeline's."""
    common = common_labels(view.streams)
    assert common == {"app"}
    expr = parse_query(logql)
    assert isinstance(expr, ast.MetricExpr)
    grid = Grid(start_ns=BASE, step_ns=10 * 10**9, steps=8)

    def run(**options: Any) -> list[str]:
        plan = compile_metric_query(expr, grid=grid, **options)
        samples = engine.execute(plan.select, view, ScanStats()).to_pylist()
        return sorted(repr(row) for row in samples)

    answer = run(common=common)
    assert answer
    assert answer == run(columnar=False)
    assert answer == run()


def test_labels_every_stream_has_are_not_extracted() -> None:
    expr = parse_query('sum by (app) (count_over_time({app=~".+"} | logfmt [30s]))')
    assert isinstance(expr, ast.MetricExpr)
    grid = Grid(start_ns=BASE, step_ns=10 * 10**9, steps=8)
    sql = compile_metric_query(expr, grid=grid).select.sql(dialect=DIALECT)
    skipped = compile_metric_query(expr, grid=grid, common=frozenset({"app"}))
    assert "app=" in sql
    assert "app=" not in skipped.select.sql(dialect=DIALECT)

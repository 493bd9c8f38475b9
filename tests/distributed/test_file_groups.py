"""Split by groups of files, queries answer as they do whole (in process, no Ray).

The in-process engine runs the groups one after the other; the Ray engine runs the same
statements at once (``test_ray_queries``). One app holds the split-equivalence corpus in
four bands, three flushed to files (four: one band crosses midnight) and the last in
memory; each query is asked with the engine's ``file_groups`` at 1 (whole) and 3, which
must not change a byte of the answer, sums of fractional values included (``FLOAT_SUMS``).
Every range aggregation is here, with ranges below, at and above the step. Tenant ``u``
holds the ``api`` and ``web`` streams of the same corpus: queries of ``t|u`` are cut across
both tenants' files.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator
from typing import Any

import pytest

from svc.query.engine import QueryEngine
from svc.query.file_groups import file_groups
from svc.query.tenants import MultiView
from tests.conftest import UNSPLIT
from tests.e2e.app import InProcessApp
from tests.e2e.clients import push
from tests.e2e.server import merge
from tests.e2e.test_split_equivalence import (
    LOG_QUERIES,
    METRIC_QUERIES,
    MINUTE,
    SPAN,
    START,
    WINDOW,
    _corpus,
    _values_by_step,
)

BANDS = [START + 95 * MINUTE, START + 2 * 60 * MINUTE + 7 * MINUTE, START + 4 * 60 * MINUTE]
"""Where the corpus is cut: three bands flushed to files, the rest in memory."""

LATENCY = '{app=~".+"} | logfmt | unwrap duration(latency)'
MORE_METRIC_QUERIES = [
    f"min_over_time({LATENCY} [1m])",
    f"last_over_time({LATENCY} [10m]) by (app, level)",
    f"quantile_over_time(0.5, {LATENCY} [1m])",
    f"rate_counter({LATENCY} [20m])",
    'bytes_rate({app=~".+"} |= "status" [2m])',
    'count_over_time({app=~".+"} | logfmt | status >= 400 [7m])',
    'max by (level) (count_over_time({app=~".+"} | logfmt [10m]))',
    'sum by (app) (count_over_time({app=~".+"}[10m])) > bool 3',
    'count_over_time({app=~".+"}[5m]) and count_over_time({level="error"}[5m])',
    'sum(count_over_time({app="api"}[5m])) or vector(0)',
]
FLOAT_SUMS = [
    f"sum_over_time({LATENCY} [10m])",
    f"avg_over_time({LATENCY} [10m]) by (level)",
    f"stddev_over_time({LATENCY} [30m]) by (app)",
    f"stdvar_over_time({LATENCY} [30m])",
    f"rate({LATENCY} [5m])",
    f"sum by (app) (quantile_over_time(0.99, {LATENCY} [6h]))",
    f"avg(avg_over_time({LATENCY} [7m]) by (app))",
    f"stddev by (level) (avg_over_time({LATENCY} [10m]) by (app, level))",
]
"""Sums of fractional values: added in another order (per group of files, then across
groups; merged rows in another order), a DOUBLE sum would differ in the last bits, as it
does from one DuckDB thread plan to another; the compiler's sums are exact
(``logql_to_sql.sql.exact_sums``), so the answers are the same to the bit."""
QUERIES = METRIC_QUERIES + MORE_METRIC_QUERIES + FLOAT_SUMS
TENANTS = "t|u"
TENANT_QUERIES = [
    ('sum by (__tenant_id__, app) (count_over_time({app=~".+"}[5m]))', {"t", "u"}),
    ('count_over_time({__tenant_id__="u", app=~".+"}[10m])', {"u"}),
    (f"quantile_over_time(0.9, {LATENCY} [20m]) by (__tenant_id__)", {"t", "u"}),
    ('sum by (level) (rate({app=~".+"} |= "status=500" [17m]))', {None}),
    (f"max_over_time({LATENCY} [10m])", {"t", "u"}),
    (
        f"sum by (__tenant_id__) (avg_over_time({LATENCY} [10m]) by (app, __tenant_id__))",
        {"t", "u"},
    ),
    ('topk(2, sum by (app, __tenant_id__) (count_over_time({app=~".+"}[30m])))', {"t", "u"}),
]
"""Queries of two tenants, with the tenants their series are labelled with (None: pooled
across both)."""


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessApp]:
    settings = merge(UNSPLIT, {"querier": {"multi_tenant_queries_enabled": True}})
    instance = InProcessApp(tmp_path_factory.mktemp("groups"), settings).start()
    corpus = _corpus()
    for low, high in zip([0, *BANDS], [*BANDS, 2 * START], strict=True):
        band = [(labels, [e for e in entries if low <= e[0] < high]) for labels, entries in corpus]
        with instance.client("t") as client:
            assert push(client, band).status_code == 204
        with instance.client("u") as client:
            assert push(client, _tenant_u(band)).status_code == 204
        if high != 2 * START:
            with instance.client() as client:
                assert client.post("/flush").status_code == 204
    yield instance
    instance.stop()


def _tenant_u(band: list[tuple[dict[str, str], list[tuple[int, str]]]]) -> Any:
    """Tenant ``u``'s share of a band: the ``api`` and ``web`` streams, a nanosecond later
    (no entry of ``u`` ties with one of ``t`` in a limited log query's order)."""
    return [
        (labels, [(ts + 1, line) for ts, line in e]) for labels, e in band if labels["app"] != "db"
    ]


def _engine(app: InProcessApp) -> QueryEngine:
    assert app._client is not None
    engine: QueryEngine = app._client.app.state.runtime.engine
    return engine


def _answers(app: InProcessApp, path: str, params: dict[str, Any], tenant: str = "t") -> list[Any]:
    """The answer whole, then with the files in 3 groups."""
    engine = _engine(app)
    answers = []
    try:
        for groups in (1, 3):
            engine.file_groups = groups
            with app.client(tenant) as client:
                response = client.get(path, params=params)
            assert response.status_code == 200, response.text
            body = response.json()
            body["data"].pop("stats", None)
            answers.append(body)
    finally:
        engine.file_groups = 1
    return answers


def test_the_data_is_in_several_files(app: InProcessApp) -> None:
    engine = _engine(app)
    view = engine.view(("t",), START - MINUTE, START + SPAN + MINUTE)
    assert len(view.files) >= 3 and view.head_tables  # a band may span two days
    parts = file_groups(view, 3)
    assert parts is not None and len(parts) == 3
    assert sorted(f.path for part in parts for f in part.files) == sorted(
        f.path for f in view.files
    )
    assert sum(bool(part.head_tables) for part in parts) == 1


def test_a_view_of_two_tenants_is_cut_across_them(app: InProcessApp) -> None:
    """Each group is a view of both tenants (their masks, the whole labelled stream table)
    with some of their files; every file is in one group."""
    engine = _engine(app)
    view = engine.view(("t", "u"), START - MINUTE, START + SPAN + MINUTE)
    assert isinstance(view, MultiView)
    parts = file_groups(view, 3)
    assert parts is not None and len(parts) == 3
    assert all(isinstance(part, MultiView) for part in parts)
    for part in parts:
        assert isinstance(part, MultiView)
        assert [mask for _, mask in part.parts] == [mask for _, mask in view.parts]
        assert part.streams is view.streams
    for tenant, (whole, _) in enumerate(view.parts):
        assert whole.files
        found = [f.path for part in parts for f in part.parts[tenant][0].files]  # type: ignore[union-attr]
        assert sorted(found) == sorted(f.path for f in whole.files)
    # a group may hold files of both tenants; the in-memory tables are all in one
    assert any(all(p.files for p, _ in part.parts) for part in parts)  # type: ignore[union-attr]
    assert sum(bool(part.head_tables) for part in parts) == 1


@pytest.mark.parametrize(("query", "tenants"), TENANT_QUERIES, ids=range(len(TENANT_QUERIES)))
def test_two_tenant_queries(app: InProcessApp, query: str, tenants: set[str | None]) -> None:
    range_arguments = {**WINDOW, "query": query, "step": "60"}
    whole, split = _answers(app, "/loki/api/v1/query_range", range_arguments, TENANTS)
    assert {s["metric"].get("__tenant_id__") for s in whole["data"]["result"]} == tenants
    assert _shards(app, range_arguments, TENANTS) == 3
    instant_arguments = {"query": query, "time": str(START + 3 * 60 * MINUTE)}
    instant_whole, instant_split = _answers(app, "/loki/api/v1/query", instant_arguments, TENANTS)
    assert instant_whole["data"]["result"]
    if query.startswith("topk"):  # ties are broken arbitrarily: compare values per step
        assert _values_by_step(split) == _values_by_step(whole)
        assert sorted(s["value"][1] for s in instant_split["data"]["result"]) == sorted(
            s["value"][1] for s in instant_whole["data"]["result"]
        )
    else:
        assert split == whole
        assert instant_split == instant_whole


@pytest.mark.parametrize(("query", "params"), LOG_QUERIES, ids=range(len(LOG_QUERIES)))
def test_two_tenant_log_queries(app: InProcessApp, query: str, params: dict[str, str]) -> None:
    """A limited log query of ``t|u`` read a file at a time, three files at once (of
    either tenant), answers as read whole."""
    engine = _engine(app)
    arguments = {**WINDOW, "query": query, **params}
    (whole,) = _answers(app, "/loki/api/v1/query_range", arguments, TENANTS)[:1]
    tenants = {s["stream"]["__tenant_id__"] for s in whole["data"]["result"]}
    assert tenants == {"t"} if "db" in query else tenants <= {"t", "u"}
    engine.scan_group_rows = 1
    engine.file_groups = 3
    try:
        with app.client(TENANTS) as client:
            response = client.get("/loki/api/v1/query_range", params=arguments)
    finally:
        engine.scan_group_rows, engine.file_groups = 4_000_000, 1
    assert response.status_code == 200, response.text
    split = response.json()
    assert split["data"]["stats"]["summary"]["shards"] >= 2
    split["data"].pop("stats")
    assert split == whole


@pytest.mark.parametrize(("query", "params"), LOG_QUERIES, ids=range(len(LOG_QUERIES)))
def test_log_queries(app: InProcessApp, query: str, params: dict[str, str]) -> None:
    whole, *split = _answers(app, "/loki/api/v1/query_range", {**WINDOW, "query": query, **params})
    assert whole["data"]["result"], "the query must find something"
    assert all(answer == whole for answer in split)


@pytest.mark.parametrize("step", ["60", "45m"])
@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_metric_range_queries(app: InProcessApp, query: str, step: str) -> None:
    arguments = {**WINDOW, "query": query, "step": step}
    whole, *split = _answers(app, "/loki/api/v1/query_range", arguments)
    assert whole["data"]["result"] or "nope" in query or "vector(1)" in query
    for answer in split:
        if query.startswith("topk"):  # ties are broken arbitrarily: compare values per step
            assert _values_by_step(answer) == _values_by_step(whole)
        else:
            assert answer == whole


@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_metric_instant_queries(app: InProcessApp, query: str) -> None:
    arguments = {"query": query, "time": str(START + 3 * 60 * MINUTE)}
    whole, *split = _answers(app, "/loki/api/v1/query", arguments)
    for answer in split:
        if query.startswith("topk"):
            assert sorted(s["value"][1] for s in answer["data"]["result"]) == sorted(
                s["value"][1] for s in whole["data"]["result"]
            )
        else:
            assert answer == whole


def _shards(app: InProcessApp, params: dict[str, Any], tenant: str) -> int:
    """How many groups of files a range query ran as, with the engine's 3."""
    engine = _engine(app)
    engine.file_groups = 3
    try:
        with app.client(tenant) as client:
            response = client.get("/loki/api/v1/query_range", params=params)
    finally:
        engine.file_groups = 1
    assert response.status_code == 200, response.text
    shards: int = response.json()["data"]["stats"]["summary"]["shards"]
    return shards


@pytest.mark.parametrize("op", ["stddev", "stdvar"])
def test_vector_spread_is_that_of_the_series(app: InProcessApp, op: str) -> None:
    """``stddev``/``stdvar`` by (level) of series: the population's, per step, from the
    series' own values (two exact passes, not ``E[v^2] - E[v]^2``)."""
    inner = f"avg_over_time({LATENCY} [10m]) by (app, level)"
    arguments = {**WINDOW, "step": "600"}
    whole, split = _answers(
        app, "/loki/api/v1/query_range", {**arguments, "query": f"{op} by (level) ({inner})"}
    )
    assert split == whole
    (series,) = _answers(app, "/loki/api/v1/query_range", {**arguments, "query": inner})[:1]
    values: dict[tuple[str, float], list[float]] = {}
    for found in series["data"]["result"]:
        for at, value in found["values"]:
            values.setdefault((found["metric"]["level"], at), []).append(float(value))
    checked = 0
    for found in whole["data"]["result"]:
        for at, value in found["values"]:
            population = values[(found["metric"]["level"], at)]
            spread = statistics.pvariance(population)
            expected = math.sqrt(spread) if op == "stddev" else spread
            assert math.isclose(float(value), expected, rel_tol=1e-12, abs_tol=1e-12)
            checked += len(population) > 1
    assert checked > 10


def test_a_pipeline_error_is_reported_from_the_merged_partials(app: InProcessApp) -> None:
    """An entry whose unwrapped value does not convert fails the query, split or not."""
    query = 'sum by (app) (sum_over_time({app=~".+"} | logfmt | unwrap level [10m]))'
    engine = _engine(app)
    bodies = []
    try:
        for groups in (1, 3):
            engine.file_groups = groups
            with app.client("t") as client:
                response = client.get(
                    "/loki/api/v1/query_range", params={**WINDOW, "query": query, "step": "60"}
                )
            bodies.append((response.status_code, response.text))
    finally:
        engine.file_groups = 1
    assert bodies[0][0] == 400, bodies[0]
    # The series named is that of any failing entry (the probe's LIMIT 1), split or not.
    assert [(status, text.split(" for series")[0]) for status, text in bodies] == [
        (400, "pipeline error: 'SampleExtractionErr'")
    ] * 2

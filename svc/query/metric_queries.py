"""Metric queries end to end: evaluation grid, probes for pipeline errors, run, shape.

The result of ``run_metric_query`` is a ``MetricResult``: series (sorted label pairs and
``(step index, value)`` points) plus how to present them (matrix, vector or scalar).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from logql_to_sql import DIALECT, Grid, MetricPlan, ast, compile_metric_query
from svc.errors import BadRequestError
from svc.model import Labels, label_key
from svc.query.common_labels import common_labels
from svc.query.engine import AnyView, QueryEngine, ScanStats, add_file_scan, add_head_scan
from svc.query.file_groups import file_groups, without_sources
from svc.query.file_metadata import view_has_metadata
from svc.query.plan_cache import START, mentions_stand_in, with_range

__all__ = [
    "MAX_SERIES_MESSAGE",
    "MetricResult",
    "Series",
    "format_sample_time",
    "format_sample_value",
    "max_lookback",
    "order_series",
    "range_grid",
    "run_metric_query",
]

MAX_SERIES_MESSAGE = (
    "maximum number of series ({n}) reached for a single query; consider reducing query "
    "cardinality by adding more specific stream selectors, reducing the time range, or "
    "aggregating results with functions like sum(), count() or topk()"
)


@dataclass
class Series:
    """One labelled series of points ``(step index, value)``, oldest first."""

    labels: Labels
    points: list[tuple[int, float]]


@dataclass
class MetricResult:
    """Samples of a metric query on its grid."""

    grid: Grid
    series: list[Series]
    scalar: bool
    order: str | None


def range_grid(start_ns: int, end_ns: int, step_ns: int, *, align: bool) -> Grid:
    """Steps of a range query; with ``align``, start rounds down and end up to the step."""
    if align:
        start_ns = start_ns // step_ns * step_ns
        end_ns = -(-end_ns // step_ns) * step_ns
    return Grid(start_ns=start_ns, step_ns=step_ns, steps=(end_ns - start_ns) // step_ns + 1)


def run_metric_query(
    engine: QueryEngine,
    tenant: str | tuple[str, ...],
    expr: ast.MetricExpr,
    grid: Grid,
    *,
    max_series: int,
    instant: bool,
) -> tuple[MetricResult, ScanStats]:
    """Evaluate ``expr`` on ``grid`` for ``tenant``; raise 400 on pipeline errors."""
    lookback = max_lookback(expr)
    tenants = (tenant,) if isinstance(tenant, str) else tenant
    view = engine.view(tenants, grid.start_ns - lookback, grid.end_ns + 1, expr)
    parts = file_groups(view, engine.file_groups)
    plan = _plan(
        expr,
        grid,
        metadata=view_has_metadata(view),
        common=common_labels(view.streams),
        partials=parts is not None,
    )
    stats = ScanStats()
    _count_scan(stats, view, grid.start_ns - lookback, grid.end_ns + 1)
    if not instant and _uses_approx_topk(expr):
        raise BadRequestError("count min sketches are only supported on instant queries")

    def run(text: str) -> pa.Table:
        if plan.stand_in:
            text = with_range(text, grid.start_ns)
        return engine.execute(text, view, stats)

    for probe, labels_probe in plan.error_probes:
        if run(probe).num_rows:
            raise BadRequestError(_pipeline_error(run(labels_probe)))
    if parts is not None and plan.partials:
        table = _run_by_file_groups(engine, plan, parts, stats, grid.start_ns)
    else:
        table = run(plan.select)
    if "failed_check" in table.column_names:
        # A matching error is reported before a pipeline error (the reference reports
        # whichever it meets first, step by step; both are 400s).
        failed_check = pc.min(table["failed_check"]).as_py()
        if failed_check is not None:
            raise BadRequestError(plan.source.check_messages[failed_check])
    if "error" in table.column_names:
        failed = table.filter(pc.is_valid(table["error"]))
        if failed.num_rows:
            for build_labels_probe in plan.source.error_labels:
                found = run(build_labels_probe().sql(dialect=DIALECT))
                if found.num_rows:
                    raise BadRequestError(_pipeline_error(found))
            raise BadRequestError(f"pipeline error: '{failed['error'][0].as_py()}'")
        table = table.filter(pc.is_null(table["error"]))
    series = _series(table, plan.source.order)
    count = sum(len(s.points) for s in series) if instant else len(series)
    if count > max_series:
        raise BadRequestError(MAX_SERIES_MESSAGE.format(n=max_series))
    stats.returned = sum(len(s.points) for s in series)
    return MetricResult(grid, series, plan.source.scalar, plan.source.order), stats


def _run_by_file_groups(
    engine: QueryEngine,
    plan: _RenderedPlan,
    parts: list[AnyView],
    stats: ScanStats,
    start_ns: int,
) -> pa.Table:
    """``plan``'s samples with its partial aggregates computed per group of files (all at
    once on a distributed engine), concatenated, and the rest run once over them.

    Every shape of metric query splits this way: each range aggregation's partials are
    mergeable by construction (sums, counts, min/max, flags, exact quantiles as value
    lists, first/last with their timestamps); vector aggregations, binary operators and
    the like only read the merged samples. A view of several tenants is cut across its
    tenants (``file_groups``): the partials already carry each series' full labels.
    """

    def placed(text: str) -> str:
        return with_range(text, start_ns) if plan.stand_in else text

    jobs: list[tuple[exp.Select | str, AnyView]] = [
        (placed(text), part) for _, text in plan.partials for part in parts
    ]
    stats.shards += len(parts)
    results = engine.execute_all(jobs, stats)
    merged = {
        name: pa.concat_tables(
            results[number * len(parts) : (number + 1) * len(parts)], promote_options="permissive"
        )
        for number, (name, _) in enumerate(plan.partials)
    }
    # The final statement reads no file: only the stream index is bound.
    return engine.execute(placed(plan.select), without_sources(parts[0]), stats, merged)


@dataclass(frozen=True)
class _RenderedPlan:
    """A metric plan's queries as text, the grid start a stand-in unless it is real."""

    source: MetricPlan
    select: str
    error_probes: tuple[tuple[str, str], ...]
    stand_in: bool
    """Compiled with the stand-in start (cached): each run puts its own start in. A plan
    compiled for its grid is run as it is: its text may hold the stand-in's digits."""
    partials: tuple[tuple[str, str], ...] = ()
    """Compiled apart (``MetricPlan.partials``): the partial statements, by relation."""


def _plan(
    expr: ast.MetricExpr,
    grid: Grid,
    *,
    metadata: bool,
    common: frozenset[str],
    partials: bool = False,
) -> _RenderedPlan:
    """The rendered plan of ``expr`` on ``grid``: compiled once per expression, step,
    number of steps, whether the data has structured metadata, the labels every stream
    has and whether its partials are apart, with the start put in by ``with_range`` at
    each run."""
    if mentions_stand_in(expr):  # compiled for this grid, not reusable
        compiled = compile_metric_query(
            expr, grid=grid, metadata=metadata, common=common, partials=partials
        )
        return _rendered(compiled, stand_in=False)
    return _cached_plan(expr, grid.step_ns, grid.steps, metadata, common, partials)


@lru_cache(maxsize=256)
def _cached_plan(
    expr: ast.MetricExpr,
    step_ns: int,
    steps: int,
    metadata: bool,
    common: frozenset[str],
    partials: bool,
) -> _RenderedPlan:
    grid = Grid(start_ns=START, step_ns=step_ns, steps=steps)
    compiled = compile_metric_query(
        expr, grid=grid, metadata=metadata, common=common, partials=partials
    )
    return _rendered(compiled, stand_in=True)


def _rendered(plan: MetricPlan, *, stand_in: bool) -> _RenderedPlan:
    def text(select: exp.Select) -> str:
        return select.sql(dialect=DIALECT)

    return _RenderedPlan(
        plan,
        text(plan.select),
        tuple((text(probe), text(labels)) for probe, labels in plan.error_probes),
        stand_in,
        tuple((name, text(select)) for name, select in plan.partials),
    )


def _uses_approx_topk(expr: ast.Expr) -> bool:
    if isinstance(expr, ast.VectorAggregation) and expr.op is ast.VectorOp.APPROX_TOPK:
        return True
    children = [getattr(expr, name) for name in ("expr", "left", "right") if hasattr(expr, name)]
    return any(
        _uses_approx_topk(child) for child in children if not isinstance(child, ast.LogRange)
    )


def max_lookback(expr: ast.Expr) -> int:
    """How far before a step the expression reads: its longest range plus offset."""
    if isinstance(expr, ast.RangeAggregation):
        return expr.range.range_ns + max(expr.range.offset_ns, 0)
    children = [getattr(expr, name) for name in ("expr", "left", "right") if hasattr(expr, name)]
    return max((max_lookback(child) for child in children), default=0)


def _count_scan(stats: ScanStats, view: Any, start_ns: int, end_ns: int) -> None:
    stats.files = len(view.files)
    add_file_scan(stats, view, view.files)
    add_head_scan(stats, view.head_tables, start_ns, end_ns)


def _pipeline_error(found: pa.Table) -> str:
    row = found.to_pylist()[0]
    labels = tuple((e["key"], e["value"]) for e in row["labels"])
    error = row["err"]
    return (
        f"pipeline error: '{error}' for series: '{label_key(labels)}'.\n"
        f'Use a label filter to intentionally skip this error. (e.g | __error__!="{error}").\n'
        'To skip all potential errors you can match empty errors.(e.g __error__="")\n'
        "The label filter can also be specified after unwrap. "
        '(e.g | unwrap latency | __error__="" )\n'
    )


def _series(table: pa.Table, order: str | None) -> list[Series]:
    by_labels: dict[Labels, Series] = {}
    data = table.to_pydict()
    for labels, k, v in zip(data["labels"], data["k"], data["v"], strict=True):
        key = tuple((e["key"], e["value"]) for e in labels)
        series = by_labels.get(key)
        if series is None:
            series = by_labels[key] = Series(key, [])
        series.points.append((k, v))
    result = list(by_labels.values())
    for series in result:
        series.points.sort()
    return order_series(result, order)


def order_series(result: list[Series], order: str | None) -> list[Series]:
    """Series in answer order: by label bytes, then by last value for ``sort``/``sort_desc``."""
    result.sort(key=lambda s: [(n.encode(), v.encode()) for n, v in s.labels])
    if order is not None:
        result.sort(key=lambda s: _sort_value(s, order))
    return result


def _sort_value(series: Series, order: str) -> tuple[bool, float]:
    value = series.points[-1][1] if series.points else math.nan
    nan = math.isnan(value)
    return nan, (value if order == "asc" else -value) if not nan else 0.0


def format_sample_value(value: float) -> str:
    """Shortest decimal text without exponent, as the reference prints sample values."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == int(value):
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def format_sample_time(ns: int) -> int | float:
    """Unix seconds with at most millisecond precision, integral when whole."""
    ms = ns // 1_000_000
    return ms // 1000 if ms % 1000 == 0 else ms / 1000

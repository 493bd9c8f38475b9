"""Range aggregations -> SQL over an evaluation grid (LOGQL.md 6.1-6.3).

The grid is ``t_k = start + k * step`` for ``k`` in ``[0, steps)``. An entry at ``ts``
belongs to the window of step ``k`` when ``t_k - range - offset < ts <= t_k - offset``, i.e.
for ``k`` from ``kmin = ceil((ts + offset - start) / step)`` to
``kmax = ceil((ts + offset + range - start) / step) - 1``. Entries are first reduced to
partial aggregates per series and ``(kmin, kmax)``, then each partial is spread over its
steps and combined: the work per entry is one pass, whatever ``range / step`` is.

Every sample relation has the columns ``labels`` (sorted ``LIST(STRUCT(key, value))``),
``k`` (step index) and ``v`` (DOUBLE).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sqlglot import exp

from logql_to_sql.sql.columnar import columnar_pipeline, columnar_supported, stream_lookups
from logql_to_sql.sql.compiler import (
    compile_pipeline,
    compile_stream_matchers,
    entry_source,
    final_labels,
    time_range,
)
from logql_to_sql.sql.conversions import (
    bytes_of,
    duration_unit_ns,
    float_of,
    nanoseconds_of,
    seconds_from_nanoseconds,
)
from logql_to_sql.sql.dialect import opaque, sql
from logql_to_sql.sql.exact_sums import merged_sum, partial_fields
from logql_to_sql.sql.frame import (
    ERROR,
    ERROR_DETAILS,
    TS,
    UNWRAPPED,
    UNWRAPPED_UNIT,
    Frame,
    group_key,
)
from logql_to_sql.sql.hints import Needed, stage_reads
from logql_to_sql.sql.label_filters import ValueOf, compile_label_filter, filtered, label_value
from logql_to_sql.sql.rewrites import hoist_line_filters, split_leading_line_filters
from logql_to_sql.sql.stages import line_filter_condition
from logql_to_sql.syntax import ast

__all__ = [
    "Grid",
    "RangePlan",
    "absent_labels",
    "compile_range_aggregation",
    "error_labels_probe",
    "grouped_labels",
]

R = ast.RangeOp
_COUNTING = {R.COUNT_OVER_TIME, R.RATE, R.ABSENT_OVER_TIME}
_BYTES = {R.BYTES_OVER_TIME, R.BYTES_RATE}
_PER_SECOND = {R.RATE, R.BYTES_RATE}


@dataclass(frozen=True, kw_only=True)
class Grid:
    """Evaluation times ``start_ns + k * step_ns`` for ``k < steps``."""

    start_ns: int
    step_ns: int
    steps: int

    @property
    def end_ns(self) -> int:
        """The last evaluation time."""
        return self.start_ns + (self.steps - 1) * self.step_ns

    def start_plus(self, delta_ns: int) -> exp.Expr:
        """``start + delta`` as SQL arithmetic, which DuckDB folds: the start stays one
        literal in the text, so a plan compiled once can be reused with another start."""
        start = exp.Literal.number(self.start_ns)
        if delta_ns < 0:
            return exp.paren(exp.Sub(this=start, expression=exp.Literal.number(-delta_ns)))
        return exp.paren(exp.Add(this=start, expression=exp.Literal.number(delta_ns)))


@dataclass(frozen=True, kw_only=True)
class RangePlan:
    """Samples of a range aggregation; a cheap query telling whether an entry failed, and
    one finding its full labels for the error message."""

    samples: exp.Select
    error_probe: exp.Select | None = None
    error_labels: Callable[[], exp.Select] | None = None
    """Builds the labels query (only needed, so only built, once an entry failed)."""
    materialized: tuple[str, exp.Select] | None = None
    """``(name, partials)``: partial aggregates with a ``bad`` flag, computed once and read
    by both the samples and ``error_probe``."""


def grouped_labels(labels: exp.Expr, grouping: ast.Grouping | None) -> exp.Expr:
    """``labels`` reduced by ``by (...)`` (keep) or ``without (...)`` (drop)."""
    if grouping is None:
        return labels
    test = (
        "NOT list_contains(:names, e.key)" if grouping.without else "list_contains(:names, e.key)"
    )
    return sql("list_filter(:l, e -> " + test + ")", l=labels, names=list(grouping.labels))


def compile_range_aggregation(
    node: ast.RangeAggregation,
    *,
    grid: Grid,
    grouping: ast.Grouping | None = None,
    entries_name: str | None = None,
    metadata: bool = True,
    columnar: bool = True,
    apart: bool = False,
    common: frozenset[str] = frozenset(),
) -> RangePlan:
    """Samples of ``node`` on ``grid``; ``grouping`` (a pushed-down ``sum by``) pools
    series like a range-op grouping does. ``metadata=False`` promises that no entry has
    structured metadata: a range without parsers then keys its series on the stream alone.

    With ``entries_name``, entries that may carry a pipeline error are left to the caller to
    compute once as that (materialized) relation, which both the samples and the error
    probe read: the probe then costs nothing like a second scan.

    ``apart`` (with ``entries_name``): the partial aggregates are always that relation, and
    mergeable: the relation computed over parts of the entries (groups of files), its rows
    concatenated, gives the samples the whole would (no shortcut keeps one value per
    window), so it can be computed where the files are and the rest elsewhere.

    ``columnar=False``: the generic label-map pipeline even where the columnar one applies.
    ``common``: labels every queried stream has (``columnar_pipeline``).
    """
    group = grouping or node.grouping
    log_range = node.range
    time_window = _time_window(grid, log_range)
    leading, rest = split_leading_line_filters(log_range.stages)
    line_filters = [line_filter_condition(s, exp.column("line")) for s in leading]
    if not rest and log_range.unwrap is None:
        entries = _label_only_entries(node, log_range, time_window, line_filters, metadata=metadata)
        probe = None
    else:
        entries, probe = _pipeline_entries(
            node,
            log_range,
            rest,
            [*time_window, *line_filters],
            group,
            columnar=columnar,
            common=common,
        )
    if probe is not None and group is not None and "__error__" in _kept_names(group):
        probe = None
    if entries_name is not None and apart and probe is None:
        samples, partials = _aggregate(
            node, entries, grid=grid, group=group, shared=entries_name, flag=False, mergeable=True
        )
        assert partials is not None
        return RangePlan(samples=samples, materialized=(entries_name, partials))
    if probe is None or entries_name is None:
        samples, _ = _aggregate(node, entries, grid=grid, group=group)
        if probe is None:
            return RangePlan(samples=samples)
        return RangePlan(
            samples=samples,
            error_probe=probe(),
            error_labels=partial(error_labels_probe, node, grid=grid),
        )
    samples, partials = _aggregate(
        node, entries, grid=grid, group=group, shared=entries_name, mergeable=apart
    )
    assert partials is not None
    return RangePlan(
        samples=samples,
        error_probe=exp.select(sql("'pipeline error'").as_(ERROR))
        .from_(entries_name, copy=False)
        .where(sql("bad"), copy=False)
        .limit(1, copy=False),
        error_labels=partial(error_labels_probe, node, grid=grid),
        materialized=(entries_name, partials),
    )


def _kept_names(grouping: ast.Grouping) -> set[str]:
    return set() if grouping.without else set(grouping.labels)


def _wanted(grouping: ast.Grouping | None, log_range: ast.LogRange) -> Needed:
    if grouping is None or grouping.without:
        return None
    names = set(grouping.labels)
    if log_range.unwrap is not None:
        names.add(log_range.unwrap.label)
    return frozenset(names)


def _entry_value(op: ast.RangeOp) -> exp.Expr:
    if op in _BYTES:
        return sql("CAST(strlen(line) AS DOUBLE)")
    return sql("CAST(1 AS DOUBLE)")


def _label_only_entries(
    node: ast.RangeAggregation,
    log_range: ast.LogRange,
    time_window: list[exp.Expr],
    line_filters: list[exp.Expr],
    *,
    metadata: bool,
) -> _Entries:
    """Entries of a range without parsers, keyed by stream and metadata (labels come later,
    once per partial aggregate instead of once per entry).

    Without line filters the streams are selected where their labels are joined, after
    aggregation: DuckDB pushes that join's stream ids down through the grouping into the
    scan (row groups of other streams are skipped as before), and no entry is probed
    against them one by one. sum by (app) (count_over_time({env=~".+"}[1h])) over 100 MB:
    36 -> 29 ms of CPU; a one-stream selector reads the same 7k of 690k rows either way.
    """
    keys = ["stream_id", "metadata"] if metadata else ["stream_id"]
    matchers = log_range.selector.matchers
    conditions = [*time_window, *line_filters]
    if not line_filters:
        return _Entries(
            select=exp.select("ts", *keys, _entry_value(node.op).as_("v"))
            .from_("logs")
            .where(exp.and_(*conditions)),
            keys=keys,
            by_stream=True,
            streams=compile_stream_matchers(matchers).select("labels", copy=False),
        )
    matched = exp.column("stream_id").isin(query=compile_stream_matchers(matchers))
    return _Entries(
        select=exp.select("ts", *keys, _entry_value(node.op).as_("v"))
        .from_("logs")
        .where(exp.and_(matched, *conditions)),
        keys=keys,
        by_stream=True,
    )


_STREAM_AND_METADATA_LABELS = (
    "list_sort(map_entries(map_concat(streams.labels, CASE WHEN metadata IS NULL THEN MAP {} "
    "ELSE map_from_entries(list_transform(map_entries(metadata), e -> {'key': CASE WHEN "
    "list_contains(map_keys(streams.labels), e.key) THEN e.key || '_extracted' ELSE e.key END, "
    "'value': e.value})) END)))"
)


def _pipeline_entries(
    node: ast.RangeAggregation,
    log_range: ast.LogRange,
    stages: tuple[ast.Stage, ...],
    conditions: list[exp.Expr],
    group: ast.Grouping | None,
    *,
    columnar: bool,
    common: frozenset[str],
) -> tuple[_Entries, Callable[[], exp.Select]]:
    """Entries after the pipeline (and unwrap); plus how to build a probe for an error.

    With a ``by`` grouping only those labels can reach the result, so the pipeline
    tracks them (and the labels its filters read) as columns instead of a full map.
    """
    unwrap = log_range.unwrap
    frame: Frame | None = None
    columnar_keys: list[str] | None = None
    if columnar and group is not None and not group.without and columnar_supported(stages):
        names = _columnar_names(group, stages, unwrap)
        pipeline = columnar_pipeline(
            entry_source(
                log_range.selector.matchers,
                conditions,
                stream_values=stream_lookups(names),
                with_labels=False,
            ),
            stages,
            names=names,
            common=common,
        )
        if pipeline is not None:
            frame, tracked = pipeline
            value_of: ValueOf = tracked.value
            labels = tracked.labels()
            unwrapped = {unwrap.label} if unwrap is not None else set()
            columnar_keys = sorted(set(group.labels) - unwrapped)
    if frame is None:
        source = entry_source(log_range.selector.matchers, conditions)
        frame = compile_pipeline(source, stages, wanted=_wanted(group, log_range))
        value_of = label_value
        labels = sql("list_sort(map_entries(:m))", m=final_labels())
    if unwrap is None:
        rows, value, final = frame.select, _entry_value(node.op), labels
    else:
        frame = _unwrapped(frame, unwrap, value_of)
        final = sql("list_filter(:l, e -> e.key <> :n)", l=labels.copy(), n=unwrap.label)
        rows, value = frame.select, exp.column(UNWRAPPED)
    if columnar_keys is not None and group is not None:
        # Group on the label values themselves; the label list is built per series after.
        keys = [value_of(name).as_(group_key(i)) for i, name in enumerate(columnar_keys)]
        entries = exp.select(exp.column(TS), *keys, value.as_("v"), exp.column(ERROR)).from_(
            rows.subquery("pipe", copy=False)
        )
        return _Entries(
            select=entries,
            keys=[group_key(i) for i in range(len(columnar_keys))],
            labels=_labels_of_keys(columnar_keys),
        ), partial(_probe, rows)
    entries = exp.select(
        exp.column(TS), final.as_("labels"), value.as_("v"), exp.column(ERROR)
    ).from_(rows.subquery("pipe", copy=False))
    return _Entries(select=entries, keys=["labels"]), partial(_probe, rows)


def _labels_of_keys(names: list[str]) -> exp.Expr:
    """The label list of a series grouped by the values ``group_key(i)`` of ``names``."""
    items = [
        sql("{'key': :k, 'value': :v}", k=n, v=exp.column(group_key(i)))
        for i, n in enumerate(names)
    ]
    return sql("list_filter(:items, e -> e.value IS NOT NULL)", items=exp.Array(expressions=items))


def _probe(rows: exp.Select) -> exp.Select:
    """One failing entry of ``rows`` (copied: ``rows`` also feeds the samples)."""
    return (
        exp.select(exp.column(ERROR))
        .from_(rows.copy().subquery("pipe", copy=False), copy=False)
        .where(sql(":error IS NOT NULL", error=exp.column(ERROR)), copy=False)
        .limit(1, copy=False)
    )


def _columnar_names(
    group: ast.Grouping, stages: tuple[ast.Stage, ...], unwrap: ast.Unwrap | None
) -> frozenset[str]:
    names = set(group.labels)
    for stage in (*stages, *(unwrap.post_filters if unwrap else ())):
        reads = stage_reads(stage)
        names |= reads or set()
    if unwrap is not None:
        names.add(unwrap.label)
    return frozenset(names)


def _unwrapped(frame: Frame, unwrap: ast.Unwrap, value_of: ValueOf) -> Frame:
    """Entries with a value ``UNWRAPPED`` from the unwrapped label (missing or empty: no
    sample)."""
    raw = value_of(unwrap.label)
    seconds = unwrap.conversion in (
        ast.UnwrapConversion.DURATION,
        ast.UnwrapConversion.DURATION_SECONDS,
    )
    convert = {
        None: float_of,
        ast.UnwrapConversion.BYTES: bytes_of,
        ast.UnwrapConversion.DURATION: nanoseconds_of,
        ast.UnwrapConversion.DURATION_SECONDS: nanoseconds_of,
    }[unwrap.conversion]
    value = exp.column(UNWRAPPED)
    present = sql(":r <> ''", r=raw.copy())
    if seconds:
        # The unit first, in a frame of its own: the duration's SQL reads it several times.
        read = frame.next(where=present, extras={UNWRAPPED_UNIT: duration_unit_ns(raw.copy())})
        conversion = nanoseconds_of(raw.copy(), exp.column(UNWRAPPED_UNIT))
        read = read.next(extras={UNWRAPPED: conversion.value})
    else:
        conversion = convert(raw.copy())
        read = frame.next(where=present, extras={UNWRAPPED: conversion.value})
    # The conversion is computed once, in its own frame (durations in nanoseconds first);
    # the value is then opaque to later filters, and the error columns read it.
    if seconds:
        read = read.next(extras={UNWRAPPED: seconds_from_nanoseconds(value.copy())})
    # Its own frame, reading the column once: DuckDB merges projections, and would merge
    # the conversion into a volatile expression, where it no longer shares repeated parts.
    read = read.next(extras={UNWRAPPED: opaque(value.copy())})
    failed = sql(":v IS NULL", v=value.copy())
    converted = read.next(
        {
            ERROR: sql(
                "CASE WHEN :f THEN 'SampleExtractionErr' ELSE :error END",
                f=failed,
                error=exp.column(ERROR),
            ),
            ERROR_DETAILS: sql(
                "CASE WHEN :f THEN :d ELSE :error_details END",
                f=failed.copy(),
                d=conversion.error,
                error_details=exp.column(ERROR_DETAILS),
            ),
        },
        extras={UNWRAPPED: sql("coalesce(:v, 0)", v=value.copy())},
    )
    for post in unwrap.post_filters:
        check = compile_label_filter(post, value_of)
        converted = filtered(converted, check, extras={UNWRAPPED: exp.column(UNWRAPPED)})
    return converted


def error_labels_probe(node: ast.RangeAggregation, *, grid: Grid) -> exp.Select:
    """The full labels and error of one failing entry, for the error message."""
    log_range = node.range
    source = entry_source(log_range.selector.matchers, _time_window(grid, log_range))
    frame = compile_pipeline(source, hoist_line_filters(log_range.stages), wanted=None)
    if log_range.unwrap is not None:
        frame = _unwrapped(frame, log_range.unwrap, label_value)
    return (
        exp.select(
            sql("list_sort(map_entries(:m))", m=final_labels()).as_("labels"),
            exp.column(ERROR),
        )
        .from_(frame.select.subquery("pipe", copy=False), copy=False)
        .where(sql(":error IS NOT NULL", error=exp.column(ERROR)), copy=False)
        .limit(1)
    )


def _ceil_div(ts_minus: int, step: int, grid: Grid, floor_ns: int) -> exp.Expr:
    """``ceil((ts - (start + ts_minus)) / step)`` in integers, for ``ts`` above
    ``start + ts_minus - floor_ns`` with ``floor_ns > 0`` (a double quotient can round
    across a step boundary for entries a few nanoseconds from it). The numerator is
    shifted by the fewest whole steps that make it non-negative, where integer division
    rounds down: ``ceil(x / s) = (x - 1 + n*s) // s - (n - 1)`` for ``x > -n*s``; with
    ``n = 1`` (a range of at most one step) nothing is left to subtract: each operation
    per entry costs about 3 ms of 80 on 2 million entries (#13).
    """
    shift = -(-floor_ns // step)  # floor_ns > 0: at least 1
    quotient = sql("(ts - :b) // :s", b=grid.start_plus(ts_minus - shift * step + 1), s=step)
    return quotient if shift == 1 else sql(":q - :n", q=quotient, n=shift - 1)


def _bounds(grid: Grid, log_range: ast.LogRange) -> tuple[exp.Expr, exp.Expr]:
    """The first and last steps whose window holds an entry at ``ts``: the window of step
    ``k`` is ``(t_k - range - offset, t_k - offset]``; entries come from ``_time_window``,
    so the first step is never below 0 when the range is at most one step."""
    reach = log_range.range_ns
    kmin = _ceil_div(-log_range.offset_ns, grid.step_ns, grid, reach)
    if reach > grid.step_ns:
        kmin = sql("greatest(:k, 0)", k=kmin)
    if log_range.range_ns == grid.step_ns:
        # One window per entry: the last step is the first.
        return kmin, kmin.copy()
    # ceil(x / s) - 1 = (x - 1) // s for the entries' x >= 1
    kmax = sql(
        "least((ts - :b) // :s, :last)",
        b=grid.start_plus(1 - log_range.offset_ns - log_range.range_ns),
        s=grid.step_ns,
        last=grid.steps - 1,
    )
    return kmin, kmax


def _time_window(grid: Grid, log_range: ast.LogRange) -> list[exp.Expr]:
    """Entries any window of the grid can hold: ``(start - range, end]``, shifted by the
    offset."""
    last = (grid.steps - 1) * grid.step_ns
    return time_range(
        grid.start_plus(1 - log_range.range_ns - log_range.offset_ns),
        grid.start_plus(last + 1 - log_range.offset_ns),
    )


_SUM = ("{" + partial_fields("s", "v") + "}", merged_sum("s"))
"""A sum of fractional values, the same in any order and grouping (``exact_sums``)."""
_MOMENTS = "{" + partial_fields("s", "v") + ", " + partial_fields("q", "v * v") + ", 'n': count(*)}"
_VARIANCE = f"greatest({merged_sum('q')} / sum(p.n) - pow({merged_sum('s')} / sum(p.n), 2), 0)"

_PARTIALS: dict[ast.RangeOp, tuple[str, str]] = {
    R.COUNT_OVER_TIME: ("sum(v)", "sum(p)"),
    R.RATE: ("sum(v)", "sum(p) / :range_s"),
    R.BYTES_OVER_TIME: ("sum(v)", "sum(p)"),
    R.BYTES_RATE: ("sum(v)", "sum(p) / :range_s"),
    R.SUM_OVER_TIME: _SUM,
    R.MIN_OVER_TIME: ("min(v)", "min(p)"),
    R.MAX_OVER_TIME: ("max(v)", "max(p)"),
    R.AVG_OVER_TIME: (
        "{" + partial_fields("s", "v") + ", 'n': count(*)}",
        f"{merged_sum('s')} / sum(p.n)",
    ),
    R.STDVAR_OVER_TIME: (_MOMENTS, _VARIANCE),
    R.STDDEV_OVER_TIME: (_MOMENTS, f"sqrt({_VARIANCE})"),
    R.QUANTILE_OVER_TIME: ("list(v)", "list_aggregate(flatten(list(p)), 'quantile_cont', :phi)"),
    R.FIRST_OVER_TIME: ("min({'t': ts, 'v': v})", "min(p).v"),
    R.LAST_OVER_TIME: ("max({'t': ts, 'v': v})", "max(p).v"),
    R.ABSENT_OVER_TIME: ("count(*)", "sum(p)"),
    R.RATE_COUNTER: ("list({'t': ts, 'v': v})", "list_sort(flatten(list(p)))"),
}
"""Per range op: the partial aggregate over a series' entries of one ``(kmin, kmax)``, and
the final value of a window from its partials. Counts and byte sizes add exactly as
DOUBLE (integers); sums of unwrapped values are exact sums (``exact_sums``)."""


@dataclass(frozen=True, kw_only=True)
class _Entries:
    """Entries ``(ts, <keys>, v)``: the keys identify a series, ``labels`` (over the keys)
    builds its label list after aggregation; ``by_stream`` keys are stream id and metadata."""

    select: exp.Select
    keys: list[str]
    labels: exp.Expr | None = None
    by_stream: bool = False
    streams: exp.Select | None = None
    """``by_stream`` entries of every stream: the matching streams (stream id, labels) the
    aggregates are joined to."""


def _aggregate(
    node: ast.RangeAggregation,
    entries: _Entries,
    *,
    grid: Grid,
    group: ast.Grouping | None,
    shared: str | None = None,
    flag: bool = True,
    mergeable: bool = False,
) -> tuple[exp.Select, exp.Select | None]:
    """The samples; with ``shared``, the partial aggregates (with a ``bad`` flag telling
    whether any entry of the partial failed, unless not ``flag``) are returned as a
    relation to compute once under that name, and the samples read them from it.
    ``mergeable``: partials of the same series and windows may come more than once (from
    several groups of files), so none is already a window's final value."""
    kmin, kmax = _bounds(grid, node.range)
    partial, final = _PARTIALS[node.op]
    if node.op is R.RATE and node.range.unwrap is not None:
        partial, final = _SUM[0], f"{_SUM[1]} / :range_s"
    if node.op is R.QUANTILE_OVER_TIME and node.range.range_ns <= grid.step_ns and not mergeable:
        # Each entry falls in one window at most: the partial is already the quantile.
        partial, final = "quantile_cont(v, :phi)", "any_value(p)"
    if entries.by_stream and node.op in (R.COUNT_OVER_TIME, R.RATE, R.ABSENT_OVER_TIME):
        partial = "count(*)"  # every entry weighs 1
    keys: list[exp.Expr] = [exp.column(k) for k in entries.keys]
    if entries.keys == ["labels"]:
        keys = [grouped_labels(exp.column("labels"), group).as_("labels")]
    # With range == step each entry has one window: its last step is its first.
    single = node.range.range_ns == grid.step_ns
    bounds = [kmin.as_("kmin")] if single else [kmin.as_("kmin"), kmax.as_("kmax")]
    placed = exp.select(*keys, *bounds, exp.column("ts"), exp.column("v")).from_(
        entries.select.subquery("e", copy=False)
    )
    flagged = bool(shared) and flag
    flags = (
        [sql("bool_or(:error IS NOT NULL)", error=exp.column(ERROR)).as_("bad")] if flagged else []
    )
    carried = ["bad"] if flagged else []
    placed = placed.select(exp.column(ERROR), copy=False) if flagged else placed
    last = exp.column("kmin").as_("kmax") if single else exp.column("kmax")
    partials = exp.select(
        *entries.keys, "kmin", last, sql(partial, phi=_phi(node)).as_("p"), *flags
    ).from_(placed.subquery("placed", copy=False), copy=False)
    # Entries between two windows (range < step) belong to none. The filter stays for
    # pipelines when range >= step, where it always holds: DuckDB then keeps the
    # pipeline's projections apart instead of merging them into one that parses each line
    # once per use.
    if not entries.by_stream or node.range.range_ns < grid.step_ns:
        partials = partials.where(sql("kmin >= 0" if single else "kmin <= kmax"), copy=False)
    partials = partials.group_by(*entries.keys, "kmin", *([] if single else ["kmax"]), copy=False)
    if entries.by_stream:
        partials = (
            exp.select(
                grouped_labels(
                    sql(
                        _STREAM_AND_METADATA_LABELS
                        if "metadata" in entries.keys
                        else "list_sort(map_entries(streams.labels))"
                    ),
                    group,
                ).as_("labels"),
                "kmin",
                "kmax",
                "p",
                *carried,
            )
            .from_(partials.subquery("by_stream", copy=False), copy=False)
            .join(
                entries.streams.subquery("streams", copy=False)
                if entries.streams is not None
                else exp.to_table("streams"),
                on=sql("by_stream.stream_id = streams.stream_id"),
                copy=False,
            )
        )
    elif entries.labels is not None:
        partials = exp.select(entries.labels.as_("labels"), "kmin", "kmax", "p", *carried).from_(
            partials.subquery("by_keys", copy=False)
        )
    cte: exp.Select | None = None
    if shared:
        cte, partials = partials, exp.select("*").from_(shared)
    steps = exp.column("kmin") if single else sql("unnest(range(kmin, kmax + 1))")
    spread = exp.select("labels", steps.as_("k"), "p").from_(
        partials.subquery("partials", copy=False)
    )
    phi = node.param if node.param is not None else 0.0
    value = sql(final, range_s=node.range.range_ns / 1e9, phi=_phi(node))
    if node.op is R.QUANTILE_OVER_TIME and (phi > 1 or phi < 0):
        value = sql("CAST(:inf AS DOUBLE)", inf="Infinity" if phi > 1 else "-Infinity")
    if node.op is R.RATE_COUNTER:
        samples = (
            exp.select("labels", "k", value.as_("s"))
            .from_(spread.subquery("spread", copy=False), copy=False)
            .group_by("labels", "k", copy=False)
        )
        rate = exp.select("labels", "k", _counter_rate(grid, node.range).as_("v")).from_(
            samples.subquery("windows", copy=False)
        )
        return rate, cte
    final_samples = (
        exp.select("labels", "k", sql("CAST(:v AS DOUBLE)", v=value).as_("v"))
        .from_(spread.subquery("spread", copy=False), copy=False)
        .group_by("labels", "k", copy=False)
    )
    return final_samples, cte


def _counter_rate(grid: Grid, log_range: ast.LogRange) -> exp.Expr:
    """Prometheus-style counter rate over the sorted samples ``s`` of a window (LOGQL.md 6.2):
    resets add the value before the drop, and the window edges are extrapolated."""
    n = "len(s)"
    end_s = "((:start + k * :step - :offset) / 1e9)"
    start_s = f"({end_s} - :range_s)"
    t1, tn = "(s[1].t / 1e9)", f"(s[{n}].t / 1e9)"
    increase = (
        f"(s[{n}].v - s[1].v + coalesce(list_sum(list_transform(range(2, {n} + 1), "
        "i -> CASE WHEN s[i].v < s[i - 1].v THEN s[i - 1].v ELSE 0 END)), 0))"
    )
    sampled = f"({tn} - {t1})"
    average = f"({sampled} / ({n} - 1))"
    to_start = (
        f"least(CASE WHEN {t1} - {start_s} >= 1.1 * {average} THEN {average} / 2 "
        f"ELSE {t1} - {start_s} END, CASE WHEN {increase} > 0 AND s[1].v >= 0 "
        f"THEN {sampled} * s[1].v / {increase} ELSE 'Infinity'::DOUBLE END)"
    )
    to_end = (
        f"CASE WHEN {end_s} - {tn} >= 1.1 * {average} THEN {average} / 2 ELSE {end_s} - {tn} END"
    )
    formula = (
        f"CASE WHEN {n} = 1 OR {sampled} = 0 THEN 0 ELSE {increase} * ({sampled} + {to_start} + "
        f"{to_end}) / {sampled} / :range_s END"
    )
    return sql(
        "CAST(" + formula + " AS DOUBLE)",
        start=grid.start_ns,
        step=grid.step_ns,
        offset=log_range.offset_ns,
        range_s=log_range.range_ns / 1e9,
    )


def _phi(node: ast.RangeAggregation) -> float:
    """The quantile parameter, clamped (out-of-range quantiles are handled as infinities)."""
    return min(max(node.param if node.param is not None else 0.0, 0.0), 1.0)


def absent_labels(selector: ast.StreamSelector) -> list[tuple[str, str]]:
    """Labels of ``absent_over_time``'s sample: the ``=`` matchers of names used once."""
    counts: dict[str, int] = {}
    for matcher in selector.matchers:
        counts[matcher.name] = counts.get(matcher.name, 0) + 1
    return sorted(
        (m.name, m.value)
        for m in selector.matchers
        if m.op is ast.MatchOp.EQ and counts[m.name] == 1
    )

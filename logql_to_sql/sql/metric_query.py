"""Metric queries -> one SQL statement producing samples ``(labels, k, v)`` (LOGQL.md 6).

Each node compiles to a relation of samples on the evaluation grid (``range_aggregation``
for the leaves); vector aggregations group it, binary operators join two of them on their
matching signature and step, literals are a constant per step. The result says whether it
is a scalar and whether its order is the value order (``sort``/``sort_desc``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from gocompat.regex_syntax import capture_names
from logql_to_sql.errors import UnsupportedError
from logql_to_sql.sql.dialect import sql
from logql_to_sql.sql.exact_sums import exact_sum
from logql_to_sql.sql.range_aggregation import (
    Grid,
    absent_labels,
    compile_range_aggregation,
    grouped_labels,
)
from logql_to_sql.syntax import ast

__all__ = ["MetricPlan", "compile_metric_query"]

V = ast.VectorOp
B = ast.BinaryOpType
_EMPTY_LABELS = "CAST([] AS STRUCT(key VARCHAR, value VARCHAR)[])"
_PUSHABLE = {
    ast.RangeOp.COUNT_OVER_TIME,
    ast.RangeOp.RATE,
    ast.RangeOp.BYTES_OVER_TIME,
    ast.RangeOp.BYTES_RATE,
    ast.RangeOp.SUM_OVER_TIME,
}


@dataclass(frozen=True, kw_only=True)
class MetricPlan:
    """Samples of a metric query, how to present them, and error probes to run first."""

    select: exp.Select
    scalar: bool
    order: str | None
    error_probes: tuple[tuple[exp.Select, exp.Select], ...] = ()
    """Separate ``(probe, labels)`` queries (entries not shared with ``select``)."""
    error_labels: tuple[Callable[[], exp.Select], ...] = ()
    """When ``select`` yields a row with an ``error``, the queries finding its labels."""
    check_messages: tuple[str, ...] = ()
    """Errors of the vector-matching checks computed inside ``select``: a row whose
    ``failed_check`` is ``i`` means check ``i`` failed (the lowest such ``i`` wins)."""
    partials: tuple[tuple[str, exp.Select], ...] = ()
    """Compiled with ``partials=True``: ``(name, partial aggregates)`` of each range
    aggregation, which ``select`` reads as relations of those names and does not define.
    Each partial statement may run over any part of the entries (a group of files, the
    in-memory head): ``select`` over the concatenation of the parts' rows gives the
    samples of the whole."""


@dataclass(kw_only=True)
class _Rel:
    select: exp.Select
    scalar: bool = False
    probes: list[tuple[exp.Select, exp.Select]] = field(default_factory=list)
    checks: list[tuple[exp.Select, str]] = field(default_factory=list)


def compile_metric_query(
    expr: ast.MetricExpr,
    *,
    grid: Grid,
    metadata: bool = True,
    columnar: bool = True,
    partials: bool = False,
    common: frozenset[str] = frozenset(),
) -> MetricPlan:
    """Samples of ``expr`` at every step of ``grid``.

    ``metadata=False`` promises that the queried entries have no structured metadata
    (cheaper plans for ranges without parsers). ``columnar=False`` runs every pipeline on
    the generic label-map pipeline, even where the columnar one applies: same answer,
    slower (differential tests compare them). ``partials=True`` compiles the reading of
    entries apart from the rest (``MetricPlan.partials``), for a split by groups of files.
    ``common`` promises labels that every queried stream has: parsers need not extract
    keys of those names, whose values could only land in ``<name>_extracted``.
    """
    compiler = _MetricCompiler(
        grid, metadata=metadata, columnar=columnar, apart=partials, common=common
    )
    rel = compiler.visit(expr)
    order = _sort_order(expr)
    select = rel.select
    if compiler.shared or rel.checks:
        select = _with_diagnostics(
            select, compiler.shared, [check for check, _ in rel.checks], define=not partials
        )
    return MetricPlan(
        select=select,
        scalar=rel.scalar,
        order=order,
        error_probes=tuple(rel.probes),
        error_labels=tuple(labels for _, _, _, labels in compiler.shared),
        check_messages=tuple(message for _, message in rel.checks),
        partials=tuple(compiler.partials),
    )


_Shared = tuple[str, exp.Select, exp.Select, Callable[[], exp.Select]]


def _diagnostic_row(error: exp.Expr, check: int | None) -> exp.Select:
    return exp.select(
        sql(_EMPTY_LABELS).as_("labels"),
        sql("CAST(NULL AS BIGINT)").as_("k"),
        sql("CAST(NULL AS DOUBLE)").as_("v"),
        error.as_("error"),
        sql("CAST(:c AS INTEGER)", c=exp.null() if check is None else check).as_("failed_check"),
    )


def _with_diagnostics(
    select: exp.Select, shared: list[_Shared], checks: list[exp.Select], *, define: bool = True
) -> exp.Select:
    """The samples plus, if an entry failed, one row whose ``error`` names the error, and
    one row per failed matching check. Everything is one statement because the checks
    read the same failing-entry relations, computed once (materialized CTEs) and visible
    to this statement only; without ``define`` they are relations given to it."""
    samples = exp.select(
        "labels",
        "k",
        "v",
        sql("CAST(NULL AS VARCHAR)").as_("error"),
        sql("CAST(NULL AS INTEGER)").as_("failed_check"),
    ).from_(select.subquery("samples", copy=False), copy=False)
    rows: list[exp.Select] = [samples]
    if shared:
        first_error = exp.Coalesce(
            this=exp.Subquery(this=shared[0][2]),
            expressions=[exp.Subquery(this=probe) for _, _, probe, _ in shared[1:]],
        )
        rows.append(
            _diagnostic_row(exp.column("e"), None)
            .from_(exp.select(first_error.as_("e")).subquery("failed"))
            .where(sql("e IS NOT NULL"))
        )
    for index, check in enumerate(checks):
        rows.append(
            _diagnostic_row(sql("CAST(NULL AS VARCHAR)"), index).where(exp.Exists(this=check))
        )
    union: exp.Query = rows[0]
    for row in rows[1:]:
        union = exp.union(union, row, distinct=False)
    result = exp.select("*").from_(union.subquery("result"))
    if not define:
        return result
    for name, partials, _, _ in shared:
        result = result.with_(name, as_=partials, materialized=True, copy=False)
    return result


def _sort_order(expr: ast.Expr) -> str | None:
    if isinstance(expr, ast.VectorAggregation):
        if expr.op is V.SORT:
            return "asc"
        if expr.op is V.SORT_DESC:
            return "desc"
        return _sort_order(expr.expr)
    if isinstance(expr, ast.BinaryOp):
        return _sort_order(expr.left) or _sort_order(expr.right)
    if isinstance(expr, ast.LabelReplace):
        return _sort_order(expr.expr)
    return None


def _constant(grid: Grid, value: float) -> exp.Select:
    return exp.select(
        sql(_EMPTY_LABELS).as_("labels"),
        sql("range").as_("k"),
        sql("CAST(:v AS DOUBLE)", v=_float_literal(value)).as_("v"),
    ).from_(sql("range(:n)", n=grid.steps))


def _float_literal(value: float) -> exp.Expr:
    if value != value:
        return exp.Literal.string("NaN")
    if value in (float("inf"), float("-inf")):
        return exp.Literal.string("Infinity" if value > 0 else "-Infinity")
    return exp.Literal.number(repr(value))


class _MetricCompiler:
    def __init__(
        self, grid: Grid, *, metadata: bool, columnar: bool, apart: bool, common: frozenset[str]
    ) -> None:
        self.grid = grid
        self.metadata = metadata
        self.columnar = columnar
        self.apart = apart
        self.common = common
        self.shared: list[tuple[str, exp.Select, exp.Select, Callable[[], exp.Select]]] = []
        self.partials: list[tuple[str, exp.Select]] = []
        """With ``apart``: every range aggregation's partial aggregates, by name."""

    def visit(self, node: ast.Expr) -> _Rel:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise UnsupportedError(type(node).__name__)
        result: _Rel = method(node)
        return result

    def visit_Literal(self, node: ast.Literal) -> _Rel:
        return _Rel(select=_constant(self.grid, node.value), scalar=True)

    def visit_VectorLiteral(self, node: ast.VectorLiteral) -> _Rel:
        return _Rel(select=_constant(self.grid, node.value))

    def visit_RangeAggregation(
        self, node: ast.RangeAggregation, grouping: ast.Grouping | None = None
    ) -> _Rel:
        plan = compile_range_aggregation(
            node,
            grid=self.grid,
            grouping=grouping,
            entries_name=f"entries_{len(self.partials) if self.apart else len(self.shared)}",
            metadata=self.metadata,
            columnar=self.columnar,
            apart=self.apart,
            common=self.common,
        )
        probes: list[tuple[exp.Select, exp.Select]] = []
        if plan.materialized is not None and self.apart:
            self.partials.append(plan.materialized)
        if (
            plan.materialized is not None
            and plan.error_labels is not None
            and plan.error_probe is not None
        ):
            self.shared.append((*plan.materialized, plan.error_probe, plan.error_labels))
        elif plan.error_probe is not None and plan.error_labels is not None:
            probes.append((plan.error_probe, plan.error_labels()))
        if node.op is not ast.RangeOp.ABSENT_OVER_TIME:
            return _Rel(select=plan.samples, probes=probes)
        labels = exp.Array(
            expressions=[
                sql("{'key': :k, 'value': :v}", k=name, v=value)
                for name, value in absent_labels(node.range.selector)
            ]
        )
        absent = (
            exp.select(
                sql("CAST(:l AS STRUCT(key VARCHAR, value VARCHAR)[])", l=labels).as_("labels"),
                sql("range").as_("k"),
                sql("CAST(1 AS DOUBLE)").as_("v"),
            )
            .from_(sql("range(:n)", n=self.grid.steps))
            .where(
                exp.Not(
                    this=exp.column("range").isin(
                        query=exp.select("k").from_(plan.samples.subquery("present"))
                    )
                )
            )
        )
        return _Rel(select=absent, probes=probes)

    def visit_VectorAggregation(self, node: ast.VectorAggregation) -> _Rel:
        grouping = node.grouping or ast.Grouping(())
        inner = node.expr
        if (
            node.op is V.SUM
            and isinstance(inner, ast.RangeAggregation)
            and inner.grouping is None
            and inner.op in _PUSHABLE
        ):
            # sum by (g) of a sum-like range op pools the entries directly: same numbers,
            # without materialising every series first.
            return self.visit_RangeAggregation(inner, grouping)
        child = self.visit(inner)
        source = child.select.subquery("child")
        if node.op in (V.TOPK, V.BOTTOMK, V.APPROX_TOPK):
            order = "DESC" if node.op is not V.BOTTOMK else "ASC"
            ranked = exp.select(
                "labels",
                "k",
                "v",
                sql(
                    "row_number() OVER (PARTITION BY :g, k ORDER BY isnan(v), v " + order + ")",
                    g=grouped_labels(exp.column("labels"), grouping),
                ).as_("rn"),
            ).from_(source)
            selected = (
                exp.select("labels", "k", "v")
                .from_(ranked.subquery("ranked"))
                .where(sql("rn <= :n", n=node.param or 0))
            )
            return _Rel(select=selected, probes=child.probes)
        if node.op in (V.SORT, V.SORT_DESC):
            return _Rel(select=child.select, probes=child.probes)
        if node.op in (V.STDDEV, V.STDVAR):
            return _Rel(select=_variance(source, grouping, node.op), probes=child.probes)
        aggregate = {
            V.SUM: exact_sum("v"),
            V.AVG: f"{exact_sum('v')} / count(*)",
            V.MIN: "CASE WHEN bool_and(isnan(v)) THEN CAST('NaN' AS DOUBLE) "
            "ELSE min(v) FILTER (WHERE NOT isnan(v)) END",
            V.MAX: "CASE WHEN bool_and(isnan(v)) THEN CAST('NaN' AS DOUBLE) "
            "ELSE max(v) FILTER (WHERE NOT isnan(v)) END",
            V.COUNT: "CAST(count(*) AS DOUBLE)",
        }[node.op]
        grouped = (
            exp.select(
                grouped_labels(exp.column("labels"), grouping).as_("labels"),
                "k",
                sql("CAST(:a AS DOUBLE)", a=sql(aggregate)).as_("v"),
            )
            .from_(source)
            .group_by(sql("1"), "k")
        )
        return _Rel(select=grouped, probes=child.probes)

    def visit_LabelReplace(self, node: ast.LabelReplace) -> _Rel:
        child = self.visit(node.expr)
        anchored = "^(?:" + node.regex + ")$"
        source_value = sql(
            "coalesce(list_extract(list_filter(labels, e -> e.key = :src), 1).value, '')",
            src=node.src,
        )
        replaced = sql(
            "regexp_replace(:s, :re, :rep)",
            s=source_value,
            re=anchored,
            rep=_go_replacement(node.replacement, node.regex),
        )
        without = sql("list_filter(labels, e -> e.key <> :dst)", dst=node.dst)
        relabelled = sql(
            "CASE WHEN NOT regexp_full_match(:s, :re) THEN labels "
            "WHEN :r = '' THEN :w "
            "ELSE list_sort(list_append(:w, {'key': :dst, 'value': :r})) END",
            s=source_value.copy(),
            re=node.regex,
            r=replaced,
            w=without,
            dst=node.dst,
        )
        select = exp.select(relabelled.as_("labels"), "k", "v").from_(
            child.select.subquery("child")
        )
        return _Rel(select=select, scalar=child.scalar, probes=child.probes)

    def visit_BinaryOp(self, node: ast.BinaryOp) -> _Rel:
        left, right = self.visit(node.left), self.visit(node.right)
        probes = left.probes + right.probes
        checks = left.checks + right.checks
        if left.scalar and right.scalar:
            return _Rel(
                select=_scalar_join(node, left, right), scalar=True, probes=probes, checks=checks
            )
        if left.scalar or right.scalar:
            return _Rel(select=_vector_scalar(node, left, right), probes=probes, checks=checks)
        if node.op.is_set:
            return _Rel(select=_set_operation(node, left, right), probes=probes, checks=checks)
        result = _vector_vector(node, left, right)
        return _Rel(
            select=result,
            probes=probes,
            checks=checks + _matching_checks(node, left, right, result),
        )


def _go_replacement(replacement: str, regex: str) -> str:
    """A Go ``Expand`` template (``$1``, ``${1}``, ``$name``) as an RE2 rewrite (``\\1``)."""
    names = list(capture_names(regex))
    index = {name: i + 1 for i, name in enumerate(names) if name}

    def group(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name.isdigit():
            # Go expands a group the regex does not have to nothing; RE2 refuses it.
            return "\\" + name if int(name) <= min(len(names), 9) else ""
        return "\\" + str(index[name]) if name in index and index[name] <= 9 else ""

    escaped = replacement.replace("\\", "\\\\")
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", group, escaped).replace("$$", "$")


_ARITHMETIC = {
    B.ADD: "l + r",
    B.SUB: "l - r",
    B.MUL: "l * r",
    B.DIV: "CASE WHEN r = 0 THEN CAST('NaN' AS DOUBLE) ELSE l / r END",
    B.MOD: "CASE WHEN r = 0 THEN CAST('NaN' AS DOUBLE) ELSE fmod(l, r) END",
    B.POW: "pow(l, r)",
}
_COMPARISON = {
    B.EQ: "l = r",
    B.NEQ: "l <> r",
    B.GT: "l > r",
    B.GTE: "l >= r",
    B.LT: "l < r",
    B.LTE: "l <= r",
}


def _substitute(text: str, left: exp.Expr, right: exp.Expr) -> exp.Expr:
    template = re.sub(r"\bl\b", ":l", re.sub(r"\br\b", ":r", text))
    return sql(template, l=left, r=right)


def _comparison_holds(op: ast.BinaryOpType, left: exp.Expr, right: exp.Expr) -> exp.Expr:
    # NaN compares unequal to everything, including itself (IEEE), unlike DuckDB's order.
    return sql(
        "CASE WHEN isnan(:a) OR isnan(:b) THEN :ne ELSE :t END",
        a=left.copy(),
        b=right.copy(),
        ne=exp.true() if op is B.NEQ else exp.false(),
        t=_substitute(_COMPARISON[op], left, right),
    )


def _scalar_join(node: ast.BinaryOp, left: _Rel, right: _Rel) -> exp.Select:
    lv, rv = exp.column("v", table="a"), exp.column("v", table="b")
    value = (
        sql("CAST(:c AS DOUBLE)", c=_comparison_holds(node.op, lv, rv))
        if node.op.is_comparison
        else _substitute(_ARITHMETIC[node.op], lv, rv)
    )
    return (
        exp.select(sql(_EMPTY_LABELS).as_("labels"), exp.column("k", table="a"), value.as_("v"))
        .from_(left.select.subquery("a"))
        .join(right.select.subquery("b"), on=sql("a.k = b.k"))
    )


def _vector_scalar(node: ast.BinaryOp, left: _Rel, right: _Rel) -> exp.Select:
    vector_left = not left.scalar
    lv, rv = exp.column("v", table="a"), exp.column("v", table="b")
    vec = lv if vector_left else rv
    labels = exp.column("labels", table="a" if vector_left else "b")
    query = exp.select(labels.as_("labels"), exp.column("k", table="a"))
    joined_from = left.select.subquery("a")
    join = right.select.subquery("b")
    if node.op.is_comparison:
        holds = _comparison_holds(node.op, lv, rv)
        if node.return_bool:
            query = query.select(sql("CAST(:c AS DOUBLE)", c=holds).as_("v"))
            return query.from_(joined_from).join(join, on=sql("a.k = b.k"))
        query = query.select(vec.copy().as_("v"))
        return query.from_(joined_from).join(join, on=sql("a.k = b.k")).where(holds)
    if node.op.is_set:
        raise UnsupportedError("set operation with a scalar")
    query = query.select(_substitute(_ARITHMETIC[node.op], lv, rv).as_("v"))
    return query.from_(joined_from).join(join, on=sql("a.k = b.k"))


def _signature(labels: exp.Expr, matching: ast.VectorMatching | None) -> exp.Expr:
    if matching is None:
        return labels
    if matching.on:
        return grouped_labels(labels, ast.Grouping(matching.labels))
    return grouped_labels(labels, ast.Grouping(matching.labels, without=True))


def _matches_at_step(mine: str, other: str, matching: ast.VectorMatching | None) -> exp.Expr:
    return sql(
        ":x = :y AND :kx = :ky",
        x=_signature(exp.column("labels", table=mine), matching),
        y=_signature(exp.column("labels", table=other), matching),
        kx=exp.column("k", table=mine),
        ky=exp.column("k", table=other),
    )


def _has_match(mine: str, other: str, rel: _Rel, matching: ast.VectorMatching | None) -> exp.Expr:
    return exp.Exists(
        this=exp.select("1")
        .from_(rel.select.subquery(other))
        .where(_matches_at_step(mine, other, matching))
    )


def _set_operation(node: ast.BinaryOp, left: _Rel, right: _Rel) -> exp.Select:
    lefts = exp.select("labels", "k", "v").from_(left.select.subquery("a"))
    if node.op is B.AND:
        return lefts.where(_has_match("a", "b", right, node.matching))
    if node.op is B.UNLESS:
        return lefts.where(exp.Not(this=_has_match("a", "b", right, node.matching)))
    unmatched_right = (
        exp.select("labels", "k", "v")
        .from_(right.select.subquery("b"))
        .where(exp.Not(this=_has_match("b", "a", left, node.matching)))
    )
    union = exp.union(lefts, unmatched_right, distinct=False)
    return exp.select("labels", "k", "v").from_(union.subquery("either"))


def _vector_vector(node: ast.BinaryOp, left: _Rel, right: _Rel) -> exp.Select:
    matching = node.matching
    lv, rv = exp.column("v", table="a"), exp.column("v", table="b")
    on_sig = sql(
        ":a = :b AND a.k = b.k",
        a=_signature(exp.column("labels", table="a"), matching),
        b=_signature(exp.column("labels", table="b"), matching),
    )
    card = matching.cardinality if matching else ast.Cardinality.ONE_TO_ONE
    if card is ast.Cardinality.ONE_TO_ONE:
        labels = _signature(exp.column("labels", table="a"), matching)
    elif card is ast.Cardinality.MANY_TO_ONE:
        labels = _with_included(exp.column("labels", table="a"), "b", matching)
    else:
        labels = _with_included(exp.column("labels", table="b"), "a", matching)
    query = exp.select(labels.as_("labels"), exp.column("k", table="a"))
    joined = query.from_(left.select.subquery("a")).join(right.select.subquery("b"), on=on_sig)
    if node.op.is_comparison:
        holds = _comparison_holds(node.op, lv, rv)
        if node.return_bool:
            return joined.select(sql("CAST(:c AS DOUBLE)", c=holds).as_("v"))
        return joined.select(lv.copy().as_("v")).where(holds)
    return joined.select(_substitute(_ARITHMETIC[node.op], lv, rv).as_("v"))


_DUPLICATE = (
    "found duplicate series on the {side} hand-side;many-to-many matching not allowed: "
    "matching labels must be unique on one side"
)


def _duplicates(rel: _Rel, matching: ast.VectorMatching | None) -> exp.Select:
    counted = (
        exp.select(_signature(exp.column("labels"), matching).as_("sig"), "k")
        .from_(rel.select.subquery("side"))
        .group_by(sql("1"), "k")
        .having(sql("count(*) > 1"))
    )
    return exp.select("1").from_(counted.subquery("dups")).limit(1)


def _matching_checks(
    node: ast.BinaryOp, left: _Rel, right: _Rel, result: exp.Select
) -> list[tuple[exp.Select, str]]:
    """The reference's vector-matching errors, as queries that must find nothing."""
    matching = node.matching
    card = matching.cardinality if matching else ast.Cardinality.ONE_TO_ONE
    if card is ast.Cardinality.ONE_TO_MANY:
        one, one_side = left, "left"
    else:
        one, one_side = right, "right"
    checks = [(_duplicates(one, matching), _DUPLICATE.format(side=one_side))]
    collisions = (
        exp.select("labels", "k")
        .from_(result.subquery("result"))
        .group_by("labels", "k")
        .having(sql("count(*) > 1"))
    )
    message = (
        "multiple matches for labels: many-to-one matching must be explicit "
        "(group_left/group_right)"
        if card is ast.Cardinality.ONE_TO_ONE
        else "multiple matches for labels: grouping labels must ensure unique matches"
    )
    checks.append((exp.select("1").from_(collisions.subquery("collisions")).limit(1), message))
    return checks


def _with_included(many: exp.Expr, one_alias: str, matching: ast.VectorMatching | None) -> exp.Expr:
    include = list(matching.include) if matching else []
    if not include:
        return many
    copied = sql(
        "list_filter(:one, e -> list_contains(:names, e.key))",
        one=exp.column("labels", table=one_alias),
        names=include,
    )
    return sql(
        "list_sort(list_concat(list_filter(:many, e -> NOT list_contains(:names, e.key)), :c))",
        many=many,
        names=include,
        c=copied,
    )


def _variance(source: exp.Subquery, grouping: ast.Grouping, op: ast.VectorOp) -> exp.Select:
    """``stdvar``/``stddev`` of the samples ``source`` per group and step, in two passes:
    the mean, then the mean squared distance to it, both exact sums (``exact_sums``): the
    same in any order of the rows, and without the cancellation of ``E[v^2] - E[v]^2``."""
    grouped = exp.select(
        grouped_labels(exp.column("labels"), grouping).as_("labels"), "k", "v"
    ).from_(source)
    window = "PARTITION BY labels, k"
    centred = exp.select(
        "labels",
        "k",
        "v",
        sql(f"{exact_sum('v', window)} / count(*) OVER ({window})").as_("m"),
    ).from_(grouped.subquery("grouped"))
    variance = f"{exact_sum('(v - m) * (v - m)')} / count(*)"
    value = f"sqrt({variance})" if op is V.STDDEV else variance
    return (
        exp.select("labels", "k", sql(f"CAST({value} AS DOUBLE)").as_("v"))
        .from_(centred.subquery("centred"))
        .group_by("labels", "k")
    )

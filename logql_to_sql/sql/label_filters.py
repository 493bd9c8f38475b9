"""Label filters -> SQL: a keep condition plus the error a failed conversion leaves.

Each filter compiles to a ``Check(keep, error, details)``: ``keep`` decides whether the
entry survives; ``error``/``details`` are the ``LabelFilterErr`` an unconvertible value
sets (the entry is then kept). ``or`` short-circuits (the right side's error only shows
when the left side failed); ``and`` evaluates both (LOGQL.md 5.4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from sqlglot import exp

from logql_to_sql.sql.conversions import Conversion, bytes_of, float_of, nanoseconds_of
from logql_to_sql.sql.dialect import UDF_IP_MATCH, sql
from logql_to_sql.sql.frame import ERROR, ERROR_DETAILS, LABELS, Frame
from logql_to_sql.sql.label_regex import label_regex_condition
from logql_to_sql.syntax import ast

__all__ = ["Check", "ValueOf", "compile_label_filter", "filtered", "label_value"]

_COMPARE = {
    ast.CompareOp.EQ: exp.EQ,
    ast.CompareOp.NEQ: exp.NEQ,
    ast.CompareOp.GT: exp.GT,
    ast.CompareOp.GTE: exp.GTE,
    ast.CompareOp.LT: exp.LT,
    ast.CompareOp.LTE: exp.LTE,
}


@dataclass(frozen=True)
class Check:
    """A compiled label filter."""

    keep: exp.Expr
    error: exp.Expr
    details: exp.Expr


_NO_ERROR = sql("CAST(NULL AS VARCHAR)")


def label_value(name: str) -> exp.Expr:
    """The current value of a label, NULL when absent (error labels read separately)."""
    if name == "__error__":
        return exp.column(ERROR)
    if name == "__error_details__":
        return sql("CAST(NULL AS VARCHAR)")
    return exp.Bracket(this=exp.column(LABELS), expressions=[exp.Literal.string(name)])


ValueOf = Callable[[str], exp.Expr]


def compile_label_filter(node: ast.LabelFilter, value_of: ValueOf = label_value) -> Check:
    """The Check of one label filter tree; ``value_of`` reads a label (NULL when absent)."""
    if isinstance(node, ast.AndLabelFilter):
        left = compile_label_filter(node.left, value_of)
        right = compile_label_filter(node.right, value_of)
        return Check(
            exp.and_(left.keep, right.keep),
            sql("coalesce(:a, :b)", a=left.error, b=right.error),
            sql("coalesce(:a, :b)", a=left.details, b=right.details),
        )
    if isinstance(node, ast.OrLabelFilter):
        left = compile_label_filter(node.left, value_of)
        right = compile_label_filter(node.right, value_of)
        chosen = "CASE WHEN :keep THEN :a ELSE :b END"
        return Check(
            exp.or_(left.keep, right.keep),
            sql(chosen, keep=left.keep.copy(), a=left.error, b=right.error),
            sql(chosen, keep=left.keep.copy(), a=left.details, b=right.details),
        )
    if isinstance(node, ast.StringLabelFilter):
        return _string(node.matcher, value_of)
    if isinstance(node, ast.NumericLabelFilter):
        return _converted(value_of(node.name), node.op, float_of, node.value)
    if isinstance(node, ast.DurationLabelFilter):
        return _converted(value_of(node.name), node.op, nanoseconds_of, node.value_ns)
    if isinstance(node, ast.BytesLabelFilter):
        return _converted(value_of(node.name), node.op, bytes_of, float(node.value))
    return _ip(node, value_of)


def _string(matcher: ast.Matcher, value_of: ValueOf) -> Check:
    value = sql("coalesce(:v, '')", v=value_of(matcher.name))
    if matcher.op in (ast.MatchOp.EQ, ast.MatchOp.NEQ):
        test: exp.Expr = exp.EQ(this=value, expression=exp.Literal.string(matcher.value))
    else:
        test = label_regex_condition(value, matcher.value)
    if matcher.op in (ast.MatchOp.NEQ, ast.MatchOp.NRE):
        test = exp.Not(this=exp.paren(test))
    return Check(test, _NO_ERROR.copy(), _NO_ERROR.copy())


def _converted(
    raw: exp.Expr, op: ast.CompareOp, convert: Callable[[exp.Expr], Conversion], target: float
) -> Check:
    conversion = convert(raw)
    compare = _COMPARE[op](this=conversion.value, expression=exp.Literal.number(target))
    # Kept: the comparison holds, or (no comparison) the label is present but failed to
    # convert. The value is mentioned once on the common path: DuckDB inlines it into
    # the filter at each mention.
    keep = sql("coalesce(:compare, :raw IS NOT NULL)", compare=compare, raw=raw.copy())
    failed = sql(":raw IS NOT NULL AND :value IS NULL", raw=raw.copy(), value=conversion.value)
    return Check(
        keep,
        sql("CASE WHEN :failed THEN 'LabelFilterErr' END", failed=failed),
        sql("CASE WHEN :failed THEN :error END", failed=failed.copy(), error=conversion.error),
    )


def _ip(node: ast.IpLabelFilter, value_of: ValueOf) -> Check:
    raw = value_of(node.name)
    match: exp.Expr = exp.Anonymous(
        this=UDF_IP_MATCH, expressions=[raw, exp.Literal.string(node.pattern)]
    )
    if node.op is ast.MatchOp.NEQ:
        match = exp.Not(this=match)
    # An entry that already carries an error is always kept (LOGQL.md 5.4).
    keep = sql(
        ":error IS NOT NULL OR (:raw IS NOT NULL AND coalesce(:match, false))",
        error=exp.column(ERROR),
        raw=raw.copy(),
        match=match,
    )
    return Check(keep, _NO_ERROR.copy(), _NO_ERROR.copy())


def filtered(frame: Frame, check: Check, *, extras: Mapping[str, exp.Expr] | None = None) -> Frame:
    """``frame`` after a label filter: the rows ``check`` keeps, with its error set on those
    that carry none yet (the first error wins)."""
    err, errd = exp.column(ERROR), exp.column(ERROR_DETAILS)
    return frame.next(
        {
            ERROR: sql(
                "CASE WHEN :error IS NULL THEN :e ELSE :error END", error=err, e=check.error
            ),
            ERROR_DETAILS: sql(
                "CASE WHEN :error IS NULL THEN :d ELSE :error_details END",
                error=err.copy(),
                d=check.details,
                error_details=errd,
            ),
        },
        where=check.keep,
        extras=extras,
    )

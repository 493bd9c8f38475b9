"""The entries a delete request removes, as SQL over the relations ``logs`` and ``streams``.

A delete request is a log selector, an optional pipeline and an inclusive time range. An
entry is deleted when its stream matches the selector, its time lies in the range (both
ends included) and the pipeline keeps it, as the reference's delete filter decides.

* A pipeline of line filters only (the usual case, ``|= "secret"``) compiles to a
  condition on one row of ``logs``: cheap, and DuckDB still pushes the query's own
  filters into the scan.
* Any other pipeline (parsers, label filters, formatting) compiles to a SELECT of the
  deleted entries' ``(stream_id, ts, line)``, for an anti-join.

>>> from logql_to_sql import parse_expr
>>> plan = compile_deletion(parse_expr('{app="a"} |= "x"'), start_ns=0, end_ns=10)
>>> plan.entries is None and "contains(line, 'x')" in plan.condition.sql().lower()
True
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from logql_to_sql.sql.compiler import compile_stream_matchers, filtering_pipeline
from logql_to_sql.sql.frame import STORED_LINE
from logql_to_sql.sql.stages import line_filter_condition
from logql_to_sql.syntax import ast

__all__ = ["DeletionPlan", "compile_deletion"]


@dataclass(frozen=True)
class DeletionPlan:
    """Exactly one of ``condition`` and ``entries`` is set."""

    condition: exp.Expr | None
    """True for a deleted row of ``logs`` (columns ``ts``, ``stream_id``, ``line``)."""
    entries: exp.Select | None
    """``(stream_id, ts, line)`` of the deleted entries of ``logs``."""


def compile_deletion(query: ast.LogQuery, *, start_ns: int, end_ns: int) -> DeletionPlan:
    """What a delete request of ``query`` over ``[start_ns, end_ns]`` removes."""
    in_range: list[exp.Expr] = [
        exp.GTE(this=exp.column("ts"), expression=exp.Literal.number(start_ns)),
        exp.LTE(this=exp.column("ts"), expression=exp.Literal.number(end_ns)),
    ]
    if all(isinstance(stage, ast.LineFilter) for stage in query.stages):
        matched = exp.column("stream_id").isin(
            query=compile_stream_matchers(query.selector.matchers)
        )
        filters = [
            line_filter_condition(stage, exp.column("line"))
            for stage in query.stages
            if isinstance(stage, ast.LineFilter)
        ]
        return DeletionPlan(condition=exp.and_(matched, *in_range, *filters), entries=None)
    frame = filtering_pipeline(query.selector.matchers, in_range, query.stages)
    entries = exp.select(
        exp.column("stream_id"), exp.column("ts"), exp.column(STORED_LINE).as_("line")
    ).from_(frame.select.subquery("kept", copy=False), copy=False)
    return DeletionPlan(condition=None, entries=entries)

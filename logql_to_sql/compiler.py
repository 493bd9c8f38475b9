"""LogQL AST -> sqlglot expression over the logical relations ``logs`` and ``streams``.

``streams(stream_id, labels)`` holds one row per stream of the tenant; ``logs(ts, stream_id,
line, metadata)`` one row per entry. The compiler is pure: it knows no files, connections or
HTTP. User text only ever enters the tree as sqlglot literal nodes.

>>> from logql_to_sql import parse
>>> plan = compile_log_query(parse('{app="a"} |= "x"'), start_ns=0, end_ns=10, limit=5,
...                          direction=Direction.BACKWARD)
>>> "contains(line, 'x')" in plan.sql().lower()
True
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from sqlglot import exp

from logql_to_sql import ast
from logql_to_sql.dialect import DIALECT, contains, regex_full_match, regex_search
from logql_to_sql.errors import UnsupportedError

__all__ = ["Direction", "LogQueryPlan", "compile_log_query", "compile_stream_matchers"]


class Direction(enum.Enum):
    """Order of entries in a log query result."""

    FORWARD = "forward"
    BACKWARD = "backward"


@dataclass(frozen=True)
class LogQueryPlan:
    """The compiled query: entries of matching streams, ordered and limited."""

    select: exp.Select

    def sql(self) -> str:
        """The query text in DuckDB's dialect."""
        return self.select.sql(dialect=DIALECT)


def compile_log_query(
    query: ast.LogQuery,
    *,
    start_ns: int,
    end_ns: int,
    limit: int | None,
    direction: Direction,
) -> LogQueryPlan:
    """Compile a log query to ``SELECT ts, stream_id, line, metadata FROM logs ...``."""
    compiler = _LogCompiler()
    matched = compile_stream_matchers(query.selector.matchers)
    conditions: list[exp.Expression] = [
        exp.column("stream_id").isin(query=matched),
        exp.GTE(this=exp.column("ts"), expression=exp.Literal.number(start_ns)),
        exp.LT(this=exp.column("ts"), expression=exp.Literal.number(end_ns)),
    ]
    for stage in query.stages:
        conditions.append(compiler.visit(stage))
    select = (
        exp.select("ts", "stream_id", "line", "metadata")
        .from_("logs")
        .where(exp.and_(*conditions))
        .order_by(exp.Ordered(this=exp.column("ts"), desc=direction is Direction.BACKWARD))
    )
    if limit is not None:
        select = select.limit(limit)
    return LogQueryPlan(select)


def compile_stream_matchers(matchers: tuple[ast.Matcher, ...]) -> exp.Select:
    """``SELECT stream_id FROM streams WHERE <every matcher holds>``."""
    select = exp.select("stream_id").from_("streams")
    if matchers:
        select = select.where(exp.and_(*(_stream_matcher(m) for m in matchers)))
    return select


def _stream_matcher(matcher: ast.Matcher) -> exp.Expression:
    value = exp.Coalesce(
        this=exp.Bracket(this=exp.column("labels"), expressions=[exp.Literal.string(matcher.name)]),
        expressions=[exp.Literal.string("")],
    )
    literal = exp.Literal.string(matcher.value)
    if matcher.op is ast.MatchOp.EQ:
        return exp.EQ(this=value, expression=literal)
    if matcher.op is ast.MatchOp.NEQ:
        return exp.NEQ(this=value, expression=literal)
    # Stream selectors let `.` match a newline (Prometheus 3 semantics, LOGQL.md 4).
    pattern = exp.Literal.string("(?s)" + matcher.value)
    test = regex_full_match(value, pattern)
    return test if matcher.op is ast.MatchOp.RE else exp.Not(this=test)


class _LogCompiler:
    """One ``visit_<Node>`` per pipeline stage, each returning a boolean condition."""

    LINE_TESTS: ClassVar[dict[ast.LineFilterOp, Callable[[exp.Expression, str], exp.Expression]]]

    def visit(self, node: object) -> exp.Expression:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise UnsupportedError(f"{type(node).__name__} is not supported yet")
        result: exp.Expression = method(node)
        return result

    def visit_LineFilter(self, node: ast.LineFilter) -> exp.Expression:
        test = self.LINE_TESTS.get(node.op)
        if test is None:
            raise UnsupportedError(f"line filter {node.op.value} is not supported yet")
        line = exp.column("line")
        tests = []
        for operand in node.operands:
            if not isinstance(operand, str):
                raise UnsupportedError("ip() line filters are not supported yet")
            tests.append(test(line, operand))
        if node.op in _NEGATED:
            return exp.Not(this=exp.paren(exp.or_(*tests)))
        return exp.paren(exp.or_(*tests))


_NEGATED = frozenset({ast.LineFilterOp.NOT_CONTAINS, ast.LineFilterOp.NOT_MATCH})

_LogCompiler.LINE_TESTS = {
    ast.LineFilterOp.CONTAINS: lambda line, s: contains(line, exp.Literal.string(s)),
    ast.LineFilterOp.NOT_CONTAINS: lambda line, s: contains(line, exp.Literal.string(s)),
    ast.LineFilterOp.MATCH: lambda line, s: regex_search(line, exp.Literal.string(s)),
    ast.LineFilterOp.NOT_MATCH: lambda line, s: regex_search(line, exp.Literal.string(s)),
}

"""The SQL a LogQL query compiles to, written over the SQL endpoint's views.

The compiler's ``logs`` relation holds ``ts`` in nanoseconds and no labels, the SQL view
``logs`` a TIMESTAMP_NS ``ts`` and ``ts_ns``: the explained SQL reads the views through
subqueries giving the compiler's shape, so it runs as it is on the SQL endpoint when it
needs none of the engine's own functions (parsers such as ``| json``, templates, ``ip()``
run as functions the endpoint does not expose: ``runnable`` is then false, and a log query
can still be continued as ``SELECT ... FROM logql('<query>')``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from logql_to_sql import (
    DIALECT,
    Direction,
    Grid,
    ast,
    compile_log_query,
    compile_metric_query,
    to_text,
)
from svc.errors import ServiceError
from svc.sql.statement import check_statement

__all__ = ["Explained", "explain_logql"]

_COMPILER_SHAPES = {
    "logs": "SELECT ts_ns AS ts, stream_id, line, metadata FROM logs",
    "streams": "SELECT stream_id, labels FROM streams",
}


@dataclass(frozen=True)
class Explained:
    """A LogQL query's SQL, and whether the SQL endpoint runs it as it is."""

    kind: str
    """``log`` or ``metric``."""
    sql: str
    runnable: bool
    logql: str | None
    """For a log query, the same rows through ``logql()``."""


def explain_logql(
    expr: ast.Expr,
    *,
    start_ns: int,
    end_ns: int,
    limit: int,
    direction: Direction,
    step_ns: int,
) -> Explained:
    """The formatted SQL of ``expr`` as ``query_range`` would run it over the range."""
    if isinstance(expr, ast.LogQuery):
        select = compile_log_query(
            expr, start_ns=start_ns, end_ns=end_ns, limit=limit, direction=direction
        ).select
        text = to_text(expr)
        order = "DESC" if direction is Direction.BACKWARD else "ASC"
        logql: str | None = (
            f"SELECT ts, labels, line FROM logql({exp.Literal.string(text).sql(DIALECT)}) "
            f"ORDER BY ts {order} LIMIT {limit}"
        )
        kind = "log"
    else:
        steps = (end_ns - start_ns) // step_ns + 1
        grid = Grid(start_ns=start_ns, step_ns=step_ns, steps=steps)
        select = compile_metric_query(expr, grid=grid).select
        logql, kind = None, "metric"
    tree = select.copy().transform(_over_views)
    sql = tree.sql(dialect=DIALECT, pretty=True)
    return Explained(kind, sql, _runnable(sql), logql)


def _over_views(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
        shape = _COMPILER_SHAPES.get(node.name)
        if shape is not None and not node.args.get("db"):
            alias = node.alias or node.name
            return exp.maybe_parse(shape, dialect=DIALECT).subquery(alias)
    return node


def _runnable(sql: str) -> bool:
    try:
        check_statement(sql)
    except ServiceError:
        return False
    return True

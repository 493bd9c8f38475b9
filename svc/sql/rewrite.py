"""A checked statement made runnable: views renamed, ``logql()`` calls expanded, the views'
definitions put in front.

The client's ``logs`` and ``streams`` become the service's views (``__svc_logs AS logs``,
so qualified columns still resolve), each ``logql('<query>')`` a derived table
(:mod:`svc.sql.logql_source`). What the client wrote is rendered from the checked tree:
comments are gone and every literal is re-quoted by sqlglot.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp

import logql_to_sql
from logql_to_sql import Needed, ast
from svc.sql.logql_source import logql_rows
from svc.sql.policy import LOGQL_FUNCTION, VIEWS
from svc.sql.statement import Statement, function_name
from svc.sql.views import LABELS_TABLE, LOGS_VIEW, STREAMS_VIEW, view_definitions

__all__ = ["Rewritten", "label_keys", "needs_labels", "rewrite"]

_DIALECT = "duckdb"
_RENAMED = {"logs": LOGS_VIEW, "streams": STREAMS_VIEW}
_LABEL_COLUMNS = frozenset({"labels", "tenant"})
# Names a parser can produce; a query reading another key reads the whole map.
_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Rewritten:
    """The statement as it runs: ``prefix`` (``EXPLAIN``, ``DESCRIBE``...) and the query,
    which reads the engine's ``logs`` and ``streams`` when ``reads_views``."""

    prefix: str
    query: str
    reads_views: bool
    """Whether it reads ``logs``, ``streams`` or ``logql()`` (else no file is bound)."""
    queries: tuple[ast.Expr, ...] = ()
    """The log queries of its ``logql()`` calls, when it reads the views through those
    only (then only their entries are read: the skipping index may narrow the view)."""


def rewrite(
    statement: Statement,
    *,
    start_ns: int,
    end_ns: int,
    multi: bool,
    stream_table: str,
    bounded: bool = True,
    unique_entries: Callable[[], bool] = lambda: False,
) -> Rewritten:
    """The statement's text with its views and ``logql()`` calls resolved (``bounded``:
    see :func:`svc.sql.views.view_definitions`; ``unique_entries``, asked at the first
    ``logql()`` call: whether the data read holds no entry twice)."""
    resolved = _without_logql(statement)
    if resolved is None:
        resolved = _resolved(
            statement,
            start_ns=start_ns,
            end_ns=end_ns,
            multi=multi,
            unique_entries=unique_entries,
        )
    if not resolved.reads:
        return Rewritten(statement.prefix, resolved.body, reads_views=False)
    definitions = view_definitions(
        stream_table,
        start_ns=start_ns,
        end_ns=end_ns,
        labels=resolved.labels,
        multi=multi,
        bounded=bounded,
        read=resolved.views,
        keys=resolved.keys,
    )
    return Rewritten(
        statement.prefix,
        f"WITH {', '.join([*definitions, *resolved.ctes])} {resolved.body}",
        reads_views=True,
        queries=resolved.queries,
    )


@dataclass(frozen=True)
class _Resolved:
    """A statement with its views and ``logql()`` calls resolved, but for the views'
    definitions (which alone depend on the range when it calls no ``logql()``)."""

    ctes: tuple[str, ...]
    """The query's own common table expressions, to follow the views'."""
    body: str
    reads: bool
    labels: bool
    queries: tuple[ast.Expr, ...]
    views: frozenset[str] = frozenset()
    """The views it reads (``logql()`` rows read the label table)."""
    keys: Needed = None
    """The only label keys it reads (:func:`label_keys`)."""


@functools.lru_cache(maxsize=256)
def _without_logql(statement: Statement) -> _Resolved | None:
    """The statement resolved when it calls no ``logql()`` (else None): the same for any
    range, so kept per checked statement, as the check is (about 0.1 ms each to redo)."""
    if any(_logql_call(table) for table in statement.tree.find_all(exp.Table)):
        return None
    return _resolved(statement, start_ns=0, end_ns=0, multi=False, unique_entries=lambda: False)


def _logql_call(table: exp.Table) -> bool:
    source = table.this
    return isinstance(source, exp.Func) and function_name(source) == LOGQL_FUNCTION


def _resolved(
    statement: Statement,
    *,
    start_ns: int,
    end_ns: int,
    multi: bool,
    unique_entries: Callable[[], bool],
) -> _Resolved:
    tree = statement.tree.copy()
    labels = needs_labels(tree)
    wanted = label_keys(tree)
    reads = plain = False
    views: set[str] = set()
    queries: list[ast.Expr] = []
    unique: bool | None = None
    for table in list(tree.find_all(exp.Table)):
        source = table.this
        if _logql_call(table):
            text = source.expressions[0].name
            unique = unique_entries() if unique is None else unique
            rows = logql_rows(
                text,
                start_ns=start_ns,
                end_ns=end_ns,
                multi=multi,
                wanted=wanted,
                unique_entries=unique,
            )
            queries.append(logql_to_sql.parse(text))  # valid: logql_rows said so
            alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier("logql"))
            table.replace(exp.Subquery(this=rows, alias=alias.copy()))
            reads = True
            views.add(LABELS_TABLE)
        elif isinstance(source, exp.Identifier) and source.name.lower() in VIEWS:
            if not table.args.get("alias"):
                table.set("alias", exp.TableAlias(this=source.copy()))
            table.set("this", exp.to_identifier(_RENAMED[source.name.lower()]))
            reads = plain = True
            views.add(_RENAMED[source.name.lower()])
    if not reads:
        return _Resolved((), tree.sql(dialect=_DIALECT), reads=False, labels=False, queries=())
    ctes, body = _own_parts(tree)
    return _Resolved(
        ctes,
        body,
        reads=True,
        labels=labels,
        queries=() if plain else tuple(queries),
        views=frozenset(views),
        keys=wanted,
    )


def _own_parts(tree: exp.Expr) -> tuple[tuple[str, ...], str]:
    """The query's own common table expressions and the rest: the views' definitions go
    in front of them, so the query's expressions can read the views."""
    own = tree.args.get("with_")
    if "with_" not in tree.arg_types or (own is not None and own.args.get("recursive")):
        return (), f"SELECT * FROM ({tree.sql(dialect=_DIALECT)})"
    ctes: tuple[str, ...] = ()
    if own is not None:
        ctes = tuple(cte.sql(dialect=_DIALECT) for cte in own.expressions)
        tree.set("with_", None)
    return ctes, tree.sql(dialect=_DIALECT)


def needs_labels(tree: exp.Expr) -> bool:
    """Whether a query may read the ``labels`` or ``tenant`` column of ``logs``.

    Conservative: any mention of those names, any ``*`` or ``COLUMNS(...)`` outside an
    aggregate, a natural join, or a whole row (a column named as a table). A query this
    misjudges fails with an unknown column; it never gets a wrong answer.
    """
    tables = {t.alias_or_name.lower() for t in tree.find_all(exp.Table)}
    tables |= {t.name.lower() for t in tree.find_all(exp.Table)}
    for node in tree.walk():
        if isinstance(node, exp.Identifier) and node.name.lower() in _LABEL_COLUMNS:
            return True
        if isinstance(node, exp.Star) and not isinstance(node.parent, exp.AggFunc):
            return True
        if isinstance(node, exp.Columns):
            return True
        if isinstance(node, exp.Join) and node.args.get("method") == "NATURAL":
            return True
        if isinstance(node, exp.Column) and node.name.lower() in tables:
            return True
    return False


def label_keys(tree: exp.Expr) -> Needed:
    """The keys a query reads from any ``labels`` column, when it reads them only as
    ``labels['key']`` with literal keys; None when it may read the whole map.

    ``logql()`` then has its parsers extract those keys alone. Conservative like
    :func:`needs_labels`: any other mention of a ``labels`` name, any ``*`` or
    ``COLUMNS(...)`` outside an aggregate, a whole row, or a column alias list (which
    could rename ``labels``) gives None.
    """
    tables = {t.alias_or_name.lower() for t in tree.find_all(exp.Table)}
    tables |= {t.name.lower() for t in tree.find_all(exp.Table)}
    keys: set[str] = set()
    for node in tree.walk():
        if isinstance(node, exp.Star) and not isinstance(node.parent, exp.AggFunc):
            return None
        if isinstance(node, exp.Columns):
            return None
        if isinstance(node, exp.TableAlias) and node.args.get("columns"):
            return None
        if isinstance(node, exp.Column) and node.name.lower() in tables:
            return None
        if not isinstance(node, exp.Identifier) or node.name.lower() != "labels":
            continue
        column, bracket = node.parent, node.parent.parent if node.parent else None
        if not isinstance(column, exp.Column) or column.this is not node:
            return None
        if not isinstance(bracket, exp.Bracket) or bracket.this is not column:
            return None
        if len(bracket.expressions) != 1:
            return None
        key = bracket.expressions[0]
        if not isinstance(key, exp.Literal) or not key.is_string:
            return None
        if not _LABEL_NAME.fullmatch(key.name):
            return None
        keys.add(key.name)
    return frozenset(keys)

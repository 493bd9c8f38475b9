"""The static check of an ad hoc SQL statement: parsed, one statement, read-only, views only.

The text is parsed with sqlglot in DuckDB's dialect, and what runs is the tree rendered
again (comments dropped), never the client's text, so the check sees exactly what DuckDB
will. Every node of the tree is looked at: common table expressions, subqueries, lateral
joins, scalar subqueries and function arguments alike (see :mod:`svc.sql.policy`).

>>> check_statement("SELECT count(*) FROM logs").kind
'query'
>>> check_statement("DROP TABLE logs")
Traceback (most recent call last):
...
svc.sql.statement.SqlRefused: SQL refused: DROP statements are not allowed; ...
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass

import sqlglot
from sqlglot import Token, TokenType, exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.errors import ParseError, TokenError

from svc.errors import BadRequestError
from svc.sql.policy import (
    FORBIDDEN_NODES,
    LOGQL_FUNCTION,
    PURE_TABLE_FUNCTIONS,
    RESERVED_PREFIX,
    STATEMENT_KEYWORDS,
    VIEWS,
    denied_function,
    statement_name,
)

__all__ = ["QUERY_KINDS", "SqlRefused", "Statement", "check_statement", "function_name"]

QUERY_KINDS = (exp.Select, exp.SetOperation, exp.Values, exp.Subquery)
"""Roots of a plain query."""

_ALLOWED = (
    "only SELECT, WITH ... SELECT, VALUES, DESCRIBE or SUMMARIZE of the views, and EXPLAIN "
    "of those are"
)
_SOURCES = "a query reads the views logs and streams, its own WITH tables and logql('<query>')"
_PLAIN_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_EXPLAIN = re.compile(r"(?is)^\s*(ANALY[SZ]E\b)?\s*(.*)$")
_DIALECT = DuckDB()


class SqlRefused(BadRequestError):
    """The statement is not one the SQL endpoint runs (400, saying what was refused)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"SQL refused: {reason}")


@dataclass(frozen=True, eq=False)
class Statement:
    """A checked statement: its kind and the tree of the query it runs or describes.

    Equal only to itself (sqlglot compares trees by hash): a cache keyed by statements
    (:func:`svc.sql.rewrite.rewrite`'s) never takes one for another."""

    kind: str
    """``query``, ``describe``, ``summarize``, ``explain`` or ``explain analyze``."""
    tree: exp.Expr
    """The query (for ``describe``/``summarize`` of a view: ``SELECT * FROM <view>``)."""

    @property
    def prefix(self) -> str:
        """The keywords run before the query (empty for a plain query)."""
        return "" if self.kind == "query" else self.kind.upper() + " "


@functools.lru_cache(maxsize=256)
def check_statement(text: str) -> Statement:
    """Parse ``text`` and check it (see the module docstring); raise :class:`SqlRefused`,
    or :class:`BadRequestError` when it does not parse.

    The same text always gets the same answer, and a dashboard sends the same statements
    again and again: the checked statements are kept (about 1.5 ms each to check again).
    Their trees are shared, so callers copy before changing one.
    """
    tokens = _tokens(text)
    if not tokens:
        raise BadRequestError("SQL parse error: the query is empty")
    first = tokens[0]
    word = "(" if first.token_type is TokenType.L_PAREN else first.text.upper()
    if word not in STATEMENT_KEYWORDS:
        raise SqlRefused(f"{word} statements are not allowed; {_ALLOWED} allowed")
    if word == "EXPLAIN":
        return _explain(tokens)
    return _checked_root(_parse_one(text))


def _tokens(text: str) -> list[Token]:
    try:
        return _DIALECT.tokenize(text)
    except TokenError as exc:
        raise BadRequestError(f"SQL parse error: {exc}") from exc


def _explain(tokens: list[Token]) -> Statement:
    rest = tokens[1].text if len(tokens) > 1 else ""
    match = _EXPLAIN.match(rest)
    assert match is not None  # the pattern matches any text
    inner = _parse_one(match.group(2))
    if not isinstance(inner, QUERY_KINDS):
        raise SqlRefused(f"EXPLAIN of {statement_name(inner)} is not allowed; {_ALLOWED} allowed")
    _check_tree(inner)
    return Statement("explain analyze" if match.group(1) else "explain", inner)


def _parse_one(text: str) -> exp.Expr:
    try:
        statements = [s for s in sqlglot.parse(text, dialect=_DIALECT) if s is not None]
    except ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        where = f" at line {first.get('line')}, col {first.get('col')}" if first else ""
        description = first.get("description", str(exc))
        raise BadRequestError(f"SQL parse error{where}: {description}") from exc
    except TokenError as exc:
        raise BadRequestError(f"SQL parse error: {exc}") from exc
    if len(statements) != 1:
        raise SqlRefused(f"send exactly one statement, not {len(statements)}")
    return statements[0]


def _checked_root(root: exp.Expr) -> Statement:
    if isinstance(root, QUERY_KINDS):
        _check_tree(root)
        return Statement("query", root)
    if isinstance(root, exp.Describe | exp.Summarize):
        kind = "describe" if isinstance(root, exp.Describe) else "summarize"
        target = root.this
        extras = [k for k, v in root.args.items() if k != "this" and v]
        if extras or not isinstance(target, (exp.Table, *QUERY_KINDS)):
            raise SqlRefused(f"this form of {kind.upper()} is not allowed; {_ALLOWED} allowed")
        if isinstance(target, exp.Table):
            target = exp.select(exp.Star()).from_(target.copy())
        _check_tree(target)
        return Statement(kind, target)
    raise SqlRefused(f"{statement_name(root)} statements are not allowed; {_ALLOWED} allowed")


def _check_tree(tree: exp.Expr) -> None:
    """Refuse anything but reads of the views, and drop the comments (a query runs as the
    rendered tree); then look at every call in the text that will run."""
    _check_nodes(tree)
    _check_rendered(tree.sql(dialect=_DIALECT))


def _check_rendered(text: str) -> None:
    """Every ``name(`` of the rendered statement, whatever sqlglot parsed it as: a
    function sqlglot knows under another name is still seen as DuckDB will call it."""
    tokens = _tokens(text)
    for token, following in itertools.pairwise(tokens):
        if following.token_type is TokenType.L_PAREN and denied_function(token.text):
            raise SqlRefused(f"the function {token.text.lower()}() is not allowed")


def _check_nodes(tree: exp.Expr) -> None:
    for cte in tree.find_all(exp.CTE):
        name = cte.alias_or_name.lower()
        if name in VIEWS or name.startswith(RESERVED_PREFIX):
            raise SqlRefused(f"the name {name} is reserved: WITH tables cannot be named so")
        if not _PLAIN_NAME.match(name):
            # A name out of its scope is looked up as a table, or as a file if it looks like one.
            raise SqlRefused(f"the WITH table name {cte.alias_or_name!r} is not a plain name")
    for node in tree.walk():
        node.comments = None
        for kind in FORBIDDEN_NODES:
            if isinstance(node, kind):
                raise SqlRefused(f"{statement_name(node)} is not allowed inside a query")
        if isinstance(node, exp.Table):
            _check_table(node, _visible_ctes(node))
        elif isinstance(node, exp.Func):
            _check_function(node)


def _visible_ctes(node: exp.Expr) -> set[str]:
    """The names of the WITH tables in scope where ``node`` is."""
    names: set[str] = set()
    parent = node.parent
    while parent is not None:
        own = parent.args.get("with_")
        if isinstance(own, exp.With):
            names.update(cte.alias_or_name.lower() for cte in own.expressions)
        parent = parent.parent
    return names


def _check_table(table: exp.Table, defined: set[str]) -> None:
    source = table.this
    if isinstance(source, exp.Func):
        name = function_name(source)
        if name == LOGQL_FUNCTION:
            _check_logql_call(source)
        elif name not in PURE_TABLE_FUNCTIONS:
            raise SqlRefused(f"the table function {name}() is not allowed; {_SOURCES}")
        return
    if not isinstance(source, exp.Identifier):
        raise SqlRefused(f"the table {table.sql(dialect=_DIALECT)} is not allowed; {_SOURCES}")
    name = source.name
    if table.args.get("db") or table.args.get("catalog"):
        raise SqlRefused(f"the table {_quoted(table)} is not allowed; {_SOURCES}")
    if name.lower() in VIEWS or name.lower() in defined:
        return
    raise SqlRefused(f"the table {_quoted(table)} is not allowed; {_SOURCES}")


def _quoted(table: exp.Table) -> str:
    return '"' + ".".join(part.name for part in table.parts) + '"'


def _check_logql_call(call: exp.Func) -> None:
    arguments = call.expressions
    if len(arguments) != 1 or not (
        isinstance(arguments[0], exp.Literal) and arguments[0].is_string
    ):
        raise SqlRefused("logql() takes one argument, the LogQL log query as a string literal")


def _check_function(node: exp.Func) -> None:
    name = function_name(node)
    if name == LOGQL_FUNCTION and not isinstance(node.parent, exp.Table):
        raise SqlRefused("logql() is a table function: use it in FROM")
    names = {name, node.key, *(n.lower() for n in getattr(type(node), "_sql_names", ()))}
    for candidate in names:
        if denied_function(candidate):
            raise SqlRefused(f"the function {candidate}() is not allowed")


def function_name(node: exp.Func) -> str:
    """The lower-case name of a function call as written (sqlglot's for known ones)."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()

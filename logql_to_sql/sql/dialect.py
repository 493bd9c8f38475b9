"""The SQL engine's dialect and the functions the compiler emits, in one place.

``sql(template, **values)`` builds an expression from a fixed SQL fragment written by the
compiler's authors (never from user text) whose ``:name`` placeholders (outside quotes) are
replaced by sqlglot nodes; Python strings and numbers become literal nodes, so user text
is always quoted by sqlglot and never spliced into SQL.
"""

from __future__ import annotations

import re
from functools import cache

import sqlglot
from sqlglot import exp

__all__ = [
    "DIALECT",
    "QUERY_VARIABLE",
    "UDF_IP_MATCH",
    "UDF_JSON_FIELDS",
    "UDF_JSON_PARTIAL",
    "UDF_TEMPLATE",
    "contains",
    "literal",
    "query_id",
    "regex_full_match",
    "regex_search",
    "sql",
]

DIALECT = "duckdb"
"""sqlglot dialect the compiled queries are rendered in."""

UDF_TEMPLATE = "logql_template"
"""Engine-provided function: (template, name, labels, line, ts, query id) -> {text, error}."""

UDF_IP_MATCH = "logql_ip_match"
"""Engine-provided function: (text, ip pattern) -> whether an IP in text matches."""

UDF_JSON_FIELDS = "logql_json_fields"
"""Engine-provided function: (line, query id) -> ``| json``'s flattened fields,
LIST(STRUCT(key, value)), in line order with duplicates, names sanitised, number text kept
(LOGQL.md 5.3)."""

QUERY_VARIABLE = "logql_query"
"""DuckDB variable the engine sets, per connection, to the id of the query it runs. The
engine's Python functions get it as their last argument (:func:`query_id`) to find that
query's deadline and budgets: they may run on any of DuckDB's threads."""


def query_id() -> exp.Expr:
    """The running query's id, as the engine's Python functions receive it."""
    return exp.Anonymous(this="getvariable", expressions=[exp.Literal.string(QUERY_VARIABLE)])


UDF_JSON_PARTIAL = "logql_json_partial"
"""Engine-provided function: (line, query id) -> the same as ``UDF_JSON_FIELDS``, declared
free of side effects, so that a query calling it keeps DuckDB's optimisations (filters
pushed below it, the top-N of a limited scan). For the fields of the few malformed lines
a hinted ``| json`` reads, where computing them once per use costs nothing."""

Value = exp.Expr | str | int | float | bool | None | list[str]


def literal(value: Value) -> exp.Expr:
    """A sqlglot node for a Python value (strings become quoted literals)."""
    if isinstance(value, exp.Expr):
        return value
    if value is None:
        return exp.null()
    if isinstance(value, bool):
        return exp.true() if value else exp.false()
    if isinstance(value, int | float):
        return exp.Literal.number(value)
    if isinstance(value, list):
        return exp.Array(expressions=[exp.Literal.string(v) for v in value])
    return exp.Literal.string(value)


_PLACEHOLDER = re.compile(r"(?<![\w':])[:]([A-Za-z_]\w*)")
_PREFIX = "_p_"


@cache
def _parsed(template: str) -> exp.Expr:
    # Placeholders become identifiers first: sqlglot accepts those everywhere, e.g. as the
    # body of a lambda, where it rejects ``:name``.
    parsed = sqlglot.parse_one(_PLACEHOLDER.sub(_PREFIX + r"\1", template), dialect=DIALECT)
    assert isinstance(parsed, exp.Expr)
    return parsed


def sql(template: str, **values: Value) -> exp.Expr:
    """The fixed fragment ``template`` with each ``:name`` replaced by ``values[name]``."""
    tree = _parsed(template).copy()
    nodes = {name: literal(value) for name, value in values.items()}
    used: set[str] = set()

    def replace(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name.startswith(_PREFIX):
            name = node.name[len(_PREFIX) :]
            # The caller hands its nodes over: the first mention takes the node itself,
            # each further mention a copy.
            if name in used:
                return nodes[name].copy()
            used.add(name)
            return nodes[name]
        return node

    return tree.transform(replace, copy=False)


def contains(haystack: exp.Expr, needle: exp.Expr) -> exp.Expr:
    """Byte-wise, case-sensitive substring test."""
    return exp.Anonymous(this="contains", expressions=[haystack, needle])


def regex_search(subject: exp.Expr, pattern: exp.Expr) -> exp.Expr:
    """RE2 match anywhere in ``subject`` (unanchored)."""
    return exp.RegexpLike(this=subject, expression=pattern)


def regex_full_match(subject: exp.Expr, pattern: exp.Expr) -> exp.Expr:
    """RE2 match of the whole of ``subject`` (anchored at both ends)."""
    return exp.Anonymous(this="regexp_full_match", expressions=[subject, pattern])

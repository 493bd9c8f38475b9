"""The SQL engine's dialect and the functions the compiler emits, in one place.

``sql(template, **values)`` builds an expression from a fixed SQL fragment written in this
file's callers (never from user text) whose ``:name`` placeholders are replaced by sqlglot
nodes; Python strings and numbers become literal nodes, so user text is always quoted by
sqlglot and never spliced into SQL.
"""

from __future__ import annotations

from functools import cache

import sqlglot
from sqlglot import exp

__all__ = [
    "DIALECT",
    "UDF_IP_MATCH",
    "UDF_TEMPLATE",
    "contains",
    "literal",
    "regex_full_match",
    "regex_search",
    "sql",
]

DIALECT = "duckdb"
"""sqlglot dialect the compiled queries are rendered in."""

UDF_TEMPLATE = "logql_template"
"""Engine-provided function: (template, name, labels, line, ts) -> {text, error}."""

UDF_IP_MATCH = "logql_ip_match"
"""Engine-provided function: (text, ip pattern) -> whether an IP in text matches."""

Value = exp.Expression | str | int | float | bool | None | list[str]


def literal(value: Value) -> exp.Expression:
    """A sqlglot node for a Python value (strings become quoted literals)."""
    if isinstance(value, exp.Expression):
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


@cache
def _parsed(template: str) -> exp.Expression:
    parsed = sqlglot.parse_one(template, dialect=DIALECT)
    assert isinstance(parsed, exp.Expression)
    return parsed


def sql(template: str, **values: Value) -> exp.Expression:
    """The fixed fragment ``template`` with each ``:name`` replaced by ``values[name]``."""
    tree = _parsed(template).copy()
    nodes = {name: literal(value) for name, value in values.items()}

    def replace(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Placeholder) and node.name in nodes:
            return nodes[node.name].copy()
        return node

    return tree.transform(replace)


def contains(haystack: exp.Expression, needle: exp.Expression) -> exp.Expression:
    """Byte-wise, case-sensitive substring test."""
    return exp.Anonymous(this="contains", expressions=[haystack, needle])


def regex_search(subject: exp.Expression, pattern: exp.Expression) -> exp.Expression:
    """RE2 match anywhere in ``subject`` (unanchored)."""
    return exp.RegexpLike(this=subject, expression=pattern)


def regex_full_match(subject: exp.Expression, pattern: exp.Expression) -> exp.Expression:
    """RE2 match of the whole of ``subject`` (anchored at both ends)."""
    return exp.Anonymous(this="regexp_full_match", expressions=[subject, pattern])

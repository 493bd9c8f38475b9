"""The SQL engine's dialect and the functions the compiler emits, in one place."""

from __future__ import annotations

from sqlglot import exp

__all__ = ["DIALECT", "contains", "regex_full_match", "regex_search"]

DIALECT = "duckdb"
"""sqlglot dialect the compiled queries are rendered in."""


def contains(haystack: exp.Expression, needle: exp.Expression) -> exp.Expression:
    """Byte-wise, case-sensitive substring test."""
    return exp.Anonymous(this="contains", expressions=[haystack, needle])


def regex_search(subject: exp.Expression, pattern: exp.Expression) -> exp.Expression:
    """RE2 match anywhere in ``subject`` (unanchored)."""
    return exp.RegexpLike(this=subject, expression=pattern)


def regex_full_match(subject: exp.Expression, pattern: exp.Expression) -> exp.Expression:
    """RE2 match of the whole of ``subject`` (anchored at both ends)."""
    return exp.Anonymous(this="regexp_full_match", expressions=[subject, pattern])

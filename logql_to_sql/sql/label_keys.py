"""Label names made of parsed keys, as the reference's parsers sanitise them: trimmed of
Go's white space (``strings.TrimSpace``), every character but ASCII letters, digits and
``_`` replaced by ``_``, and ``_`` before a leading digit."""

from __future__ import annotations

import re

from sqlglot import exp

from gocompat.spaces import GO_SPACES, trim_space
from logql_to_sql.sql.dialect import sql

__all__ = ["sanitize", "sanitize_sql"]


def sanitize(name: str) -> str:
    """A label name as the parsers sanitise keys (``a-b`` -> ``a_b``, ``9x`` -> ``_9x``)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", trim_space(name))
    return "_" + name if name[:1].isdigit() else name


def sanitize_sql(key: exp.Expr) -> exp.Expr:
    """``sanitize`` as SQL over a key expression."""
    trimmed = sql("trim(:k, :spaces)", k=key, spaces=exp.Literal.string(GO_SPACES))
    cleaned = sql("regexp_replace(:t, '[^A-Za-z0-9_]', '_', 'g')", t=trimmed)
    return sql("CASE WHEN regexp_matches(:c, '^[0-9]') THEN '_' || :c ELSE :c END", c=cleaned)

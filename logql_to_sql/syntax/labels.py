"""``parse_labels``: the push-path parser for label strings like ``{a="b", c="d"}``.

Loki parses push label strings with its LogQL parser, so errors carry the same
message format as query errors. Well-formed, escape-free input (the common case)
takes a regex fast path; everything else goes through the full parser.
"""

from __future__ import annotations

import re

from logql_to_sql.errors import NotASelectorError
from logql_to_sql.syntax import ast as a
from logql_to_sql.syntax.parser import parse_expr
from logql_to_sql.syntax.regex_check import check_regex
from logql_to_sql.syntax.tokens import KEYWORDS

__all__ = ["parse_labels"]

_PAIR = r'[A-Za-z_][A-Za-z0-9_]*="[^"\\\n]*"'
_FAST_SHAPE = re.compile(rf"\{{{_PAIR}(?:, ?{_PAIR})*\}}")
_FAST_PAIRS = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="([^"\\\n]*)"')
_RESERVED = frozenset(KEYWORDS)


def parse_labels(text: str) -> tuple[tuple[str, str], ...]:
    """Parse a push label string into ``(name, value)`` pairs, in input order.

    Raises :class:`~logql_to_sql.errors.ParseError` with Loki's message format, e.g.
    ``parse error at line 1, col 4: syntax error: unexpected IDENTIFIER, expecting STRING``.
    As in Loki, the matcher operator is not checked (``{a!="b"}`` yields ``a="b"``),
    but regex values must compile.
    """
    if _FAST_SHAPE.fullmatch(text):
        pairs = _FAST_PAIRS.findall(text)
        if not any(name.lower() in _RESERVED for name, _ in pairs):
            return tuple(pairs)
    expr = parse_expr(text)
    if not isinstance(expr, a.LogQuery) or expr.stages:
        raise NotASelectorError("only label matchers are supported")
    for m in expr.selector.matchers:
        if m.op in (a.MatchOp.RE, a.MatchOp.NRE):
            check_regex(m.value)
    return tuple((m.name, m.value) for m in expr.selector.matchers)

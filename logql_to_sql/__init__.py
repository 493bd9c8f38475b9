"""LogQL front end: lexer, parser, validation and printer (pure, no I/O).

>>> to_text(parse('sum(rate({app="foo"}[5m])) by (c)'))
'sum by (c)(rate({app="foo"}[5m]))'
"""

from __future__ import annotations

from . import ast
from .ast import Expr, LogQuery
from .errors import LexError, LogQLError, NotASelectorError, ParseError, UnsupportedError
from .labels import parse_labels
from .parser import parse_expr
from .printer import pretty, to_text
from .validate import validate

__all__ = [
    "Expr",
    "LexError",
    "LogQLError",
    "NotASelectorError",
    "ParseError",
    "UnsupportedError",
    "ast",
    "format_query",
    "is_log_query",
    "parse",
    "parse_expr",
    "parse_labels",
    "to_text",
    "validate",
]


def parse(text: str) -> Expr:
    """Parse and validate a LogQL query; raise a :class:`ParseError` on any problem."""
    expr = parse_expr(text)
    validate(expr)
    return expr


def format_query(query: str | Expr) -> str:
    """The pretty form ``P`` (what ``GET /format_query`` returns); parses text first."""
    expr = parse(query) if isinstance(query, str) else query
    return pretty(expr)


def is_log_query(expr: Expr) -> bool:
    """True for a log query (selector plus pipeline), False for metric queries."""
    return isinstance(expr, LogQuery)

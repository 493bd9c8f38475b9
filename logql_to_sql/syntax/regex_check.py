"""Regex syntax checks of LogQL: Go's ``regexp/syntax`` messages as parse errors."""

from __future__ import annotations

from gocompat.regex_syntax import RegexSyntaxError, capture_names
from logql_to_sql.errors import ParseError

__all__ = ["check_regex"]


def check_regex(pattern: str) -> tuple[str | None, ...]:
    """Like :func:`capture_names` but raise a position-less :class:`ParseError`."""
    try:
        return capture_names(pattern)
    except RegexSyntaxError as exc:
        raise ParseError(str(exc)) from None

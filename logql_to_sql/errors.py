"""Errors raised by :mod:`logql_to_sql`.

The tree is shallow; every error is a :class:`LogQLError`::

    LogQLError
     +-- ParseError          position-carrying syntax and validation errors
     |    +-- LexError       errors found while reading tokens
     |    +-- NotASelectorError   parse_labels() given more than a selector
     +-- UnsupportedError    a construct the library cannot handle

``str(err)`` is the full message the HTTP API returns as a 400 body, e.g.
``parse error at line 1, col 11: syntax error: unexpected $end, expecting } or ,``
or ``parse error : MSG`` when the error has no position (line and col both 0).
"""

from __future__ import annotations

__all__ = ["LexError", "LogQLError", "NotASelectorError", "ParseError", "UnsupportedError"]


class LogQLError(Exception):
    """Root of every error raised by this package."""


class ParseError(LogQLError):
    """A query that cannot be parsed or fails validation (HTTP 400)."""

    def __init__(
        self, description: str, line: int = 0, col: int = 0, start: int = 0, end: int = 0
    ) -> None:
        self.description = description
        self.line = line
        self.col = col
        self.start = start
        self.end = end
        super().__init__(self._render())

    def _render(self) -> str:
        if self.line == 0 and self.col == 0:
            return f"parse error : {self.description}"
        return f"parse error at line {self.line}, col {self.col}: {self.description}"

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.description, self.line, self.col, self.start, self.end))


class LexError(ParseError):
    """An invalid literal or character sequence found by the lexer."""


class NotASelectorError(ParseError):
    """``parse_labels`` was given a query that is more than a stream selector."""

    def _render(self) -> str:
        return self.description


class UnsupportedError(LogQLError):
    """A construct this library recognises but cannot handle."""

    def __init__(self, construct: str) -> None:
        self.construct = construct
        super().__init__(f"unsupported: {construct}")

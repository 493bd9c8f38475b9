"""Go's ``regexp`` run by RE2 (the ``google-re2`` binding): same syntax, same semantics.

Go's regexp package is RE2, so patterns behave exactly as in the reference (``$`` only at
the end of the text, no backtracking, linear time). Syntax errors carry Go's messages,
checked by :mod:`gocompat.regex_syntax` before RE2 sees the pattern::

    >>> replace_all("a(x*)b", "-ab-axxb-", "[$1]")
    '-[]-[xx]-'
    >>> must_compile("a(")
    Traceback (most recent call last):
    ...
    gocompat.re2.Re2Error: error parsing regexp: missing closing ): `a(`
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

import gocompat.template  # noqa: F401  (loaded before gocompat.regex, which needs it first)
from gocompat.regex import replace_all_compiled
from gocompat.regex_syntax import RegexSyntaxError, capture_names

__all__ = ["Re2Error", "full_match", "match_string", "must_compile", "replace_all"]


class Re2Error(ValueError):
    """The pattern is not a valid Go regexp; ``str()`` is Go's error text."""


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    try:
        capture_names(pattern)
    except RegexSyntaxError as exc:
        return Re2Error(str(exc))
    try:
        return re2.compile(pattern)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        return Re2Error(f"error parsing regexp: {detail}")


def must_compile(pattern: str) -> Any:
    """The compiled RE2 regexp of ``pattern``; raises :class:`Re2Error` (``regexp.Compile``)."""
    compiled = _compiled(pattern)
    if isinstance(compiled, Re2Error):
        raise compiled
    return compiled


def replace_all(pattern: str, text: str, repl: str) -> str:
    """``regexp.MustCompile(pattern).ReplaceAllString(text, repl)`` (``$1``, ``${name}``)."""
    return replace_all_compiled(must_compile(pattern), text, repl, literal=False)


def match_string(pattern: str, text: str) -> bool:
    """``regexp.MatchString``: an unanchored match anywhere in ``text``."""
    return must_compile(pattern).search(text) is not None


def full_match(pattern: str, text: str) -> Any:
    """The match of ``^(?:pattern)$`` on ``text`` (Prometheus relabelling), or None."""
    return must_compile(f"^(?:{pattern})$").search(text)

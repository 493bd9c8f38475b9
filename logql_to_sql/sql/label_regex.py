"""Regex matchers on labels inside a pipeline, with the reference's literal shortcut.

The reference simplifies a label-filter regex that is a literal with ``.*`` on one or both
sides into a substring test (case-insensitive under ``(?i)``), so ``lvl=~"rr.*"`` matches
``error`` (LOGQL.md 13.2). Every other regex is anchored to the whole value, ``.`` not
matching a newline.
"""

from __future__ import annotations

import re

from sqlglot import exp

from logql_to_sql.sql.dialect import contains, regex_full_match, sql

__all__ = ["label_regex_condition", "literal_alternatives", "substring_shortcut"]

# A literal: no metacharacter, or an escaped one.
_LITERAL = r"(?:[^\\.+*?()|\[\]{}^$]|\\[\\.+*?()|\[\]{}^$])*"
_SHORTCUT = re.compile(r"^(\(\?i\))?(\.\*)?(" + _LITERAL + r")(\.\*)?$")
_ALTERNATIVES = re.compile(_LITERAL + r"(?:\|" + _LITERAL + r")*")


def literal_alternatives(regex: str) -> list[str] | None:
    """The literals a regex of only literals and ``|`` matches in whole (``a|b\\.c``
    gives ``a`` and ``b.c``); None for any other regex. Such a regex needs no RE2: its
    full match is a string comparison (and RE2's flags change nothing for it)."""
    if not _ALTERNATIVES.fullmatch(regex):
        return None
    parts, current = [], ""
    for escaped, bar, plain in re.findall(r"\\(.)|(\|)|(.)", regex, flags=re.S):
        if bar:
            parts.append(current)
            current = ""
        else:
            current += escaped or plain
    return [*parts, current]


def substring_shortcut(regex: str) -> tuple[str, bool] | None:
    """``(literal, case_insensitive)`` when the reference turns ``regex`` into a substring test."""
    match = _SHORTCUT.match(regex)
    if match is None or not (match.group(2) or match.group(4)):
        return None
    literal = re.sub(r"\\(.)", r"\1", match.group(3))
    return literal, bool(match.group(1))


def label_regex_condition(value: exp.Expr, regex: str) -> exp.Expr:
    """Whether ``value`` matches the label-filter ``regex``."""
    shortcut = substring_shortcut(regex)
    if shortcut is None:
        return regex_full_match(value, exp.Literal.string(regex))
    literal, case_insensitive = shortcut
    if case_insensitive:
        return contains(sql("lower(:v)", v=value), exp.Literal.string(literal.lower()))
    return contains(value, exp.Literal.string(literal))

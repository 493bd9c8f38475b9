"""Checks that Loki performs when it builds a pipeline stage.

Each check returns an error cause (Loki's message) or None. The validator wraps a
cause as ``stage '<stage text>' : <cause>``.
"""

from __future__ import annotations

import ipaddress
import re

from gocompat.regex_syntax import RegexSyntaxError, capture_names
from gocompat.template import TemplateError, parse_template
from logql_to_sql.syntax import ast as a

__all__ = [
    "check_ip",
    "check_json_path",
    "check_line_filter",
    "check_pattern_filter",
    "check_template",
    "pattern_parser_error",
]

_PATTERN_CAPTURE = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*)>")
_JSON_PATH = re.compile(
    r'[A-Za-z_][A-Za-z0-9_]*|\[\s*(?:"(?:[^"\\]|\\.)*"|[0-9]+)\s*\]'
    r"|\.[A-Za-z_][A-Za-z0-9_]*"
)


def check_template(text: str, name: str) -> str | None:
    """Parse ``text`` as Loki does (Go's text/template with Loki's functions); return
    Go's parse error text or None."""
    try:
        parse_template(text, name=name)
    except TemplateError as exc:
        return str(exc)
    return None


def check_ip(pattern: str) -> str | None:
    """Validate an ``ip("...")`` pattern: address, CIDR or ``a-b`` range."""
    try:
        if "/" in pattern:
            ipaddress.ip_network(pattern, strict=False)
        elif "-" in pattern:
            lo, hi = (ipaddress.ip_address(p) for p in pattern.split("-", 1))
            if lo.version != hi.version or lo > hi:  # type: ignore[operator]
                raise ValueError(pattern)
        else:
            ipaddress.ip_address(pattern)
    except ValueError:
        return f'ip: invalid pattern: "{pattern}"'
    return None


def check_pattern_filter(pattern: str) -> str | None:
    """A ``|>``/``!>`` pattern: only ``<_>`` captures, never two adjacent."""
    for m in _PATTERN_CAPTURE.finditer(pattern):
        if m.group(1) != "_":
            return f"named captures are not allowed: found '{m.group(0)}'"
    return _consecutive(pattern)


def _consecutive(pattern: str) -> str | None:
    prev_end, prev = -1, ""
    for m in _PATTERN_CAPTURE.finditer(pattern):
        if m.start() == prev_end:
            return f"found consecutive capture '{prev}{m.group(0)}': invalid expression"
        prev_end, prev = m.end(), m.group(0)
    return None


def pattern_parser_error(pattern: str) -> str | None:
    """Errors of the ``| pattern`` stage (at least one named capture, no adjacent,
    no duplicates)."""
    names = [m.group(1) for m in _PATTERN_CAPTURE.finditer(pattern) if m.group(1) != "_"]
    if not names:
        return "invalid pattern parser: at least one capture is required"
    err = _consecutive(pattern)
    if err is not None:
        return err
    seen: set[str] = set()
    for n in names:
        if n in seen:
            return f"duplicate capture name ({n}): invalid expression"
        seen.add(n)
    return None


def check_line_filter(f: a.LineFilter) -> str | None:
    """Errors raised when Loki builds a line filter."""
    for x in f.operands:
        if isinstance(x, a.IpOperand):
            if f.op not in (a.LineFilterOp.CONTAINS, a.LineFilterOp.NOT_CONTAINS):
                return "ip: invalid operation"
            err = check_ip(x.pattern)
        elif f.op in (a.LineFilterOp.MATCH, a.LineFilterOp.NOT_MATCH):
            err = _regex_error(x)
        elif f.op in (a.LineFilterOp.PATTERN, a.LineFilterOp.NOT_PATTERN):
            err = check_pattern_filter(x)
        else:
            err = None
        if err is not None:
            return err
    return None


def _regex_error(pattern: str) -> str | None:
    try:
        capture_names(pattern)
    except RegexSyntaxError as exc:
        return str(exc)
    return None


def check_json_path(expr: str) -> str | None:
    """Validate a ``| json name="path"`` expression (``a.b``, ``a["k"]``, ``list[0]``)."""
    pos = 0
    first = True
    while pos < len(expr):
        m = _JSON_PATH.match(expr, pos)
        if m is None or (first and m.group(0).startswith(".")):
            return (
                f"cannot parse expression [{expr}]: syntax error: unexpected {_json_tok(expr, pos)}"
            )
        if not first and m.group(0)[0].isalpha():
            return f"cannot parse expression [{expr}]: syntax error: unexpected FIELD"
        first = False
        pos = m.end()
    if first:
        return f"cannot parse expression [{expr}]: syntax error: unexpected $end"
    return None


def _json_tok(expr: str, pos: int) -> str:
    rest = expr[pos:]
    if rest.startswith("[") and "]" not in rest:
        return "$end"
    return rest[0]

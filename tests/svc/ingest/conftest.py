"""A stand-in label parser for the protobuf path until logql_to_sql.parse_labels lands."""

from __future__ import annotations

import re

import pytest

from svc.ingest import PushLimits

NOW = 1_700_000_000_000_000_000
LIMITS = PushLimits()

Entry = tuple[int, str] | tuple[int, str, dict[str, str]]

_PAIR = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)', re.S)
_ESCAPE = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|.)", re.S)
_SHORT = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return _SHORT.get(code, code)


def _stub_parse_labels(text: str) -> tuple[tuple[str, str], ...]:
    """Selector-only parser used when logql_to_sql.parse_labels is not written yet."""
    from logql_to_sql.errors import ParseError

    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise ParseError("syntax error: unexpected input", 1, 1)
    inner, pairs, pos = inner[1:-1], [], 0
    while pos < len(inner.rstrip()):
        match = _PAIR.match(inner, pos)
        if match is None:
            raise ParseError("syntax error: unexpected input", 1, pos + 2)
        pairs.append((match.group(1), _ESCAPE.sub(_unescape, match.group(2))))
        pos = match.end()
    return tuple(pairs)


@pytest.fixture(autouse=True)
def _label_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        from logql_to_sql import parse_labels  # noqa: F401
    except ImportError:
        monkeypatch.setattr("svc.ingest.push._parse_label_text", _stub_parse_labels)

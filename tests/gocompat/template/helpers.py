"""Shared helpers for the template engine tests."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from gocompat.template import TemplateError, parse_template

# 2026-11-25T22:20:06Z, the entry time of LOGQL.md's examples.
TS = 1795645206 * 10**9
LABELS: Mapping[str, str] = {"lvl": "info", "took": "90s", "status": "200.0", "size": "2,048"}


def render(
    text: str,
    labels: Mapping[str, str] | None = None,
    *,
    name: str = "line",
    line: str = "the line",
    ts: int = TS,
) -> str:
    """Parse and render ``text`` over ``labels`` (LOGQL.md's example labels by default)."""
    template = parse_template(text, name=name)
    return template.render(LABELS if labels is None else labels, line=line, timestamp_ns=ts)


def assert_renders(text: str, expected: str, labels: Mapping[str, str] | None = None) -> None:
    """``text`` renders exactly ``expected``."""
    assert render(text, labels) == expected


def assert_fails(text: str, message: str, labels: Mapping[str, str] | None = None) -> None:
    """Parsing or rendering ``text`` fails with exactly Go's ``message``."""
    with pytest.raises(TemplateError) as info:
        render(text, labels)
    assert str(info.value) == message


def case(text: str, expected: str, *, id: str | None = None) -> object:
    """A table row: template and expected output (or error, prefixed ``ERR ``)."""
    return pytest.param(text, expected, id=id or text)


def check(text: str, expected: str, labels: Mapping[str, str] | None = None) -> None:
    """Assert a table row: ``ERR <message>`` expects an error, anything else output."""
    if expected.startswith("ERR "):
        assert_fails(text, expected[4:], labels)
    else:
        assert_renders(text, expected, labels)

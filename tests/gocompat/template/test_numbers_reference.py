"""Numeric template functions against answers recorded from the reference's libraries.

``fixtures/numbers_go.jsonl`` holds one case per line: ``[template, labels, kind, text]``
where ``kind`` is ``out`` (rendered text), ``error`` (execution error) or ``parse_error``.
The answers were produced by Go's text/template (``missingkey=zero``, labels as a
``map[string]string``, as Loki's ``line_format`` runs it) with the functions Loki takes
from sprig v3.3.0, over the libraries Loki's go.mod resolves: spf13/cast v1.10.0 and
shopspring/decimal v1.4.0.

What the sources say, and the cases show:

- ``int``, ``add``, ``sub``, ``mul``, ``div``, ``mod``, ``max``, ``min`` convert with
  cast's ``ToInt``/``ToInt64``: a string is cut to its integer part when it is a plain
  decimal (``^([-+]?\\d*)(\\.\\d*)?$``: ``"1.9882"`` -> 1, ``"-.5"`` -> 0, ``"1."`` -> 1),
  then read by ``strconv.ParseInt(s, 0, 0)`` (``0x``/``0o``/``0b`` prefixes, a leading
  ``0`` is octal, ``_`` between digits); anything else, ``""`` and overflow give 0.
  Float arguments truncate toward zero.
- ``float64``, ``floor``, ``ceil``, ``round``, ``maxf``, ``minf`` and the decimal ``*f``
  functions read strings with ``strconv.ParseFloat`` (``1e3``, ``inf``, hex floats,
  ``_`` between digits; ASCII digits only); failures and ``1e400`` give 0.
- ``addf``/``subf``/``mulf``/``divf`` go through shopspring/decimal, whose division by
  zero fails with ``decimal division by 0``.
- ``add1``, ``add1f`` and ``biggest`` exist in sprig but Loki does not register them:
  using them is a template parse error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gocompat.template import TemplateError, parse_template

FIXTURE = Path(__file__).parent / "fixtures" / "numbers_go.jsonl"


def _cases() -> list[object]:
    cases = []
    for number, line in enumerate(FIXTURE.read_text().split("\n")[:-1]):
        template, labels, kind, text = json.loads(line)
        cases.append(pytest.param(template, labels, kind, text, id=f"{number}-{template}"))
    return cases


def _ours(template: str, labels: dict[str, str]) -> tuple[str, str]:
    try:
        parsed = parse_template(template)
    except TemplateError as exc:
        return "parse_error", str(exc)
    try:
        return "out", parsed.render(labels, line="", timestamp_ns=0)
    except TemplateError as exc:
        return "error", str(exc)


@pytest.mark.parametrize(("template", "labels", "kind", "text"), _cases())
def test_matches_the_reference(template: str, labels: dict[str, str], kind: str, text: str) -> None:
    assert _ours(template, labels) == (kind, text)

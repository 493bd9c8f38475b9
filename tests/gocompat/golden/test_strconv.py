"""gocompat.strconv against Go's strconv (fixture: strconv.jsonl, from strconv_gen.go)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from gocompat import strconv
from tests.gocompat.golden.golden import bits_of, float_of, records


def _failures(cases: list[tuple[object, object, object]]) -> list[tuple[object, object, object]]:
    """The (input, Go's answer, ours) triples that differ, for one readable assert."""
    return [case for case in cases if case[1] != case[2]]


def test_parse_int() -> None:
    cases = []
    for r in records("strconv", "ParseInt"):
        expected = None if "err" in r else int(r["out"])
        cases.append(((r["in"], r["bits"]), expected, strconv.parse_int(r["in"], bits=r["bits"])))
    assert _failures(cases) == []


def _parse_float(text: str) -> str:
    try:
        value = strconv.parse_float_strict(text)
    except strconv.NumError as exc:
        return str(exc)
    return "nan" if math.isnan(value) else bits_of(value)


def test_parse_float() -> None:
    cases = []
    for r in records("strconv", "ParseFloat"):
        expected = r.get("err") or ("nan" if math.isnan(float_of(r["out"])) else r["out"])
        cases.append((r["in"], expected, _parse_float(r["in"])))
    assert _failures(cases) == []


@pytest.mark.parametrize("verb", list("eEfgGbxX"))
def test_format_float(verb: str) -> None:
    cases = []
    for r in records("strconv", "FormatFloat"):
        value = float_of(r["in"])
        for key, expected in r["out"].items():
            if key[0] == verb:
                prec = int(key[1:])
                cases.append(((value, prec), expected, strconv.format_float(value, verb, prec)))
    assert _failures(cases) == []


@pytest.mark.parametrize(
    ("fn", "ours", "ascii_only"),
    [
        ("Quote", strconv.quote, False),
        ("QuoteToASCII", strconv.quote, True),
        ("QuoteRune", strconv.quote_rune, False),
        ("QuoteRuneToASCII", strconv.quote_rune, True),
    ],
)
def test_quote(fn: str, ours: Callable[..., str], ascii_only: bool) -> None:
    cases = [
        (r["in"], r["out"], ours(r["in"], ascii_only=ascii_only)) for r in records("strconv", fn)
    ]
    assert _failures(cases) == []


def _unquote(text: str) -> str | None:
    try:
        return strconv.unquote(text)
    except strconv.UnquoteError:
        return None


def test_unquote() -> None:
    cases = [(r["in"], r.get("out"), _unquote(r["in"])) for r in records("strconv", "Unquote")]
    assert _failures(cases) == []

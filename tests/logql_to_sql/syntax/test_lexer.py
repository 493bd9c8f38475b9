from __future__ import annotations

import pytest

from logql_to_sql.syntax.lexer import tokenize
from logql_to_sql.syntax.tokens import TokenType as T

CASES = [
    ('{a="b"}', [(T.L_BRACE, "{"), (T.IDENTIFIER, "a"), (T.EQ, "="), (T.STRING, "b"), (T.R_BRACE, "}")]),
    ('"a\\"b"', [(T.STRING, 'a"b')]),
    ('"\\a\\b\\f\\n\\r\\t\\v\\\\"', [(T.STRING, "\a\b\f\n\r\t\v\\")]),
    ('"\\101\\x41\\u00e9\\U0001F600"', [(T.STRING, "AAé😀")]),
    ("`\\w+`", [(T.STRING, "\\w+")]),
    ("`a\nb`", [(T.STRING, "a\nb")]),
    ("`a\r\nb`", [(T.STRING, "a\nb")]),
    ('"日本語"', [(T.STRING, "日本語")]),
    ("12", [(T.NUMBER, "12")]),
    ("1.5", [(T.NUMBER, "1.5")]),
    (".5", [(T.NUMBER, ".5")]),
    ("1e3", [(T.NUMBER, "1e3")]),
    ("1_000", [(T.NUMBER, "1_000")]),
    ("0x1p3", [(T.NUMBER, "0x1p3")]),
    ("5m", [(T.DURATION, 300_000_000_000)]),
    ("1h30m", [(T.DURATION, 5_400_000_000_000)]),
    ("2d", [(T.DURATION, 172_800_000_000_000)]),
    ("1w", [(T.DURATION, 604_800_000_000_000)]),
    ("1y", [(T.DURATION, 365 * 86_400_000_000_000)]),
    ("1.5h", [(T.DURATION, 5_400_000_000_000)]),
    ("300ms", [(T.DURATION, 300_000_000)]),
    ("10us", [(T.DURATION, 10_000)]),
    ("10µs", [(T.DURATION, 10_000)]),
    ("5ns", [(T.DURATION, 5)]),
    ("-5m", [(T.DURATION, -300_000_000_000)]),
    ("5M", [(T.BYTES, 5_000_000)]),
    ("10B", [(T.BYTES, 10)]),
    ("1KB", [(T.BYTES, 1000)]),
    ("1kB", [(T.BYTES, 1000)]),
    ("1K", [(T.BYTES, 1000)]),
    ("1Ki", [(T.BYTES, 1024)]),
    ("1KiB", [(T.BYTES, 1024)]),
    ("1.5KiB", [(T.BYTES, 1536)]),
    ("1MiB", [(T.BYTES, 1 << 20)]),
    ("2GB", [(T.BYTES, 2_000_000_000)]),
    ("1TiB", [(T.BYTES, 1 << 40)]),
    ("1PB", [(T.BYTES, 10**15)]),
    ("10kb", [(T.BYTES, 10_000), (T.IDENTIFIER, "b")]),
    ("1mb", [(T.DURATION, 60_000_000_000), (T.IDENTIFIER, "b")]),
    ("[5m]", [(T.RANGE, 300_000_000_000)]),
    ("[1h30m]", [(T.RANGE, 5_400_000_000_000)]),
    ("[0]", [(T.RANGE, 0)]),
    ("[1d]", [(T.RANGE, 86_400_000_000_000)]),
    ("a # c\nb", [(T.IDENTIFIER, "a"), (T.IDENTIFIER, "b")]),
    ("2 //2", [(T.NUMBER, "2")]),
    ("a /* x */ b", [(T.IDENTIFIER, "a"), (T.IDENTIFIER, "b")]),
    ("|= != |~ !~ |> !>", [(T.PIPE_EXACT, "|="), (T.NEQ, "!="), (T.PIPE_MATCH, "|~"), (T.NRE, "!~"), (T.PIPE_PATTERN, "|>"), (T.NPA, "!>")]),
    ("== = > >= < <=", [(T.CMP_EQ, "=="), (T.EQ, "="), (T.GT, ">"), (T.GTE, ">="), (T.LT, "<"), (T.LTE, "<=")]),
    ("+ - * / % ^", [(T.ADD, "+"), (T.SUB, "-"), (T.MUL, "*"), (T.DIV, "/"), (T.MOD, "%"), (T.POW, "^")]),
    ("BY Without bool", [(T.BY, "BY"), (T.WITHOUT, "Without"), (T.BOOL, "bool")]),
    ("rate(", [(T.RATE, "rate"), (T.L_PAREN, "(")]),
    ("rate", [(T.IDENTIFIER, "rate")]),
    ("SUM (", [(T.SUM, "SUM"), (T.L_PAREN, "(")]),
    ("sum by (", [(T.SUM, "sum"), (T.BY, "by"), (T.L_PAREN, "(")]),
    ("sum without(", [(T.SUM, "sum"), (T.WITHOUT, "without"), (T.L_PAREN, "(")]),
    ("ip(", [(T.IP, "ip"), (T.L_PAREN, "(")]),
    ("ip", [(T.IDENTIFIER, "ip")]),
    ("bytes(", [(T.BYTES_CONV, "bytes"), (T.L_PAREN, "(")]),
    ("--strict --keep-empty", [(T.FUNCTION_FLAG, "--strict"), (T.FUNCTION_FLAG, "--keep-empty")]),
    ("1--1", [(T.NUMBER, "1"), (T.SUB, "-"), (T.SUB, "-"), (T.NUMBER, "1")]),
    ("héllo _x9", [(T.IDENTIFIER, "héllo"), (T.IDENTIFIER, "_x9")]),
    ("a.b", [(T.IDENTIFIER, "a"), (T.DOT, "."), (T.IDENTIFIER, "b")]),
    ("'a'", [(T.IDENTIFIER, "'a'")]),
    ("@", [(T.IDENTIFIER, "@")]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), [pytest.param(*c, id=c[0]) for c in CASES])
def test_tokens(text: str, expected: list[tuple[T, object]]) -> None:
    tokens, err = tokenize(text)
    assert err is None
    assert [(t.type, t.value) for t in tokens[:-1]] == expected
    assert tokens[-1].type is T.EOF


ERRORS = [
    ('{foo="bar}', 1, 6, "literal not terminated"),
    ('"a\nb"', 1, 1, "literal not terminated"),
    ("`abc", 1, 1, "literal not terminated"),
    ('"\\d"', 1, 1, "invalid char escape"),
    ('"\\."', 1, 1, "invalid char escape"),
    ('"\\\'"', 1, 1, "invalid char escape"),
    ('"\\xZZ"', 1, 1, "invalid char escape"),
    ('"\\uD800"', 1, 1, "invalid char escape"),
    ("'ab'", 1, 1, "invalid char literal"),
    ("[5minutes]", 0, 1, 'unknown unit "minutes" in duration "5minutes"'),
    ("[ 5m ]", 0, 1, 'not a valid duration string: " 5m "'),
    ("[1.5h]", 0, 1, 'unknown unit "." in duration "1.5h"'),
    ("[500us]", 0, 1, 'unknown unit "us" in duration "500us"'),
    ("x [5m", 0, 3, "missing closing ']' in duration"),
    ("[]", 0, 1, "empty duration string"),
    ("[5m5m]", 0, 1, 'not a valid duration string: "5m5m"'),
    ('a\n  b\n   "x', 3, 4, "literal not terminated"),
    ("/* x", 1, 1, "comment not terminated"),
]


@pytest.mark.parametrize(("text", "line", "col", "msg"), ERRORS, ids=[e[0] for e in ERRORS])
def test_lexer_errors(text: str, line: int, col: int, msg: str) -> None:
    _, err = tokenize(text)
    assert err is not None
    assert (err.line, err.col, err.description) == (line, col, msg)


def test_positions_multiline() -> None:
    tokens, _ = tokenize('{a="b"}\n  |= "x"')
    pipe = tokens[5]
    assert (pipe.type, pipe.line, pipe.col) == (T.PIPE_EXACT, 0, 3)
    string = tokens[6]
    assert (string.line, string.col, string.start, string.end) == (2, 6, 13, 16)
    eof = tokens[-1]
    assert (eof.line, eof.col) == (2, 9)


def test_empty_input_eof_has_no_position() -> None:
    tokens, _ = tokenize("")
    assert (tokens[0].line, tokens[0].col) == (0, 0)

"""Stream selector regexes compiled to string comparisons select what RE2 selects."""

from __future__ import annotations

import duckdb
import pytest

from logql_to_sql import DIALECT, parse
from logql_to_sql.sql.compiler import compile_stream_matchers
from logql_to_sql.sql.label_regex import literal_alternatives
from logql_to_sql.syntax import ast

VALUES = ["", "a", "b", "ab", "a|b", "a.b", "axb", "a\\", "prod", "stage", "x\ny", "\n", "é"]
REGEXES = [
    ".+",
    ".*",
    "a",
    "a|b",
    "prod|stage|",
    "a\\|b",
    "a\\.b",
    "a\\\\",
    "a.b",
    "é|x",
    "",
    "|",
    "a+",
    "(a|b)",
    "[ab]",
    "(?i)A",
    "x.y",
]


@pytest.mark.parametrize(
    ("regex", "expected"),
    [
        ("a|b\\.c", ["a", "b.c"]),
        ("a\\\\|b", ["a\\", "b"]),
        ("a\\|b", ["a|b"]),
        ("", [""]),
        ("a|", ["a", ""]),
        (".+", None),
        ("a.b", None),
        ("(a)", None),
        ("\\d", None),
    ],
)
def test_literal_alternatives(regex: str, expected: list[str] | None) -> None:
    assert literal_alternatives(regex) == expected


@pytest.mark.parametrize("op", ["=~", "!~"])
@pytest.mark.parametrize("regex", REGEXES)
def test_same_streams_as_re2(regex: str, op: str) -> None:
    db = duckdb.connect()
    db.execute("CREATE TABLE streams (stream_id BIGINT, labels MAP(VARCHAR, VARCHAR))")
    rows = [(i, {"k": v, "j": "x"}) for i, v in enumerate(VALUES)] + [(len(VALUES), {"j": "x"})]
    db.executemany("INSERT INTO streams VALUES (?, ?)", rows)
    quoted = regex.replace("\\", "\\\\").replace('"', '\\"')
    # j="x" (every stream) makes any matcher on k a valid selector.
    selector = parse(f'{{j="x", k{op}"{quoted}"}}')
    assert isinstance(selector, ast.LogQuery)
    matchers = selector.selector.matchers
    compiled = compile_stream_matchers(matchers).sql(dialect=DIALECT)
    chosen = {r[0] for r in db.execute(compiled).fetchall()}
    test = "regexp_full_match(coalesce(labels['k'], ''), ?)"
    if op == "!~":
        test = "NOT " + test
    found = db.execute(f"SELECT stream_id FROM streams WHERE {test}", ["(?s)" + regex])
    re2 = {r[0] for r in found.fetchall()}
    assert chosen == re2

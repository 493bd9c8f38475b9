"""``| pattern`` in SQL (substring searches, literal-only regexes) against a direct
statement of the rule, for every capture and for each one wanted alone (the literals
between wanted captures are then skipped by one regex).

The rule, from the reference's pattern matcher (``pkg/logql/log/pattern``): an empty line
captures nothing; a leading literal must start the line, else nothing is captured; then
each capture takes the text up to the **first** occurrence of the literal that follows
it, and the walk goes on after that literal; when a literal is missing, the capture
before it takes the rest of the line and later captures stay unset; a capture at the end
takes the rest; text after a final literal is ignored; ``<_>`` captures nothing.
"""

from __future__ import annotations

import re

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from logql_to_sql.sql.parser_stages import pattern_steps

PATTERNS = [
    '<ip> - - [<_>] "<method> <path> <_>" <status> <size> <_>',
    "<method> <path> <status>",
    "GET <path> <_>",
    "<foo> bar<fuzz>",
    "<method> /",
    "<_> <path> <_> <_>=<ms>ms",
    "[<ts>] <level>: <msg>",
    "<a>,<b>,<c>",
    "x<a>xx<b>x",
    "é<a>ü<b>",
    "<_>=<v>",
    "<a>.*<b>(<c>)",
    "$<a>\\<b>\n<c>",
    "ab<a>ab<b>aab<c>",
    "<_> <_> <_> <v>",
]


def reference(pattern: str, line: str, wanted: str | None = None) -> dict[str, str]:
    parts = re.split(r"<([A-Za-z_][A-Za-z0-9_]*)>", pattern)
    leading, names, closing = parts[0], parts[1::2], parts[2::2]
    if not line or not line.startswith(leading):
        return {}
    rest, found = line[len(leading) :], {}
    for name, literal in zip(names, closing, strict=True):
        if not literal:
            found[name] = rest
            break
        at = rest.find(literal)
        if at < 0:
            found[name] = rest
            break
        found[name] = rest[:at]
        rest = rest[at + len(literal) :]
    return {k: v for k, v in found.items() if k != "_" and wanted in (None, k)}


def ours(
    db: duckdb.DuckDBPyConnection, pattern: str, lines: list[str], wanted: str | None = None
) -> list[dict[str, str]]:
    stepped = pattern_steps(pattern, None if wanted is None else [wanted])
    select = exp.select("line").from_("lines")
    carried: list[str] = []
    for step in stepped.steps:
        select = exp.select("line", *carried, *(v.as_(k) for k, v in step.items())).from_(
            select.subquery("s")
        )
        carried += list(step)
    names = list(stepped.values)
    final = exp.select("line", *(v.as_(f"c{i}") for i, v in enumerate(stepped.values.values())))
    rows = db.execute(final.from_(select.subquery("s")).sql(dialect="duckdb")).fetchall()
    found = {
        row[0]: {n: v for n, v in zip(names, row[1:], strict=True) if v is not None} for row in rows
    }
    return [found[line] for line in lines]


@pytest.fixture(scope="module")
def db() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


def _check(db: duckdb.DuckDBPyConnection, pattern: str, lines: list[str]) -> None:
    lines = list(dict.fromkeys(lines))
    db.execute("CREATE OR REPLACE TABLE lines AS SELECT unnest(?::VARCHAR[]) AS line", [lines])
    for wanted in [None, *(n for n in re.findall(r"<(\w+)>", pattern) if n != "_")]:
        expected = [reference(pattern, line, wanted) for line in lines]
        assert ours(db, pattern, lines, wanted) == expected, wanted


@pytest.mark.parametrize("pattern", PATTERNS)
def test_fixed_lines(db: duckdb.DuckDBPyConnection, pattern: str) -> None:
    lines = [
        "",
        " ",
        '10.1.2.3 - - [25/Nov/2026:10:00:00 +0000] "GET /api HTTP/1.1" 200 512 "-" "agent" 7',
        "10.1.2.3 - - [25/Nov",
        "GET /x 200",
        "GET /x",
        "POST",
        " bar",
        "foo bar",
        "x bar y bar",
        "GET /api 200 took=15ms",
        "[2026] info: started",
        "[2026] info",
        "a,b,c,d",
        ",,",
        "xxxxxx",
        "x1xx2x",
        "éaüb",
        "é",
        "a=b=c",
        "=",
        "1.*2(3)",
        "1.*2(3",
        "$1\\2\n3",
        "$1\\2",
        "abxabyaabz",
        "ab1ab2ab",
        "a b c d",
        "a b\nc d e",
    ]
    _check(db, pattern, lines)


fragments = st.sampled_from(
    ["x", "xx", " ", "-", ",", "=", "é", "ü", "bar", "[", "]", '"', "a", "ab", "\n", ".*", "(", ")"]
)


@settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.sampled_from(PATTERNS), st.lists(st.lists(fragments, max_size=12).map("".join), max_size=20)
)
def test_generated_lines(db: duckdb.DuckDBPyConnection, pattern: str, lines: list[str]) -> None:
    _check(db, pattern, lines)

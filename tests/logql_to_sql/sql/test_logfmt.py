"""``| logfmt`` in SQL against answers recorded from the reference's decoder.

``fixtures/logfmt_go.jsonl``: per line, the labels ``| logfmt`` sets (sanitised keys,
first pair of a key wins, empty values dropped unless ``--keep-empty``) and, with
``--strict``, the error. Recorded by running the reference's decoder
(``pkg/logql/log/logfmt/decode.go`` and ``jsonstring.go``) the way its ``LogfmtParser``
drives it. What it shows, beyond LOGQL.md 5.3:

- Broken lines: an unterminated quoted value ends the line (``x="open status=500`` has
  no ``status``); a ``"`` inside a bare value or a key makes that pair an error skipped up
  to the next space; after a closing quote the next pair may start at once (``a="x"b=2``);
  ``key=value`` inside a quoted value is part of that value.
- Quoted values unescape ``\\" \\\\ \\/ \\' \\b \\f \\n \\r \\t \\uXXXX`` (a lone surrogate
  gives U+FFFD); any other escape (``\\q``) makes the pair an error. U+FFFD in a value
  becomes a space; a key holding U+FFFD is an invalid key.
- ``--strict`` positions count bytes, 1-based: ``unexpected '='``/``'"'`` at the byte,
  ``unterminated quoted value`` at the line's length + 1, ``invalid quoted value`` after
  the closing quote, ``invalid key`` at the byte ending the key.

The lookups of a few keys (metric queries grouped by parsed labels, hinted log queries)
take a shortcut on most lines and must give the same answers.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from logql_to_sql.sql.logfmt import logfmt_lookup, logfmt_pairs
from logql_to_sql.syntax import ast

ROWS = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "logfmt_go.jsonl").read_text().split("\n")
    if line
]
CONFIGS = {
    "plain": ast.LogfmtParser(),
    "keep_empty": ast.LogfmtParser(keep_empty=True),
    "strict": ast.LogfmtParser(strict=True),
    "strict_keep_empty": ast.LogfmtParser(strict=True, keep_empty=True),
}
KEYS = ["a", "b", "dup", "key", "a_b", "_9x", "x", "k", "_", "status", "v", "msg", "lvl", "back"]


@pytest.fixture(scope="module")
def db() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    lines = [row["line"] for row in ROWS]
    connection.execute("CREATE TABLE lines AS SELECT unnest(?::VARCHAR[]) AS line", [lines])
    yield connection
    connection.close()


def _first_wins(pairs: list[dict[str, str]]) -> list[list[str]]:
    seen: dict[str, str] = {}
    for pair in pairs:
        seen.setdefault(pair["key"], pair["value"])
    return [[key, value] for key, value in seen.items()]


@pytest.mark.parametrize("config", list(CONFIGS))
def test_full_parse(db: duckdb.DuckDBPyConnection, config: str) -> None:
    pairs, _, details = logfmt_pairs(CONFIGS[config])
    query = (
        f"SELECT line, {pairs.sql(dialect='duckdb')}, {details.sql(dialect='duckdb')} FROM lines"
    )
    found = {line: (p, d) for line, p, d in db.execute(query).fetchall()}
    wrong = []
    for row in ROWS:
        pairs_found, error = found[row["line"]]
        expected = row[config]
        if _first_wins(pairs_found) != expected["labels"] or error != expected.get("error"):
            wrong.append((row["line"], pairs_found, error, expected))
    assert wrong == []


def _lookup(
    db: duckdb.DuckDBPyConnection, keys: list[str], keep_empty: bool, table: str = "lines"
) -> dict[str, tuple[str | None, ...]]:
    steps, values = logfmt_lookup(keys, keep_empty=keep_empty)
    query, columns = f"SELECT line FROM {table}", []
    for step in steps:
        added = [f"{e.sql(dialect='duckdb')} AS {name}" for name, e in step.items()]
        query = f"SELECT line, {', '.join(columns + added)} FROM ({query})"
        columns += list(step)
    selected = ", ".join(values[key].sql(dialect="duckdb") for key in keys)
    return {
        row[0]: row[1:] for row in db.execute(f"SELECT line, {selected} FROM ({query})").fetchall()
    }


@pytest.mark.parametrize("keep_empty", [False, True])
@pytest.mark.parametrize("together", [False, True], ids=["one-key", "all-keys"])
def test_key_lookups(db: duckdb.DuckDBPyConnection, keep_empty: bool, together: bool) -> None:
    config = "keep_empty" if keep_empty else "plain"
    groups = [KEYS] if together else [[key] for key in KEYS]
    wrong = []
    for keys in groups:
        found = _lookup(db, keys, keep_empty)
        for row in ROWS:
            expected = dict(row[config]["labels"])
            for key, value in zip(keys, found[row["line"]], strict=True):
                if expected.get(key) != value:
                    wrong.append((row["line"], key, value, expected.get(key)))
    assert wrong == []


# Pieces around the quick look's edges: the key first in the line, after a tab, a control
# byte or a non-blank character (``xstatus=``, ``éstatus=``, a no-break space), inside or
# after a quoted value, with an empty value or one holding ``=`` or ``"``, followed at once
# by another ``status=``.
_PIECES = [
    "status=500",
    "status=5status=6",
    "xstatus=1",
    "éstatus=2",
    "\u00a0status=4",
    "status=",
    'status="q w"',
    "status=a=b",
    'status=a"b',
    "status=5é",
    'msg="a status=9"',
    'msg="x',
    '"',
    "=",
    "a=1",
    "status",
    "é",
]
_GAPS = ["", " ", "  ", "\t", "\n", "\x01"]


def test_quick_lookups_match_the_full_parse_on_generated_lines() -> None:
    """The quick look (keys without ``_``, empty values dropped) on lines built from
    ``_PIECES``: the same answer as tokenizing the whole line."""
    rng = random.Random(13)
    lines = sorted(
        {
            rng.choice(_GAPS) + "".join(p + rng.choice(_GAPS) for p in rng.choices(_PIECES, k=n))
            for n in [rng.randint(1, 5) for _ in range(600)]
        }
    )
    connection = duckdb.connect()
    connection.execute("CREATE TABLE generated AS SELECT unnest(?::VARCHAR[]) AS line", [lines])
    pairs = logfmt_pairs(ast.LogfmtParser())[0].sql(dialect="duckdb")
    parsed = dict(connection.execute(f"SELECT line, {pairs} FROM generated").fetchall())
    keys = ["status", "a", "msg"]
    found = _lookup(connection, keys, False, table="generated")
    connection.close()
    wrong = []
    for line in lines:
        expected = dict(_first_wins(parsed[line]))
        for key, value in zip(keys, found[line], strict=True):
            if expected.get(key) != value:
                wrong.append((line, key, value, expected.get(key)))
    assert wrong == []

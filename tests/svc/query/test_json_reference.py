"""``| json``'s fields and error details against the reference's JSON library.

``fixtures/json_go.jsonl``: per line, the fields and the error that ``ObjectEach`` of the
reference's vendored ``grafana/jsonparser`` (5f438463) gives when driven as Loki's
``JSONParser`` drives it (nested objects walked, keys named and values read as Loki's
``buildSanitizedPrefixFromBuffer``/``readValue`` do). The rules are restated in
``svc/query/json_object.py``; notable ones:

- A truncated object whose last member is complete (``{"a":1,"b":2``) is reported as
  ``Value is array, but can't find closing ']' symbol``: the library looks for the next
  token after a value, finds the end of the data and returns its array error there. An
  unclosed nested object, an empty line and any line not starting with ``{`` get
  ``Value looks like object, but can't find closing '}' symbol``; an unterminated
  string ``Value is string, ...``; a bad literal (``tru``, ``NaN``, ``inf``)
  ``Unknown value type``; a missing colon ``Malformed JSON error``.
- Text after the closing brace is ignored (``{"a":1} x`` has no error), as is a comma
  before it (``{"a":1,}``); numbers are tokens starting with a digit or ``-`` as written
  (``-inf``, ``12abc``).
- A lone surrogate escape makes a string value ``""``; in a key it is an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from logql_to_sql.sql.parser_stages import json_error_details
from svc.query.json_fields import json_fields_and_error
from svc.query.udfs import register_udfs

ROWS = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "json_go.jsonl").read_text().split("\n")
    if line
]


@pytest.fixture(scope="module")
def db() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    register_udfs(connection)
    connection.execute(
        "CREATE TABLE lines AS SELECT unnest(?::VARCHAR[]) AS line", [[r["line"] for r in ROWS]]
    )
    yield connection
    connection.close()


def test_fields_and_error() -> None:
    wrong = []
    for row in ROWS:
        fields, error = json_fields_and_error(row["line"])
        if [list(f) for f in fields] != row["fields"] or error != row.get("error"):
            wrong.append((row["line"], fields, error, row))
    assert wrong == []


def test_sql_error_details(db: duckdb.DuckDBPyConnection) -> None:
    """The compiled check: DuckDB's reader for most lines, the engine's function for the
    others; the same answers."""
    details = json_error_details().sql(dialect="duckdb")
    found = dict(db.execute(f"SELECT line, {details} FROM lines").fetchall())
    assert [(r["line"], found[r["line"]]) for r in ROWS if found[r["line"]] != r.get("error")] == []

"""Parsed keys become label names as the reference sanitises them (``sanitizeLabelKey``):
trimmed of Go's white space (``strings.TrimSpace``, not Python's ``str.strip``, which also
removes U+001C to U+001F), each other character but ``[A-Za-z0-9_]`` replaced by ``_``,
``_`` before a leading digit. The SQL form gives the same names."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from gocompat.spaces import GO_SPACES
from logql_to_sql.sql.dialect import DIALECT
from logql_to_sql.sql.label_keys import sanitize, sanitize_sql

CASES = {
    " a-b ": "a_b",
    "\u2028key\x85": "key",
    "\u3000\xa09x": "_9x",
    "\t\u202fstatus\u205f": "status",
    "\x1ckey\x1f": "_key_",  # Go keeps U+001C..U+001F: not white space there
    "é.b": "__b",
    "": "",
    "\u2029 \u1680": "",
}


@pytest.fixture(scope="module")
def db() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    yield connection
    connection.close()


def _in_sql(db: duckdb.DuckDBPyConnection, key: str) -> str:
    expression = sanitize_sql(exp.Literal.string(key))
    row = db.execute(f"SELECT {expression.sql(dialect=DIALECT)}").fetchone()
    assert row is not None
    return str(row[0])


@pytest.mark.parametrize(("key", "name"), CASES.items())
def test_keys_become_the_reference_names(
    db: duckdb.DuckDBPyConnection, key: str, name: str
) -> None:
    assert sanitize(key) == name
    assert _in_sql(db, key) == name


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(alphabet=GO_SPACES[:12] + "\x1cab9_-é😀", max_size=8))
def test_sql_names_equal_python_names(db: duckdb.DuckDBPyConnection, key: str) -> None:
    assert _in_sql(db, key) == sanitize(key)

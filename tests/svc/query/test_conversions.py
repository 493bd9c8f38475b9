"""Label value conversions (unwrap, number/duration/bytes filters) against the reference.

``fixtures/conversions_go.jsonl`` was recorded from the Go functions Loki calls on a
label value: ``strconv.ParseFloat(v, 64)`` (``unwrap x``, number filters),
``time.ParseDuration(v)`` and its ``Seconds()`` (``unwrap duration(x)``, duration
filters), go-humanize v1.0.1 ``ParseBytes(v)`` then ``float64(uint64)`` (``unwrap
bytes(x)``, bytes filters). ``*_err`` is the error text, which becomes
``__error_details__``. What the sources and the records show:

- ParseDuration: a bare number other than ``0``/``+0``/``-0`` is an error (``12`` ->
  missing unit); the unit is the whole run of characters up to the next digit or dot,
  so ``5 minutes`` -> unknown unit ``" minutes"`` and ``1h30`` -> missing unit; ``1d``
  -> unknown unit ``"d"``; non-ASCII bytes are quoted as ``\\x..``; a fraction adds
  ``trunc(fraction * unit / 10^digits)`` nanoseconds computed in float64; beyond int64
  -> invalid duration. ``Seconds()`` adds whole seconds and the remaining nanoseconds.
- ParseBytes: the leading run of digits, dots and commas (commas dropped) is the number,
  read by ParseFloat (``""`` -> ``parsing "": invalid syntax``); the rest, trimmed and
  lower-cased, must be one of ``b k kb ki kib m ... e eb ei eib`` or empty (``bytes``
  and ``zb`` are not); the product is truncated to a whole number (``1.5B`` -> 1,
  ``2.3KB`` -> 2299, ``9.99999999KB`` -> 9999); ``>= 2^64`` -> ``too large``.
- ParseFloat: no spaces, ``1_000`` is 1000, hex floats read, ``+nan`` is an error,
  ``1e400`` is out of range (an error).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from duckdb.func import FunctionNullHandling, PythonUDFType
from sqlglot import exp

from gocompat.durations import parse_go_duration, parse_humanize_bytes
from gocompat.strconv import parse_float_strict
from logql_to_sql import UDF_PARSE_VALUE
from logql_to_sql.sql.conversions import Conversion, bytes_of, float_of, nanoseconds_of, seconds_of
from svc.query.go_values import VALUE_TYPE
from svc.query.udfs import register_udfs

ROWS = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "conversions_go.jsonl")
    .read_text()
    .splitlines()
]
TEXTS = [row["text"] for row in ROWS]

KINDS: dict[str, tuple[Callable[[exp.Expr], Conversion], str, str]] = {
    "float": (float_of, "float", "float_err"),
    "seconds": (seconds_of, "duration", "duration_err"),
    "nanoseconds": (nanoseconds_of, "duration_ns", "duration_err"),
    "bytes": (bytes_of, "bytes", "bytes_err"),
}


def _go_value(text: str | None) -> float | None:
    if text is None:
        return None
    return {"+Inf": math.inf, "-Inf": -math.inf}.get(text, float(text))


def _same(ours: float | None, go: float | None) -> bool:
    if ours is None or go is None:
        return ours is go
    return (math.isnan(ours) and math.isnan(go)) or float(ours) == go


@pytest.fixture(scope="module")
def db() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    register_udfs(connection)
    connection.execute("CREATE TABLE texts AS SELECT unnest(?::VARCHAR[]) AS t", [TEXTS])
    yield connection
    connection.close()


def _evaluate(
    db: duckdb.DuckDBPyConnection, conversion: Conversion
) -> dict[str, tuple[object, object]]:
    value, error = conversion.value.sql(dialect="duckdb"), conversion.error.sql(dialect="duckdb")
    rows = db.execute(f"SELECT t, {value}, {error} FROM texts").fetchall()
    return {text: (v, e) for text, v, e in rows}


@pytest.mark.parametrize("kind", list(KINDS))
def test_sql_matches_the_reference(db: duckdb.DuckDBPyConnection, kind: str) -> None:
    build, value_key, error_key = KINDS[kind]
    found = _evaluate(db, build(exp.column("t")))
    wrong = []
    for row in ROWS:
        value, error = found[row["text"]]
        expected = _go_value(row.get(value_key))
        ok = _same(None if value is None else float(value), expected)  # type: ignore[arg-type]
        if expected is None:
            ok = ok and error == row[error_key]
        if not ok:
            wrong.append((row["text"], value, error, row.get(value_key), row.get(error_key)))
    assert wrong == []


def test_python_readers_match_the_reference() -> None:
    for row in ROWS:
        text = row["text"]
        for read, value_key, error_key in (
            (parse_go_duration, "duration_ns", "duration_err"),
            (parse_humanize_bytes, "bytes", "bytes_err"),
        ):
            try:
                assert str(read(text)) == row[value_key], text
            except ValueError as exc:
                assert str(exc) == row[error_key], text
        try:
            assert _same(parse_float_strict(text), _go_value(row["float"])), text
        except ValueError as exc:
            assert str(exc) == row["float_err"], text


USUAL = {
    "float": ["1", "-5", "0.25", "1e3", "1.5E-3", ".5", "5.", "200", "+7"],
    "seconds": ["250ms", "1.5s", "1h30m", "1m30.5s", "2h0m0s", "-3s", "10µs", "0", "1.s", ".5m"],
    "bytes": ["1", "19.27MB", "1KiB", "2.5 GiB", "10 mb", "3b", "0.5", "7kB"],
}


@pytest.mark.parametrize("kind", list(USUAL))
def test_usual_values_need_no_call_into_python(kind: str) -> None:
    """The values real logs carry are converted by the SQL alone: the engine's function,
    here replaced by one that marks its answers, is never asked."""
    db = duckdb.connect()

    def marked(kinds: pa.ChunkedArray, texts: pa.ChunkedArray, query: pa.ChunkedArray) -> pa.Array:
        row = {"value": -12345.0, "nanos": -12345, "error": "called"}
        return pa.array(
            [row] * len(texts),
            pa.struct([("value", pa.float64()), ("nanos", pa.int64()), ("error", pa.string())]),
        )

    db.create_function(
        UDF_PARSE_VALUE,
        marked,
        ["VARCHAR", "VARCHAR", "VARCHAR"],
        VALUE_TYPE,
        type=PythonUDFType.ARROW,
        null_handling=FunctionNullHandling.SPECIAL,
    )
    build = KINDS[kind][0]
    value = build(exp.column("t")).value.sql(dialect="duckdb")
    rows = db.execute(
        f"SELECT t, {value} FROM (SELECT unnest(?::VARCHAR[]) AS t)", [USUAL[kind]]
    ).fetchall()
    assert [text for text, v in rows if v is None or v == -12345] == []

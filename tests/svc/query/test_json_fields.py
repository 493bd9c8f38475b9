"""``| json``'s field extraction (LOGQL.md 5.3), line by line and as the engine's UDF."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from svc.query.json_fields import FIELDS_TYPE, json_fields, json_fields_batch
from svc.query.udfs import register_udfs

CASES = [
    pytest.param(
        '{"lvl":"w","obj":{"x":1,"y":{"z":2}},"ok":true,"nil":null,"arr":[1],"f":1.5}',
        [("lvl", "w"), ("obj_x", "1"), ("obj_y_z", "2"), ("ok", "true"), ("f", "1.5")],
        id="spec-worked-example",
    ),
    pytest.param(
        '{"a":1.50,"b":1e3,"c":-0,"d":12345678901234567890,"e":2.50E+3}',
        [("a", "1.50"), ("b", "1e3"), ("c", "-0"), ("d", "12345678901234567890"), ("e", "2.50E+3")],
        id="number-text-kept",
    ),
    pytest.param('{"t":true,"f":false}', [("t", "true"), ("f", "false")], id="booleans"),
    pytest.param('{"e":""}', [("e", "")], id="empty-string-kept"),
    pytest.param('{"n":null,"a":[],"o":{},"ao":[{"x":1}]}', [], id="null-arrays-empty-skipped"),
    pytest.param('{"a.b":{"c":"d"}}', [("a_b_c", "d")], id="flatten-sanitised"),
    pytest.param(
        '{"a b-c":1,"9x":2,"":3,"é":4," k ":5}',
        [("a_b_c", "1"), ("_9x", "2"), ("_", "4"), ("k", "5")],
        id="names-sanitised-empty-skipped",
    ),
    pytest.param('{"a":1,"a":2}', [("a", "1"), ("a", "2")], id="duplicates-in-line-order"),
    pytest.param('{"s":"a\\"b\\n\\u00e9\\ud83d\\ude00"}', [("s", 'a"b\né😀')], id="unescaped"),
    # The reference's JSON library refuses a surrogate outside a valid pair (Unescape
    # fails) and Loki's unescapeJSONString then sets "".
    pytest.param('{"s":"x\\ud800y"}', [("s", "")], id="lone-surrogate-empties-the-value"),
    pytest.param('  {"a":"b"}\n', [("a", "b")], id="surrounding-whitespace"),
    pytest.param('{"lvl":"x", broken', [("lvl", "x")], id="fields-before-syntax-error"),
    pytest.param(
        '{"a":{"b":1,"c":tru},"d":2}', [("a_b", "1")], id="nested-fields-before-syntax-error"
    ),
    pytest.param('{"a":1,"n":NaN,"z":2}', [("a", "1")], id="nan-is-not-json"),
    pytest.param('{"a":1} trailing', [("a", "1")], id="trailing-garbage"),
    pytest.param("", [], id="empty-line"),
    pytest.param("not json", [], id="not-json"),
    pytest.param("[1,2]", [], id="array-line"),
    pytest.param('"str"', [], id="string-line"),
    pytest.param("{" * 5000, [], id="deep-nesting-does-not-crash"),
]


@pytest.mark.parametrize(("line", "expected"), CASES)
def test_json_fields(line: str, expected: list[tuple[str, str]]) -> None:
    assert json_fields(line) == expected


def test_batch_keeps_rows_and_nulls() -> None:
    result = json_fields_batch(pa.array(['{"a":"1"}', None, "x", '{"b":2,"c":"3"}']))
    assert result.type == FIELDS_TYPE
    assert result.to_pylist() == [
        [{"key": "a", "value": "1"}],
        None,
        [],
        [{"key": "b", "value": "2"}, {"key": "c", "value": "3"}],
    ]


def test_registered_as_udf() -> None:
    with duckdb.connect() as connection:
        register_udfs(connection)
        rows = connection.execute(
            "SELECT logql_json_fields(line, NULL) FROM (VALUES ('{\"x\":1.0}'), ('[]')) t(line)"
        ).fetchall()
    assert rows == [([{"key": "x", "value": "1.0"}],), ([],)]

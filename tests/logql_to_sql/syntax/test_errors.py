from __future__ import annotations

import pytest
from _cases import params

import logql_to_sql as L


@pytest.mark.parametrize(("query", "message"), params("errors.txt"))
def test_error_message(query: str, message: str) -> None:
    with pytest.raises(L.ParseError) as exc:
        L.parse(query)
    assert str(exc.value) == message


SPEC_EXAMPLES = [
    ('{foo="bar"', 1, 11, "syntax error: unexpected $end, expecting } or ,"),
    ('{foo="bar"} "foo"', 1, 13, "syntax error: unexpected STRING"),
    ('{foo="bar"} |~', 1, 15, "syntax error: unexpected $end, expecting STRING or ip"),
    ('{foo="bar}', 1, 6, "literal not terminated"),
    ('min({ foo = "bar" }[5m])', 0, 20, "syntax error: unexpected RANGE"),
]


@pytest.mark.parametrize(("query", "line", "col", "desc"), SPEC_EXAMPLES)
def test_spec_error_positions(query: str, line: int, col: int, desc: str) -> None:
    with pytest.raises(L.ParseError) as exc:
        L.parse(query)
    err = exc.value
    assert (err.line, err.col, err.description) == (line, col, desc)
    assert str(err) == f"parse error at line {line}, col {col}: {desc}"


def test_error_offsets_and_hierarchy() -> None:
    with pytest.raises(L.ParseError) as exc:
        L.parse('{a="b"} |= 5')
    assert (exc.value.start, exc.value.end) == (11, 12)
    assert isinstance(exc.value, L.LogQLError)
    with pytest.raises(L.LexError):
        L.parse('{a="\\d"}')


def test_no_position_form() -> None:
    with pytest.raises(L.ParseError) as exc:
        L.parse('sum_over_time({a="b"}[5m])')
    assert (exc.value.line, exc.value.col) == (0, 0)
    assert str(exc.value) == "parse error : invalid aggregation sum_over_time without unwrap"


def test_syntax_error_before_later_lex_error() -> None:
    with pytest.raises(L.ParseError) as exc:
        L.parse('{a="b"} |= 5 "\\d"')
    assert "unexpected NUMBER" in str(exc.value)


def test_line_format_removed_in_metric_queries_is_not_checked() -> None:
    L.parse('sum(count_over_time({a="b"} | line_format "{{f}}" [1m]))')
    with pytest.raises(L.ParseError):
        L.parse('{a="b"} | line_format "{{f}}"')


def test_valid_regex_and_templates_pass() -> None:
    L.parse('{a=~"(?P<n>x)|[[:alpha:]]+\\\\d{1,3}"} | regexp "(?P<x>\\\\w+)" | pattern "<a> <_>"')
    L.parse('{a="b"} | line_format `{{ if eq .x "1" }}{{ .y | upper }}{{ else }}z{{ end }}`')
    L.parse('{a="b"} | label_format t="{{ __timestamp__ | date \\"2006\\" }}"')
    L.parse('{a="b"} | json x="a.b[0][\\"c d\\"]" |= ip("10.0.0.1-10.0.0.9") | ip=ip("::1")')

from __future__ import annotations

import math

import pytest
from _cases import params

import logql_to_sql as L
from logql_to_sql.syntax import ast as a


@pytest.mark.parametrize(("query", "expected"), params("identity.txt"))
def test_identity(query: str, expected: str) -> None:
    """validate_identity: parse + validate, then print the canonical text T."""
    assert L.to_text(L.parse(query)) == expected


@pytest.mark.parametrize(("query", "expected"), params("identity.txt"))
def test_canonical_text_is_stable(query: str, expected: str) -> None:
    if expected in ("NaN", "+Inf", "-Inf"):
        pytest.skip("Go prints NaN/Inf literals, which are not LogQL")
    assert L.to_text(L.parse(expected)) == expected
    lossy = ('!= "a" or', '!~ "a" or', "KiB")  # split or-chains; humanized bytes
    if not any(marker in query for marker in lossy):
        assert L.parse(expected) == L.parse(query)


SEL = a.StreamSelector((a.Matcher("app", a.MatchOp.EQ, "foo"),))
EQ = a.MatchOp.EQ


def _log(*stages: a.Stage) -> a.LogQuery:
    return a.LogQuery(SEL, stages)


def _filters(text: str) -> a.Stage:
    expr = L.parse('{app="foo"} | ' + text)
    assert isinstance(expr, a.LogQuery)
    return expr.stages[0]


def _m(name: str, value: str = "1") -> a.StringLabelFilter:
    return a.StringLabelFilter(a.Matcher(name, EQ, value))


AST_CASES = [
    ('{app="foo"}', _log()),
    ('{app="foo"} |= "a" or "b"', _log(a.LineFilter(a.LineFilterOp.CONTAINS, ("a", "b")))),
    ('{app="foo"} != "a" or ip("1.1.1.1")', _log(a.LineFilter(a.LineFilterOp.NOT_CONTAINS, ("a", a.IpOperand("1.1.1.1"))))),
    ('{app="foo"} |> "<_>" !> "x"', _log(a.LineFilter(a.LineFilterOp.PATTERN, ("<_>",)), a.LineFilter(a.LineFilterOp.NOT_PATTERN, ("x",)))),
    ('{app="foo"} | json a, b="c.d"', _log(a.JsonParser((a.LabelExtraction("a", "a"), a.LabelExtraction("b", "c.d"))))),
    ('{app="foo"} | logfmt --keep-empty x', _log(a.LogfmtParser(False, True, (a.LabelExtraction("x", "x"),)))),
    ('{app="foo"} | label_format a=b, c="t"', _log(a.LabelFormat((a.LabelFormatOp("a", "b", False), a.LabelFormatOp("c", "t", True))))),
    ('{app="foo"} | drop a, b=~"x"', _log(a.Drop(("a", a.Matcher("b", a.MatchOp.RE, "x"))))),
    ('{app="foo"} | keep a', _log(a.Keep(("a",)))),
    ('{app="foo"} | unpack | decolorize', _log(a.Unpack(), a.Decolorize())),
    ('{app="foo"} | status = 200', _log(a.NumericLabelFilter("status", a.CompareOp.EQ, 200.0))),
    ('{app="foo"} | status > -1.5', _log(a.NumericLabelFilter("status", a.CompareOp.GT, -1.5))),
    ('{app="foo"} | took <= 1h30m', _log(a.DurationLabelFilter("took", a.CompareOp.LTE, 5_400_000_000_000))),
    ('{app="foo"} | size != 1KiB', _log(a.BytesLabelFilter("size", a.CompareOp.NEQ, 1024))),
    ('{app="foo"} | ip != ip("::1")', _log(a.IpLabelFilter("ip", a.MatchOp.NEQ, "::1"))),
]  # fmt: skip


@pytest.mark.parametrize(("query", "expected"), [pytest.param(*c, id=c[0]) for c in AST_CASES])
def test_ast(query: str, expected: a.Expr) -> None:
    assert L.parse(query) == expected


LABEL_FILTER_CASES = [
    ('a="1" or b="1" c="1"', a.OrLabelFilter(_m("a"), a.AndLabelFilter(_m("b"), _m("c")))),
    ('a="1" and b="1" or c="1"', a.OrLabelFilter(a.AndLabelFilter(_m("a"), _m("b")), _m("c"))),
    ('a="1" or b="1" and c="1"', a.OrLabelFilter(_m("a"), a.AndLabelFilter(_m("b"), _m("c")))),
    ('a="1" or b="1" or c="1"', a.OrLabelFilter(a.OrLabelFilter(_m("a"), _m("b")), _m("c"))),
    ('(a="1" or b="1") c="1"', a.AndLabelFilter(a.OrLabelFilter(_m("a"), _m("b")), _m("c"))),
    ('a="1", b="1"', a.AndLabelFilter(_m("a"), _m("b"))),
    ('a="1" b="1" c="1"', a.AndLabelFilter(_m("a"), a.AndLabelFilter(_m("b"), _m("c")))),
]


@pytest.mark.parametrize(
    ("text", "expected"), LABEL_FILTER_CASES, ids=[c[0] for c in LABEL_FILTER_CASES]
)
def test_label_filter_precedence(text: str, expected: a.LabelFilter) -> None:
    assert _filters(text) == expected


def test_log_range_forms_are_equal() -> None:
    forms = [
        'rate({app="foo"} |= "x" [5m] offset 1m)',
        'rate({app="foo"}[5m] offset 1m |= "x")',
        'rate(({app="foo"} |= "x")[5m] offset 1m)',
        'rate((({app="foo"} |= "x")[5m] offset 1m))',
    ]
    first = L.parse(forms[0])
    assert all(L.parse(f) == first for f in forms)
    assert isinstance(first, a.RangeAggregation)
    assert first.range.offset_ns == 60_000_000_000
    assert first.range.query == _log(a.LineFilter(a.LineFilterOp.CONTAINS, ("x",)))


def test_unwrap_node() -> None:
    expr = L.parse('sum_over_time({app="foo"} | unwrap duration(t) | t > 1 [1m])')
    assert isinstance(expr, a.RangeAggregation)
    assert expr.range.unwrap == a.Unwrap(
        "t", a.UnwrapConversion.DURATION, (a.NumericLabelFilter("t", a.CompareOp.GT, 1.0),)
    )


def test_vector_matching_node() -> None:
    expr = L.parse('rate({a="b"}[1m]) / ignoring (x) group_right (y) rate({a="b"}[1m])')
    assert isinstance(expr, a.BinaryOp)
    assert expr.matching == a.VectorMatching(False, ("x",), a.Cardinality.ONE_TO_MANY, ("y",))


def test_topk_param_is_int_and_nodes_hashable() -> None:
    expr = L.parse('topk(3, rate({a="b"}[1m])) by (x)')
    assert isinstance(expr, a.VectorAggregation)
    assert expr.param == 3 and expr.grouping == a.Grouping(("x",))
    assert hash(expr) == hash(L.parse('topk by (x) (3, rate({a="b"}[1m]))'))


@pytest.mark.parametrize(
    ("query", "value"),
    [("1+1--1", 3.0), ("-2^2", 4.0), ("2^3^2", 512.0), ("2 % 2^3", 2.0), ("1 > 1 > 1", 0.0),
     ("(-1) ^ 0.5", math.nan), ("0 ^ -2", math.inf), ("7 % -3", 1.0), ("-7 % 3", -1.0),
     ("1 - 2 - 3", -4.0), ("2 * 3 ^ 2", 18.0), ("8 / 2 / 2", 2.0), ("1 + 2 > bool 2", 1.0)],
)  # fmt: skip
def test_constant_folding(query: str, value: float) -> None:
    expr = L.parse(query)
    assert isinstance(expr, a.Literal)
    assert expr.value == value or (math.isnan(value) and math.isnan(expr.value))


def test_is_log_query() -> None:
    assert L.is_log_query(L.parse('{a="b"} |= "x"'))
    assert not L.is_log_query(L.parse('rate({a="b"}[1m])'))
    assert not L.is_log_query(L.parse("1"))


def test_worked_examples() -> None:
    assert (
        L.to_text(L.parse('{app="foo"}|json|level="error"')) == '{app="foo"} | json | level="error"'
    )
    assert L.to_text(L.parse('sum(rate({a="b"}[5m])) by (c)')) == 'sum by (c)(rate({a="b"}[5m]))'
    assert L.to_text(L.parse('rate({a="b"}[5m]) > 1')) == '(rate({a="b"}[5m]) > 1)'
    assert (
        L.to_text(L.parse('count_over_time({a="b"}[5m] offset 1h)'))
        == 'count_over_time({a="b"}[5m] offset 1h0m0s)'
    )


def test_input_size_limit() -> None:
    with pytest.raises(L.ParseError) as exc:
        L.parse('{a="' + "x" * 131072 + '"}')
    assert str(exc.value) == "parse error : input size too long (131078 > 131072)"

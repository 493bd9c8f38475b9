from __future__ import annotations

import pytest

import logql_to_sql as L

OK = [
    ('{a="b", c="d"}', (("a", "b"), ("c", "d"))),
    ('{a="b",c="d"}', (("a", "b"), ("c", "d"))),
    ('{c="d", a="b"}', (("c", "d"), ("a", "b"))),
    ("{}", ()),
    ('{ a = "b" }', (("a", "b"),)),
    ('{a="x\\ny", b="\\"q\\""}', (("a", "x\ny"), ("b", '"q"'))),
    ("{a=`raw\\d`}", (("a", "raw\\d"),)),
    ('{a="日本", b=""}', (("a", "日本"), ("b", ""))),
    ('{rate="1", ip="2"}', (("rate", "1"), ("ip", "2"))),
    ('{a="b", a="c"}', (("a", "b"), ("a", "c"))),
    ('{a=~"x.*"}', (("a", "x.*"),)),
    ('{service_name="svc", __tenant_id__="t"}', (("service_name", "svc"), ("__tenant_id__", "t"))),
]


@pytest.mark.parametrize(("text", "expected"), OK, ids=[c[0] for c in OK])
def test_parse_labels(text: str, expected: tuple[tuple[str, str], ...]) -> None:
    assert L.parse_labels(text) == expected


BAD = [
    (
        "{a=b}",
        "parse error at line 1, col 4: syntax error: unexpected IDENTIFIER, expecting STRING",
    ),
    ('{a="b"', "parse error at line 1, col 7: syntax error: unexpected $end, expecting } or ,"),
    ('{a="b",}', "parse error at line 1, col 8: syntax error: unexpected }, expecting IDENTIFIER"),
    (
        '{by="b"}',
        "parse error at line 1, col 2: syntax error: unexpected by, expecting IDENTIFIER or }",
    ),
    ('{a="\\d"}', "parse error at line 1, col 4: invalid char escape"),
    ("", "parse error : syntax error: unexpected $end"),
    ('{a=~"("}', "parse error : error parsing regexp: missing closing ): `(`"),
    ('{a="b"} |= "x"', "only label matchers are supported"),
    ('rate({a="b"}[1m])', "only label matchers are supported"),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[c[0] or "<empty>" for c in BAD])
def test_parse_labels_errors(text: str, message: str) -> None:
    with pytest.raises(L.ParseError) as exc:
        L.parse_labels(text)
    assert str(exc.value) == message

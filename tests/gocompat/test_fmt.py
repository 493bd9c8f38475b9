"""LogQL's Go text helpers, which share ``gostrconv`` with the template engine."""

from __future__ import annotations

import pytest

import logql_to_sql as L
from gocompat.fmt import go_quote, go_unquote


@pytest.mark.parametrize(
    ("body", "decoded"),
    [
        ("\\xc3\\xa9", "é"),  # \x escapes are bytes, as in Go: two of them make one rune
        ("\\303\\251", "é"),
        ("\\u00e9\\U0001F600", "é😀"),
        ("a\\tb\\\\", "a\tb\\"),
        ("\\xff", "\ufffd"),  # a lone byte that is not UTF-8
    ],
)
def test_unquote_decodes_go_escapes(body: str, decoded: str) -> None:
    assert go_unquote(body, '"') == decoded


@pytest.mark.parametrize("body", ["\\q", "\\x4", "\\400", "\\ud800", "\\'"])
def test_unquote_rejects_bad_escapes(body: str) -> None:
    with pytest.raises(ValueError, match="invalid char escape"):
        go_unquote(body, '"')


def test_line_filter_string_with_byte_escapes() -> None:
    query = L.parse('{a="b"} |= "caf\\xc3\\xa9"')
    assert L.to_text(query) == '{a="b"} |= "café"'


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("plain", '"plain"'),
        ('a"b\\', '"a\\"b\\\\"'),
        ("\x00é\u200b", '"\\x00é\\u200b"'),
        ("\ud800", '"\\ufffd"'),
    ],
)
def test_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted

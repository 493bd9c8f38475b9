"""Go-JSON escaping: the HTML-safe characters, separators, and text Go sees as invalid UTF-8."""

from __future__ import annotations

import json

import pytest

from gocompat import jsonesc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("a<b>&c", '"a\\u003cb\\u003e\\u0026c"', id="html"),
        pytest.param("x\u2028y\u2029z", '"x\\u2028y\\u2029z"', id="separators"),
        pytest.param("—…\u2027\u202a", '"—…\u2027\u202a"', id="neighbours-of-separators-kept"),
        pytest.param(
            '"\\\b\f\n\r\t\x01\x1f\x7f', '"\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\x7f"', id="controls"
        ),
        pytest.param("a\udcffb", '"a\\ufffdb"', id="lone-surrogate-is-invalid-utf8"),
        pytest.param("\ufffd", '"\ufffd"', id="real-replacement-char-kept"),
    ],
)
def test_quote_and_encode_agree(text: str, expected: str) -> None:
    assert jsonesc.quote(text) == expected
    assert jsonesc.encode(text).decode() == expected


def test_encode_nested_payload_with_invalid_text() -> None:
    payload = {"b": ["ok<", "bad\ud800"], "a": {"k\udc80": 1}}
    assert jsonesc.encode(payload) == b'{"b":["ok\\u003c","bad\\ufffd"],"a":{"k\xef\xbf\xbd":1}}'
    assert jsonesc.encode_sorted(payload).startswith(b'{"a":')


def test_escape_html_is_identity_on_plain_text() -> None:
    body = json.dumps({"line": "GET /index 200 é"}).encode()
    assert jsonesc.escape_html(body) is body

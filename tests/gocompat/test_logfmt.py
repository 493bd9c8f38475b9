"""logfmt read as the reference's decoder reads it, written as go-logfmt writes it."""

from __future__ import annotations

import random

import pytest

from gocompat import logfmt
from gocompat.logfmt import encode_pair, scan_pairs, unquote


@pytest.mark.parametrize(
    ("line", "pairs", "ok"),
    [
        pytest.param("", [], True, id="empty"),
        pytest.param(" \t a=1  b=2 \n", [("a", "1"), ("b", "2")], True, id="blanks"),
        pytest.param("a b=", [("a", ""), ("b", "")], True, id="no-values"),
        pytest.param('a="" b="x y"', [("a", ""), ("b", "x y")], True, id="quoted"),
        # After a closing quote the next key may follow at once.
        pytest.param('a="x"b=1', [("a", "x"), ("b", "1")], True, id="no-blank-after-quote"),
        pytest.param('a="\\u00e9\\/\\\'"', [("a", "é/'")], True, id="escapes"),
        pytest.param('a="\\ud83d\\ude00"', [("a", "😀")], True, id="surrogate-pair"),
        pytest.param('a="\\ud83dx"', [("a", "\ufffdx")], True, id="lone-surrogate"),
        pytest.param("p=C:\\dir", [("p", "C:\\dir")], True, id="backslash-in-plain-value"),
        # Errors end the scan; what came before is kept.
        pytest.param('a=1 b="x', [("a", "1")], False, id="unterminated"),
        pytest.param('a=1 b="\\q"', [("a", "1")], False, id="bad-escape"),
        pytest.param("a=1 =2", [("a", "1")], False, id="no-key"),
        pytest.param("a=1 b==2", [("a", "1")], False, id="equals-value"),
        pytest.param('a=1 b=x"y', [("a", "1")], False, id="quote-in-value"),
        pytest.param('a=1 b"=2', [("a", "1")], False, id="quote-in-key"),
        pytest.param("a=1 k\ufffd=2", [("a", "1")], False, id="replacement-in-key"),
    ],
)
def test_scan_pairs(line: str, pairs: list[tuple[str, str]], ok: bool) -> None:
    assert scan_pairs(line) == (pairs, ok)


def test_one_pass_reading_agrees_with_the_stepwise_one() -> None:
    # The fast reader of valid lines must give the stepwise reader's answer, and must
    # turn down every line the stepwise reader finds an error in.
    rng = random.Random(7)
    alphabet = ["a", "b", "=", '"', " ", "\\", "\t", "x", "n", "u", "0", "é", "/"]
    for _ in range(20_000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        slow = logfmt._scan_stepwise(line)
        fast = logfmt._scan_valid(line)
        assert fast == (slow if slow[1] else None), line


def test_unquote_rejects_unknown_escapes() -> None:
    assert unquote("a\\tb") == "a\tb"
    assert unquote("a\\x") is None
    assert unquote("a\\") is None
    assert unquote("\\u12") is None


@pytest.mark.parametrize(
    ("key", "value", "written"),
    [
        ("k", "v", "k=v"),
        ("k", "", "k="),
        ("k", "null", "k=null"),
        ("k", "a b", 'k="a b"'),
        ("k", "a=b", 'k="a=b"'),
        ("k", 'say "x"', 'k="say \\"x\\""'),
        ("k", "t\tn\nr\r\x01\x7f", 'k="t\\tn\\nr\\r\\u0001\\u007f"'),
        ("k", "\ufffd", 'k="\\ufffd"'),
        ("k", "back\\slash", "k=back\\slash"),
        ("k e=y", "v", "key=v"),
    ],
)
def test_encode_pair(key: str, value: str, written: str) -> None:
    assert encode_pair(key, value) == written


def test_encode_pair_needs_a_key() -> None:
    assert encode_pair(' ="', "v") is None

"""Tokenizers of the pattern miner: plain text, JSON messages, logfmt; formats; pattern text.

Expected values follow the reference's tokenizers (pkg/pattern/drain/line_tokenizer.go)
rule by rule; each case names the rule it pins.
"""

from __future__ import annotations

import pytest

from svc.query.pattern_tokens import (
    FORMAT_JSON,
    FORMAT_LOGFMT,
    FORMAT_UNKNOWN,
    JsonTokenizer,
    LogfmtTokenizer,
    PlainTokenizer,
    collapse_params,
    detect_formats,
    has_number,
    join_plain,
    pattern_text,
    split_plain,
)

PLAIN = PlainTokenizer(3000)
JSON = JsonTokenizer(3000, ("log", "message", "msg", "msg_", "_msg", "content"))
LOGFMT = LogfmtTokenizer(3000)


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        # Spaces split and vanish; ``?`` and ``=`` split and stay; ``/`` does not split.
        pytest.param(
            "GET /api/v1/users?id=42 took 12ms",
            ["GET", "/api/v1/users", "?", "id", "=", "42", "took", "12ms"],
            id="url",
        ),
        # ``_ - . : /`` are kept inside tokens.
        pytest.param("a_b-c.d:e/f next", ["a_b-c.d:e/f", "next"], id="kept-punctuation"),
        # Every other ASCII punctuation character is a token of its own.
        pytest.param(
            "k=(v), [x] {y} \"q\" 'r' #1 @u 50% a&b *c;d!",
            [
                *["k", "=", "(", "v", ")", ",", "[", "x", "]", "{", "y", "}", '"', "q", '"'],
                *["'", "r", "'", "#", "1", "@", "u", "50", "%", "a", "&", "b", "*", "c", ";"],
                *["d", "!"],
            ],
            id="ascii-punctuation",
        ),
        # Symbols (+ < > | ~ ^ $ `) are not punctuation: they stay inside tokens.
        pytest.param("a+b<c>d|e~f^g$h`i end", ["a+b<c>d|e~f^g$h`i", "end"], id="symbols"),
        # Only the space separates: a tab is part of a token.
        pytest.param("\tat x\ty", ["\tat", "x\ty"], id="tab"),
        # Letters and numbers of any script stay inside tokens; € is a symbol.
        pytest.param("café 42€ naïve", ["café", "42€", "naïve"], id="unicode-letters"),
        # A non-ASCII punctuation character splits at its first byte; its other bytes
        # open the next token (here U+2026, bytes E2 80 A6).
        pytest.param("a…b c", ["a", "\udce2", "\udc80\udca6b", "c"], id="wide-punctuation"),
        # The same at the end of the line: the rest of its bytes are a token alone.
        pytest.param("a b…", ["a", "b", "\udce2", "\udc80\udca6"], id="wide-punctuation-end"),
    ],
)
def test_plain_tokens(line: str, tokens: list[str]) -> None:
    assert PLAIN.tokenize(line) == tokens
    assert split_plain(line)[0] == tokens


@pytest.mark.parametrize(
    ("line", "spaces", "joined"),
    [
        # One entry per space, naming the token before it: runs of spaces come back.
        pytest.param("a  b c", [0, 0, 1], "a  b c", id="double-space"),
        pytest.param("a b ", [0, 1], "a b ", id="trailing-space"),
        # A space before the first token is recorded as -1, which no token index ever
        # equals: the join then writes no space at all (the reference's behaviour).
        pytest.param(" a b c", [-1, 0, 1], "abc", id="leading-space"),
        pytest.param("x=1, y", [3], "x=1, y", id="no-space-around-punctuation"),
    ],
)
def test_plain_spaces(line: str, spaces: list[int], joined: str) -> None:
    tokens, found = split_plain(line)
    assert found == spaces
    assert join_plain(tokens, found) == joined
    assert PLAIN.join(tokens, PLAIN.state(line)) == joined


def test_wide_punctuation_round_trips_and_broken_bytes_become_replacement() -> None:
    tokens, spaces = split_plain("a…b c")
    assert pattern_text(join_plain(tokens, spaces)) == "a…b c"
    tokens[1] = "<_>"
    # E2 gave way to <_>; 80 and A6 no longer form a character.
    assert pattern_text(join_plain(tokens, spaces)) == "a<_>\ufffd\ufffdb c"


def test_line_length_is_counted_in_utf8_bytes() -> None:
    assert PLAIN.tokenize("é" * 1500) is not None  # 3000 bytes: allowed
    assert PLAIN.tokenize("é" * 1501) is None  # 3002 bytes, 1501 characters
    assert PlainTokenizer(11).tokenize("a b c d e f") == ["a", "b", "c", "d", "e", "f"]
    assert PlainTokenizer(11).tokenize("a b c d e f ") is None


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        # The message as written in the line: escapes are not decoded.
        pytest.param(
            '{"level":"info","msg":"user \\"bob\\" logged in"}',
            ["user", "\\", '"', "bob", "\\", '"', "logged", "in"],
            id="escapes-kept",
        ),
        # A member that is not a string does not count; the next listed one does.
        pytest.param('{"msg":42,"content":"a b c d"}', ["a", "b", "c", "d"], id="not-a-string"),
        # Only the first level is searched.
        pytest.param('{"ctx":{"msg":"a b c d"},"level":"x"}', None, id="nested-ignored"),
        # The first of duplicate members counts.
        pytest.param('{"msg":"one two three four","msg":"x"}', ["one", "two", "three", "four"]),
        # Without a listed member, the line is not mined.
        pytest.param('{"event":"heartbeat"}', None, id="no-message"),
        # The scan does not need valid JSON.
        pytest.param('{"msg":"a b c d", oops', ["a", "b", "c", "d"], id="lenient"),
    ],
)
def test_json_tokens(line: str, tokens: list[str] | None) -> None:
    assert JSON.tokenize(line) == tokens


def test_json_pattern_is_wrapped_in_wildcards() -> None:
    line = '{"msg":"user \\"bob\\" logged in"}'
    tokens = JSON.tokenize(line)
    assert tokens is not None
    assert JSON.join(tokens, JSON.state(line)) == '<_>user \\"bob\\" logged in<_>'


def test_json_message_length_limit_applies_to_the_message() -> None:
    tokenizer = JsonTokenizer(10, ("msg",))
    assert tokenizer.tokenize('{"msg":"a b c d e", "other": "' + "x" * 100 + '"}') is not None
    assert tokenizer.tokenize('{"msg":"a b c d e f"}') is None


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        # Keys and values in turn; values of time-like keys are <_> from the start
        # (ts, time, timestamp, traceID case aside; t exactly).
        pytest.param(
            'ts=2024-01-01T00:00:00Z level=info msg="hello world" t=5 TraceId=abc Time=x T=y',
            [
                *["ts", "<_>", "level", "info", "msg", "hello world", "t", "<_>", "TraceId"],
                *["<_>", "Time", "<_>", "T", "y"],
            ],
            id="time-keys",
        ),
        # A bare key has an empty value.
        pytest.param("a=1 b", ["a", "1", "b", ""], id="bare-key"),
        # Quoted values are unescaped.
        pytest.param('q="say \\"hi\\"\\n"', ["q", 'say "hi"\n'], id="unescaped"),
        # A line logfmt cannot read is not mined.
        pytest.param('a=1 b="unterminated', None, id="unterminated"),
        pytest.param("a=1 b=x=y", None, id="equals-in-value"),
        pytest.param('a=1 "b"=2', None, id="quote-in-key"),
    ],
)
def test_logfmt_tokens(line: str, tokens: list[str] | None) -> None:
    assert LOGFMT.tokenize(line) == tokens


def test_logfmt_join_writes_logfmt() -> None:
    tokens = ["msg", "hello world", "k", "", "x", "<_>", "q", 'say "hi"', "n", "null"]
    assert LOGFMT.join(tokens, None) == 'msg="hello world" k= x=<_> q="say \\"hi\\"" n=null'
    # A key with no valid character left makes the whole pattern empty.
    assert LOGFMT.join(["\x7f", "v", "a", "b"], None) == ""


@pytest.mark.parametrize(
    ("line", "fmt"),
    [
        pytest.param('{"a":1}', FORMAT_JSON, id="json"),
        pytest.param("{x}", FORMAT_JSON, id="json-by-its-braces-only"),
        pytest.param('a=1 b="x y"', FORMAT_LOGFMT, id="logfmt"),
        pytest.param("caller=a.go:12 level=debug", FORMAT_LOGFMT, id="logfmt-colons"),
        # Keys must be word characters.
        pytest.param("log.level=x", FORMAT_UNKNOWN, id="dotted-key"),
        # A word without ``=`` breaks the pairs.
        pytest.param("level=info msg=hello world", FORMAT_UNKNOWN, id="bare-word"),
        # A value may start with any character but ``"``, a space included.
        pytest.param("a= b", FORMAT_LOGFMT, id="space-value"),
        pytest.param("a=", FORMAT_UNKNOWN, id="empty-value"),
        pytest.param("x", FORMAT_UNKNOWN, id="short"),
        pytest.param("GET /index.html 200", FORMAT_UNKNOWN, id="plain"),
    ],
)
def test_detect_formats(line: str, fmt: str) -> None:
    assert detect_formats([line]) == [fmt]


def test_detect_formats_is_linear_on_hostile_lines() -> None:
    # Many ways to split the pairs, and a double space at the end that defeats them all.
    hostile = "a=b=c " * 5000 + " "
    assert detect_formats([hostile, "a=1"]) == [FORMAT_UNKNOWN, FORMAT_LOGFMT]


@pytest.mark.parametrize(
    ("token", "expected"),
    [("v2", True), ("abc", False), ("٣", True), ("½", True), ("一", False), ("<_>", False)],
)
def test_has_number(token: str, expected: bool) -> None:
    assert has_number(token) is expected


def test_collapse_params() -> None:
    assert collapse_params("<_><_> x <_><_><_>") == "<_> x <_>"
    assert collapse_params("<<_><_>>") == "<<_>>"
    assert collapse_params("a <_> <_>") == "a <_> <_>"

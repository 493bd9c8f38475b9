"""Lines into tokens for the pattern miner, and templates back into pattern text.

Each stream is read in one format, guessed from its first line as the reference does: a
line opening with ``{`` and closing with ``}`` is JSON; one made of ``key=value`` pairs
is logfmt; anything else is plain text.

- Plain text splits at spaces, at ``=`` and at punctuation other than ``_ - . : /``; the
  punctuation is a token of its own, spaces are remembered so the pattern can put them
  back. A non-ASCII punctuation character splits as the reference's byte slicing does:
  its first byte is the token, its other bytes open the next token.
- JSON uses the first of some members (``log``, ``message``, ``msg``...) whose value is
  a string, as written in the line (escapes kept), split as plain text; the pattern is
  wrapped in ``<_>`` for the rest of the object. A line without one is not mined.
- logfmt uses its pairs: each key and value is a token, a value of a time-like key
  (``ts``, ``time``, ``timestamp``, ``t``, ``traceID``) is ``<_>`` from the start, and
  the pattern is the pairs written back as logfmt. A line logfmt cannot read is not
  mined.

Lines longer than the limit (in UTF-8 bytes) are not mined. Runs of ``<_>`` in pattern
text collapse into one.

>>> PlainTokenizer(3000).tokenize('GET /api/v1/users?id=42 took 12ms')
['GET', '/api/v1/users', '?', 'id', '=', '42', 'took', '12ms']
"""

from __future__ import annotations

import re
import threading
import unicodedata
from typing import Protocol

import duckdb

from gocompat.jsonparser import top_level_values
from gocompat.logfmt import encode_pair, scan_pairs

__all__ = [
    "DEFAULT_JSON_FIELDS",
    "FORMAT_JSON",
    "FORMAT_LOGFMT",
    "FORMAT_UNKNOWN",
    "PARAM",
    "JsonTokenizer",
    "LogfmtTokenizer",
    "PlainTokenizer",
    "Tokenizer",
    "collapse_params",
    "detect_formats",
    "has_number",
    "join_plain",
    "pattern_text",
    "split_plain",
    "tokenizer_for",
    "too_long",
]

PARAM = "<_>"
FORMAT_JSON = "json"
FORMAT_LOGFMT = "logfmt"
FORMAT_UNKNOWN = "unknown"
DEFAULT_JSON_FIELDS = ("log", "message", "msg", "msg_", "_msg", "content")

# Go's RE2 reading of a logfmt line; run by DuckDB's RE2, as Python's backtracking
# engine could take exponential time on some lines.
_LOGFMT_LINE = '^(\\w+?=([^"]\\S*?|".+?") )*?(\\w+?=([^"]\\S*?|".+?"))+$'
# Every punctuation character lies below U+20000.
_PUNCTUATION = "".join(
    char
    for char in map(chr, range(0x20000))
    if unicodedata.category(char)[0] == "P" and char not in "_-.:/"
)
# Lines without non-ASCII punctuation (nearly all) split with an ASCII-only class,
# which Python's engine matches many times faster than the full one.
_ASCII_DELIMITERS = re.escape("=" + "".join(c for c in _PUNCTUATION if c.isascii()))
_TOKENS = re.compile(f"[^ {_ASCII_DELIMITERS}]+|[{_ASCII_DELIMITERS}]")
_TOKENS_AND_SPACES = re.compile(f"[^ {_ASCII_DELIMITERS}]+|[{_ASCII_DELIMITERS}]| ")
_WIDE_PUNCTUATION = frozenset(c for c in _PUNCTUATION if not c.isascii())
_PUNCTUATION_SET = frozenset(_PUNCTUATION)
_PARAM_RUN = re.compile(f"(?:{re.escape(PARAM)}){{2,}}")
_ASCII_DIGIT = re.compile("[0-9]")
_TIME_KEYS = frozenset({"ts", "traceid", "time", "timestamp"})

_re2_lock = threading.Lock()
_re2: duckdb.DuckDBPyConnection | None = None


class Tokenizer(Protocol):
    """How one stream's lines become tokens and templates become pattern text."""

    def tokenize(self, line: str) -> list[str] | None:
        """The line's tokens; None when the line is not mined."""

    def state(self, line: str) -> object:
        """What ``join`` needs besides tokens, from a line ``tokenize`` accepted."""

    def join(self, tokens: list[str], state: object) -> str:
        """A template as text (before runs of ``<_>`` collapse); ``""`` if it has none."""


def detect_formats(lines: list[str]) -> list[str]:
    """The format each line indicates for a stream that starts with it."""
    formats = [FORMAT_UNKNOWN] * len(lines)
    candidates = []
    for index, line in enumerate(lines):
        if len(line) >= 2 and line[0] == "{" and line[-1] == "}":
            formats[index] = FORMAT_JSON
        elif len(line.encode()) >= 2:
            candidates.append(index)
    if candidates:
        for index, matched in zip(
            candidates, _re2_full_match([lines[i] for i in candidates]), strict=True
        ):
            if matched:
                formats[index] = FORMAT_LOGFMT
    return formats


def _re2_full_match(lines: list[str]) -> list[bool]:
    global _re2
    with _re2_lock:
        if _re2 is None:
            _re2 = duckdb.connect()
        cursor = _re2.cursor()
    try:
        row = cursor.execute(
            "SELECT list_transform(?::VARCHAR[], lambda x: regexp_full_match(x, ?))",
            [lines, _LOGFMT_LINE],
        ).fetchone()
    finally:
        cursor.close()
    assert row is not None
    return [bool(flag) for flag in row[0]]


def too_long(text: str, limit: int) -> bool:
    """Whether ``text`` has more than ``limit`` UTF-8 bytes."""
    size = len(text)
    if size * 4 <= limit:
        return False
    if size > limit:
        return True
    return len(text.encode("utf-8", "surrogatepass")) > limit


def has_number(token: str) -> bool:
    """Whether a token holds a character of Unicode's number categories."""
    if token.isascii():
        return _ASCII_DIGIT.search(token) is not None
    return any(unicodedata.category(char)[0] == "N" for char in token)


def collapse_params(text: str) -> str:
    """``text`` with each run of consecutive ``<_>`` written once."""
    return _PARAM_RUN.sub(PARAM, text) if PARAM + PARAM in text else text


def pattern_text(text: str) -> str:
    """Pattern text fit for JSON: bytes the splitting cut apart are rejoined, and those
    that form no character become U+FFFD."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _plain_ascii(text: str) -> bool:
    """Whether every splitter of ``text`` is ASCII."""
    return text.isascii() or _WIDE_PUNCTUATION.isdisjoint(text)


def split_plain(text: str) -> tuple[list[str], list[int]]:
    """Tokens of plain text, and for each space the index of the token before it.

    A space before the first token is recorded as -1, which (as in the reference) keeps
    every later space out of the pattern.
    """
    if not _plain_ascii(text):
        return _split_bytes(text)
    tokens: list[str] = []
    spaces: list[int] = []
    for part in _TOKENS_AND_SPACES.findall(text):
        if part == " ":
            spaces.append(len(tokens) - 1)
        else:
            tokens.append(part)
    return tokens, spaces


def _split_bytes(text: str) -> tuple[list[str], list[int]]:
    """``split_plain`` cutting at byte offsets: a multi-byte splitter keeps only its
    first byte, and its other bytes start the next token (bytes that form no character
    are held as surrogate escapes)."""
    data = text.encode("utf-8", "surrogateescape")
    pieces: list[bytes] = []
    spaces: list[int] = []
    start = offset = 0
    for char in text:
        width = len(char.encode("utf-8", "surrogateescape"))
        if char == " " or char == "=" or char in _PUNCTUATION_SET:
            if offset > start:
                pieces.append(data[start:offset])
            if char == " ":
                spaces.append(len(pieces) - 1)
            else:
                pieces.append(data[offset : offset + 1])
            start = offset + 1
        offset += width
    if start < len(data):
        pieces.append(data[start:])
    return [piece.decode("utf-8", "surrogateescape") for piece in pieces], spaces


def join_plain(tokens: list[str], spaces: list[int]) -> str:
    """Tokens with the spaces ``split_plain`` recorded put back."""
    if not spaces:
        return "".join(tokens)
    out: list[str] = []
    index, count = 0, len(spaces)
    for position, token in enumerate(tokens):
        out.append(token)
        while index < count and spaces[index] == position:
            out.append(" ")
            index += 1
    return "".join(out)


class PlainTokenizer:
    """Plain-text lines, split at spaces and punctuation."""

    def __init__(self, max_line_length: int) -> None:
        self.max_line_length = max_line_length

    def tokenize(self, line: str) -> list[str] | None:
        """The line's tokens; None when it is too long."""
        if too_long(line, self.max_line_length):
            return None
        if not _plain_ascii(line):
            return _split_bytes(line)[0]
        return _TOKENS.findall(line)

    def state(self, line: str) -> object:
        """Where the line's spaces go."""
        return split_plain(line)[1]

    def join(self, tokens: list[str], state: object) -> str:
        """Tokens with their spaces."""
        assert isinstance(state, list)
        return join_plain(tokens, state)


class JsonTokenizer:
    """JSON lines, by the text of their message member."""

    def __init__(self, max_line_length: int, fields: tuple[str, ...]) -> None:
        self.fields = fields
        self._plain = PlainTokenizer(max_line_length)

    def message(self, line: str) -> str | None:
        """The first listed member whose value is a string, as written in the line."""
        found = top_level_values(line, self.fields)
        for name in self.fields:
            value = found.get(name)
            if value is not None and value[1]:
                return value[0]
        return None

    def tokenize(self, line: str) -> list[str] | None:
        """The message's tokens; None without a message or when it is too long."""
        message = self.message(line)
        return None if message is None else self._plain.tokenize(message)

    def state(self, line: str) -> object:
        """Where the message's spaces go."""
        message = self.message(line)
        assert message is not None
        return self._plain.state(message)

    def join(self, tokens: list[str], state: object) -> str:
        """The message template between wildcards standing for the rest of the object."""
        return PARAM + self._plain.join(tokens, state) + PARAM


class LogfmtTokenizer:
    """logfmt lines, by their keys and values."""

    def __init__(self, max_line_length: int) -> None:
        self.max_line_length = max_line_length

    def tokenize(self, line: str) -> list[str] | None:
        """Keys and values in turn; None when the line is too long or not logfmt."""
        if too_long(line, self.max_line_length):
            return None
        pairs, ok = scan_pairs(line)
        if not ok:
            return None
        tokens: list[str] = []
        for key, value in pairs:
            tokens.append(key)
            tokens.append(PARAM if key == "t" or key.lower() in _TIME_KEYS else value)
        return tokens

    def state(self, line: str) -> object:
        """Nothing: logfmt is written back from the tokens alone."""
        return None

    def join(self, tokens: list[str], state: object) -> str:
        """The pairs as logfmt; ``""`` when a key has no valid character left."""
        written = []
        for index in range(0, len(tokens) - 1, 2):
            pair = encode_pair(tokens[index], tokens[index + 1])
            if pair is None:
                return ""
            written.append(pair)
        return " ".join(written)


def tokenizer_for(
    fmt: str, max_line_length: int, json_fields: tuple[str, ...] = DEFAULT_JSON_FIELDS
) -> Tokenizer:
    """The tokenizer of a stream in format ``fmt``."""
    if fmt == FORMAT_JSON:
        return JsonTokenizer(max_line_length, json_fields)
    if fmt == FORMAT_LOGFMT:
        return LogfmtTokenizer(max_line_length)
    return PlainTokenizer(max_line_length)

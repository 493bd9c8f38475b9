"""logfmt as the reference's Go code reads and writes it, one line at a time, in Python.

``scan_pairs`` follows the reference's pull decoder: blanks (anything up to the space
character) separate pairs; a key runs up to ``=``, a blank or the end (a bare key has no
value); a plain value runs up to a blank and may hold neither ``=`` nor ``"``; a quoted
value ends at the first unescaped ``"`` and, when it holds a backslash, is unescaped with
JSON's escapes plus ``\\'``. The first malformed pair ends the scan, and the caller learns
whether it ended on an error.

``encode_pair`` writes one ``key=value`` as go-logfmt's encoder does: characters that may
not appear in a key are dropped (an empty key is an error), and a value holding a blank,
``=``, ``"``, DEL or U+FFFD is quoted with JSON-like escapes.

>>> scan_pairs('a=1 msg="hi there" bare')
([('a', '1'), ('msg', 'hi there'), ('bare', '')], True)
>>> scan_pairs('a=1 b=x"y c=3')
([('a', '1')], False)
>>> encode_pair("msg", "hi there")
'msg="hi there"'
"""

from __future__ import annotations

import re

__all__ = ["encode_pair", "scan_pairs", "unquote"]

_BLANKS = re.compile(r"[\x00-\x20]*")
# A key, then an optional ``=`` with a quoted or plain value. Which character may follow
# is checked by hand: a key or plain value must end at a blank or the end of the line.
_PAIR = re.compile(
    r'([^\x00-\x20="]+)(?:(=)(?:"((?:[^"\\]|\\.)*)(")?|([^\x00-\x20="]*)))?',
    re.DOTALL,
)
# The same pairs, each a whole match, with possessive repeats: a line is valid when it is
# nothing but blanks and pairs. A key or plain value must end at a blank or the end.
_KEY = r'[^\x00-\x20="]++'
_QUOTED = r'"(?:[^"\\]|\\.)*+"'
_ENDS = r"(?![^\x00-\x20])"
_VALID = re.compile(
    rf"[\x00-\x20]*+(?:{_KEY}(?:=(?:{_QUOTED}|[^\x00-\x20=\"]*+{_ENDS})|{_ENDS})[\x00-\x20]*+)*+",
    re.DOTALL,
)
_PAIRS = re.compile(rf'({_KEY})(?:=(?:({_QUOTED})|([^\x00-\x20="]*+)))?', re.DOTALL)
_last: tuple[str, tuple[list[tuple[str, str]], bool]] = ("", ([], True))
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "'": "'", "b": "\b", "f": "\f", "n": "\n"}
_ESCAPES |= {"r": "\r", "t": "\t"}
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_KEY_DROPPED = re.compile(r'[\x00-\x20="\x7f\ufffd]')
_NEEDS_QUOTES = re.compile(r'[\x00-\x20="\x7f\ufffd]')
_QUOTE_ESCAPED = re.compile(r'[\x00-\x1f"\\\x7f\ufffd]')
_QUOTE_NAMED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_QUOTE_NAMED["\ufffd"] = "\\ufffd"


def scan_pairs(line: str) -> tuple[list[tuple[str, str]], bool]:
    """The pairs read before the end of ``line`` or its first error; True when no error."""
    global _last
    last_line, last_result = _last
    if last_line is line:
        return last_result
    result = _scan_valid(line) if "\ufffd" not in line else None
    if result is None:
        result = _scan_stepwise(line)
    _last = (line, result)
    return result


def _scan_valid(line: str) -> tuple[list[tuple[str, str]], bool] | None:
    """The pairs of a line without errors, read in one pass; None for any other line."""
    if _VALID.fullmatch(line) is None:
        return None
    pairs: list[tuple[str, str]] = []
    for key, quoted, plain in _PAIRS.findall(line):
        value = plain
        if quoted:
            unquoted = unquote(quoted[1:-1]) if "\\" in quoted else quoted[1:-1]
            if unquoted is None:
                return None
            value = unquoted
        pairs.append((key, value))
    return pairs, True


def _scan_stepwise(line: str) -> tuple[list[tuple[str, str]], bool]:
    """``scan_pairs`` pair by pair, stopping at the first error."""
    pairs: list[tuple[str, str]] = []
    pos = _BLANKS.match(line).end()  # type: ignore[union-attr]
    size = len(line)
    while pos < size:
        match = _PAIR.match(line, pos)
        if match is None:  # a ``"`` or ``=`` where a key should start
            return pairs, False
        key, _, quoted, closing, plain = match.groups()
        end = match.end()
        if "\ufffd" in key:
            return pairs, False
        if quoted is not None:
            if closing is None:
                return pairs, False
            value = unquote(quoted) if "\\" in quoted else quoted
            if value is None:
                return pairs, False
        else:
            if end < size and line[end] > " ":  # a ``"`` after a key, ``=``/``"`` in a value
                return pairs, False
            value = plain or ""
        pairs.append((key, value))
        pos = _BLANKS.match(line, end).end()  # type: ignore[union-attr]
    return pairs, True


def unquote(text: str) -> str | None:
    """The content of a quoted logfmt value unescaped; None when an escape is invalid."""
    out: list[str] = []
    pos, size = 0, len(text)
    while pos < size:
        slash = text.find("\\", pos)
        if slash < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:slash])
        if slash + 1 >= size:
            return None
        kind = text[slash + 1]
        if kind != "u":
            named = _ESCAPES.get(kind)
            if named is None:
                return None
            out.append(named)
            pos = slash + 2
            continue
        code = _hex4(text, slash)
        if code is None:
            return None
        pos = slash + 6
        if 0xD800 <= code < 0xE000:
            low = _hex4(text, pos)
            if code < 0xDC00 and low is not None and 0xDC00 <= low < 0xE000:
                out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                pos += 6
                continue
            code = 0xFFFD
        out.append(chr(code))
    return "".join(out)


def _hex4(text: str, slash: int) -> int | None:
    """The value of ``\\uXXXX`` at ``slash``, None when it is not one."""
    if text[slash : slash + 2] != "\\u" or not _HEX4.fullmatch(text, slash + 2, slash + 6):
        return None
    return int(text[slash + 2 : slash + 6], 16)


def encode_pair(key: str, value: str) -> str | None:
    """``key=value`` as go-logfmt writes it; None when no valid key character remains."""
    key = _KEY_DROPPED.sub("", key)
    if not key:
        return None
    if _NEEDS_QUOTES.search(value):
        value = '"' + _QUOTE_ESCAPED.sub(_escape_one, value) + '"'
    return f"{key}={value}"


def _escape_one(match: re.Match[str]) -> str:
    char = match.group()
    return _QUOTE_NAMED.get(char) or f"\\u{ord(char):04x}"

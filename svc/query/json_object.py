"""How the reference walks a JSON object line for ``| json``: fields and the error.

The reference reads a line with its JSON library's ``ObjectEach`` (a fork of
buger/jsonparser), which stops at the first problem and reports one of a few messages,
keeping the fields met before it. Its rules, restated from the source:

- Leading whitespace is skipped; anything but ``{`` (an empty line too) is
  ``Value looks like object, but can't find closing '}' symbol``.
- After ``{`` nothing at all: ``Malformed JSON error``; ``}``: an empty object.
- A member must start with ``"`` (else the object message); a key without its closing
  quote, or a missing ``:``, is ``Malformed JSON error``; a key with a bad escape is
  ``Encountered an invalid escape sequence in a string``.
- A value: a string needs its closing quote (``Value is string, but can't find closing
  '"' symbol``), an array or object its closing bracket (counted, strings skipped: the
  array or object message); anything else runs to a space, ``,``, ``}`` or ``]`` and must
  be ``true``, ``false``, ``null`` or start with a digit or ``-`` (a number as written,
  unchecked): else ``Unknown value type``.
- After a value: nothing more is ``Value is array, but can't find closing ']' symbol``
  (so a truncated object names an array); ``}`` ends the object, whatever follows it;
  ``,`` goes on (``{"a":1,}`` is fine); anything else is the object message.
- Objects in values are walked the same way, their errors ending the line's walk.

Fields are what ``| json`` sets: strings unescaped (a bad escape or a lone surrogate
gives ``""``; U+FFFD becomes a space), numbers as written, booleans; nulls and arrays
skipped; nested keys joined with ``_``, each part trimmed and sanitised (a first part
starting with a digit gets ``_`` in front), empty parts left out.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gocompat.spaces import trim_space
from logql_to_sql import sanitize

__all__ = ["ARRAY", "OBJECT", "field_name", "path_value", "unescape", "walk_object"]

OBJECT = "Value looks like object, but can't find closing '}' symbol"
ARRAY = "Value is array, but can't find closing ']' symbol"
STRING = "Value is string, but can't find closing '\"' symbol"
MALFORMED = "Malformed JSON error"
UNKNOWN = "Unknown value type"
ESCAPE = "Encountered an invalid escape sequence in a string"

_SPACE = " \n\r\t"
_TOKEN_END = frozenset(" \n\r\t,}]")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")

Fields = list[tuple[str, str]]
_sanitized = lru_cache(maxsize=4096)(sanitize)


class _Stop(Exception):
    """The walk stopped with the reference's message."""


def _next_token(data: str, index: int) -> int:
    while index < len(data):
        if data[index] not in _SPACE:
            return index
        index += 1
    return -1


def _string_end(data: str, index: int) -> tuple[int, bool]:
    """Index after the closing quote of a string whose body starts at ``index``, and
    whether it has escapes; -1 without one. A quote counts as closing unless an odd
    number of backslashes precede it."""
    escaped = False
    position = index
    while position < len(data):
        char = data[position]
        if char == '"':
            if not escaped:
                return position + 1, False
            slashes, back = 0, position - 1
            while back >= index and data[back] == "\\":
                slashes, back = slashes + 1, back - 1
            if slashes % 2 == 0:
                return position + 1, True
        elif char == "\\":
            escaped = True
        position += 1
    return -1, escaped


def _block_end(data: str, index: int, opening: str, closing: str) -> int:
    level = 0
    while index < len(data):
        char = data[index]
        if char == '"':
            end, _ = _string_end(data, index + 1)
            if end == -1:
                return -1
            index = end - 1
        elif char == opening:
            level += 1
        elif char == closing:
            level -= 1
            if level == 0:
                return index + 1
        index += 1
    return -1


def unescape(text: str) -> str | None:
    """The string ``text`` as the JSON library unescapes it; None on a bad escape (a
    surrogate must come in a valid pair)."""
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "\\":
            out.append(char)
            index += 1
            continue
        kind = text[index + 1 : index + 2]
        if kind in _SIMPLE:
            out.append(_SIMPLE[kind])
            index += 2
            continue
        if kind != "u" or not _HEX4.fullmatch(text, index + 2, index + 6):
            return None
        code = int(text[index + 2 : index + 6], 16)
        index += 6
        if 0xD800 <= code <= 0xDFFF:
            if text[index : index + 2] != "\\u" or not _HEX4.fullmatch(text, index + 2, index + 6):
                return None
            low = int(text[index + 2 : index + 6], 16)
            if not 0xDC00 <= low <= 0xDFFF or code > 0xDBFF:
                return None
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            index += 6
        out.append(chr(code))
    return "".join(out)


def _value(data: str, index: int) -> tuple[str, str, int]:
    """The value starting at ``index``: (kind, text, end). Raises ``_Stop``."""
    char = data[index]
    if char == '"':
        end, _ = _string_end(data, index + 1)
        if end == -1:
            raise _Stop(STRING)
        return "string", data[index + 1 : end - 1], end
    if char in "[{":
        end = _block_end(data, index, char, "]" if char == "[" else "}")
        if end == -1:
            raise _Stop(ARRAY if char == "[" else OBJECT)
        return ("array" if char == "[" else "object"), data[index:end], end
    end = index
    while end < len(data) and data[end] not in _TOKEN_END:
        end += 1
    text = data[index:end]
    if char in "tf":
        if text not in ("true", "false"):
            raise _Stop(UNKNOWN)
        return "boolean", text, end
    if char in "un":
        if text != "null":
            raise _Stop(UNKNOWN)
        return "null", text, end
    if char in "0123456789-":
        return "number", text, end
    raise _Stop(UNKNOWN)


def field_name(prefix: str, key: str) -> str:
    """The label name of ``key`` inside the object named ``prefix`` (``""`` at the top):
    each part trimmed and sanitised, blank parts left out, a leading digit of the whole
    name prefixed with ``_``."""
    key = trim_space(key)
    if not key:
        return prefix
    if not prefix:
        return _sanitized(key)
    return prefix + "_" + _sanitized("x" + key)[1:]


def _members(data: str, prefix: str, out: Fields) -> None:
    """Walk the object in ``data``; fields go to ``out``. Raises ``_Stop``."""
    index = _next_token(data, 0)
    if index == -1 or data[index] != "{":
        raise _Stop(OBJECT)
    index = _next_token(data, index + 1)
    if index == -1:
        raise _Stop(MALFORMED)
    if data[index] == "}":
        return
    while index < len(data):
        if data[index] == "}":
            return
        if data[index] != '"':
            raise _Stop(OBJECT)
        end, escaped = _string_end(data, index + 1)
        if end == -1:
            raise _Stop(MALFORMED)
        key: str | None = data[index + 1 : end - 1]
        if escaped:
            key = unescape(key)  # type: ignore[arg-type]
            if key is None:
                raise _Stop(ESCAPE)
        index = _next_token(data, end)
        if index == -1 or data[index] != ":":
            raise _Stop(MALFORMED)
        index = _next_token(data, index + 1)
        if index == -1:
            raise _Stop(MALFORMED)
        kind, text, index = _value(data, index)
        _use(key, kind, text, prefix, out)  # type: ignore[arg-type]
        index = _next_token(data, index)
        if index == -1:
            raise _Stop(ARRAY)
        if data[index] == "}":
            return
        if data[index] != ",":
            raise _Stop(OBJECT)
        index = _next_token(data, index + 1)
        if index == -1:
            raise _Stop(ARRAY)
    raise _Stop(OBJECT)


def _use(key: str, kind: str, text: str, prefix: str, out: Fields) -> None:
    name = field_name(prefix, key)
    if kind == "object":
        _members(text, name, out)
        return
    if not name or kind in ("array", "null"):
        return
    if kind == "string":
        text = (unescape(text) or "").replace("\ufffd", " ")
    out.append((name, text))


def walk_object(line: str) -> tuple[Fields, str | None]:
    """The fields ``| json`` reads from ``line`` and the error that stopped it (None when
    the walk reached the object's end)."""
    out: Fields = []
    try:
        _members(line, "", out)
    except _Stop as stop:
        return out, str(stop)
    except RecursionError:
        return out, OBJECT
    return out, None


_PATH_STEP = re.compile(r'\."((?:[^"\\]|\\.)*)"|\[(\d+)\]')


def _path_steps(path: str) -> list[str | int]:
    """The steps of a compiled path (``$."a"[0]."b"``)."""
    steps: list[str | int] = []
    for match in _PATH_STEP.finditer(path, 1):
        key, index = match.groups()
        steps.append(int(index) if index is not None else re.sub(r"\\(.)", r"\1", key))
    return steps


def _find(data: str, steps: list[str | int]) -> tuple[str, str] | None:
    """(kind, raw text) of the value at ``steps`` inside the object or array ``data``."""
    if not steps:
        return None
    step, rest = steps[0], steps[1:]
    index = _next_token(data, 0)
    if index == -1:
        return None
    opening = data[index]
    if (opening == "{") != isinstance(step, str) or opening not in "{[":
        return None
    position, count = _next_token(data, index + 1), 0
    while position != -1 and data[position] not in "}]":
        key = None
        if opening == "{":
            if data[position] != '"':
                return None
            end, escaped = _string_end(data, position + 1)
            if end == -1:
                return None
            key = data[position + 1 : end - 1]
            key = (unescape(key) if escaped else key) or ""
            position = _next_token(data, end)
            if position == -1 or data[position] != ":":
                return None
            position = _next_token(data, position + 1)
            if position == -1:
                return None
        try:
            kind, text, position = _value(data, position)
        except _Stop:
            return None
        if (key if opening == "{" else count) == step:
            if not rest:
                return kind, text
            return _find(text, rest) if kind in ("object", "array") else None
        count += 1
        position = _next_token(data, position)
        if position == -1 or data[position] != ",":
            return None
        position = _next_token(data, position + 1)
    return None


def path_value(line: str, path: str) -> str | None:
    """What ``| json x="path"`` sets from ``line`` for a compiled ``path``: a string
    unescaped, a number or boolean as written, ``""`` for null, an object's text as
    written, an array's text with its escapes decoded; None when the path is missing."""
    found = _find(line, _path_steps(path))
    if found is None:
        return None
    kind, text = found
    if kind == "null":
        return ""
    if kind in ("string", "array"):
        return (unescape(text) or "").replace("\ufffd", " ")
    return text

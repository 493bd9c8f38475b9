"""Lenient JSON lookups that answer as the reference's byte scanner (buger/jsonparser) does.

The reference never decodes a whole line to find a field: it scans bytes, skipping what
it does not need, so it finds fields in lines that are not valid JSON and takes the
first of duplicate keys. String values come back as written, escapes and all.

``top_level_values`` scans an object's first level for several keys at once (the lookup
``Get(line, key)`` makes, key by key). ``find_string_field`` walks an object's members
in order, into nested objects up to a depth, for the first string member with one of
some names, and stops at the first malformed member (``ObjectEach``).

>>> top_level_values('{"a":{"msg":1},"msg":"hi \\\\"x\\\\"","msg":"no"}', ("msg",))
{'msg': ('hi \\\\"x\\\\"', True)}
>>> find_string_field('{"ctx":{"level":"warn"}}', frozenset({"level"}), 2)
'warn'
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["find_string_field", "top_level_values"]

_WS = re.compile(r"[ \t\n\r]*")
# What the key scan stops at: a string (with the ``:`` that makes it a key), or ``{``,
# ``}``, ``[`` and ``:``. Everything else is stepped over, as the reference does.
_KEY_SCAN = re.compile(r'"((?:[^"\\]|\\.)*)(")?(?:[ \t\n\r]*(:))?|[{}\[:]', re.DOTALL)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)(")?', re.DOTALL)
_BLOCK = {
    "{": re.compile(r'"(?:[^"\\]|\\.)*(")?|[{}]', re.DOTALL),
    "[": re.compile(r'"(?:[^"\\]|\\.)*(")?|[\[\]]', re.DOTALL),
}
_SCALAR = re.compile(r"[^ \n\r\t,}\]]*")
_KEY_DECODER = json.JSONDecoder(strict=False)


class _Members(list[tuple[str, Any]]):
    """An object's members in order, duplicates kept."""


def _no_constant(name: str) -> Any:
    raise ValueError(name)


_DECODER = json.JSONDecoder(object_pairs_hook=_Members, parse_constant=_no_constant)
# The last line decoded: a line's level and its message are looked up one after the
# other, and a line is decoded once for both.
_last: tuple[str, _Members | None] = ("", None)


def _members(text: str) -> _Members | None:
    """The members of a valid JSON object whose strings hold no escapes; else None.

    For such a line, decoded strings are the text as written, so the decoder's answer
    is the scanner's; any other line takes the scanner's path.
    """
    global _last
    last_text, last_members = _last
    if last_text is text:
        return last_members
    members = None
    if "\\" not in text:
        try:
            decoded = _DECODER.decode(text)
        except ValueError:
            decoded = None
        if isinstance(decoded, _Members):
            members = decoded
    _last = (text, members)
    return members


def _block_end(text: str, start: int) -> int:
    """Index after the ``}``/``]`` closing the block opened at ``start``; -1 if none."""
    opening = text[start]
    depth = 0
    for match in _BLOCK[opening].finditer(text, start):
        token = match.group()
        if token[0] == '"':
            if match.group(1) is None:
                return -1
        elif token == opening:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return match.end()
    return -1


def _key(raw: str) -> str | None:
    """A key's text: unescaped when it holds a backslash; None when that fails."""
    if "\\" not in raw:
        return raw
    try:
        decoded = _KEY_DECODER.decode(f'"{raw}"')
    except ValueError:
        return None
    return decoded if isinstance(decoded, str) else None


def _value(text: str, pos: int) -> tuple[str, bool, int] | None:
    """The value at ``pos`` (blanks first skipped): raw text, whether it is a string, end.

    None when it is malformed: an unterminated string or block, or a bare word other than
    a number, ``true``, ``false`` and ``null``.
    """
    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
    if pos >= len(text):
        return None
    first = text[pos]
    if first == '"':
        match = _STRING.match(text, pos)
        if match is None or match.group(2) is None:
            return None
        return match.group(1), True, match.end()
    if first in "{[":
        end = _block_end(text, pos)
        return None if end < 0 else (text[pos:end], False, end)
    end = _SCALAR.match(text, pos).end()  # type: ignore[union-attr]
    word = text[pos:end]
    if first in "tf":
        ok = word in ("true", "false")
    elif first in "un":
        ok = word == "null"
    else:
        ok = first in "-0123456789"
    return (word, False, end) if ok else None


def top_level_values(text: str, names: tuple[str, ...]) -> dict[str, tuple[str, bool]]:
    """First occurrence of each of ``names`` among the keys of the top-level object.

    Each found name maps to its value's raw text (a string without its quotes) and
    whether the value is a string. A scan that meets malformed input stops there.
    """
    members = _members(text)
    if members is not None:
        return _top_level_members(members, names)
    found: dict[str, tuple[str, bool]] = {}
    wanted = set(names)
    level = 0
    # Before the first key the scan may enter an object; afterwards nested ones are
    # skipped whole, since only the first level is searched.
    entering = True
    pos = 0
    while wanted:
        match = _KEY_SCAN.search(text, pos)
        if match is None:
            break
        token = match.group()
        pos = match.end()
        if token[0] == '"':
            if match.group(2) is None:
                break
            if match.group(3) is None:
                continue
            if level != 1:
                break
            key = _key(match.group(1))
            if key is None:
                break
            if key in wanted:
                wanted.discard(key)
                value = _value(text, pos)
                if value is not None:
                    found[key] = value[:2]
            entering = False
        elif token == "{":
            if entering:
                level += 1
            else:
                pos = _block_end(text, match.start())
                if pos < 0:
                    break
        elif token == "}":
            level -= 1
        elif token == "[":
            pos = _block_end(text, match.start())
            if pos < 0:
                break
        else:  # a ``:`` that follows no key
            break
    return found


def find_string_field(text: str, names: frozenset[str], max_depth: int) -> str | None:
    """Raw text of the first string member named in ``names``, objects walked in order.

    Nested objects are entered while their depth is below ``max_depth`` (0 or less: no
    limit); the walk ends at the first malformed member.
    """
    members = _members(text)
    if members is not None:
        return _walk_members(members, 0, names, max_depth)
    found, _ = _walk_object(text, 0, 0, names, max_depth)
    return found


def _top_level_members(members: _Members, names: tuple[str, ...]) -> dict[str, tuple[str, bool]]:
    found: dict[str, tuple[str, bool]] = {}
    for key, value in members:
        if key in names and key not in found:
            found[key] = (value, True) if isinstance(value, str) else ("", False)
    return found


def _walk_members(
    members: _Members, depth: int, names: frozenset[str], max_depth: int
) -> str | None:
    if 0 < max_depth <= depth:
        return None
    for key, value in members:
        if isinstance(value, str):
            if key in names:
                return value
        elif isinstance(value, _Members):
            found = _walk_members(value, depth + 1, names, max_depth)
            if found is not None:
                return found
    return None


def _walk_object(
    text: str, pos: int, depth: int, names: frozenset[str], max_depth: int
) -> tuple[str | None, bool]:
    """Walk the object at ``pos``: (found value, whether the walk may go on)."""
    if 0 < max_depth <= depth:
        return None, True
    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
    if pos >= len(text) or text[pos] != "{":
        return None, False
    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
    while True:
        if pos >= len(text):
            return None, False
        if text[pos] == "}":
            return None, True
        key_match = _STRING.match(text, pos)
        if key_match is None or key_match.group(2) is None:
            return None, False
        key = _key(key_match.group(1))
        pos = _WS.match(text, key_match.end()).end()  # type: ignore[union-attr]
        if key is None or pos >= len(text) or text[pos] != ":":
            return None, False
        value = _value(text, pos + 1)
        if value is None:
            return None, False
        raw, is_string, end = value
        if is_string and key in names:
            return raw, False
        if raw[:1] == "{" and not is_string:
            found, go_on = _walk_object(raw, 0, depth + 1, names, max_depth)
            if found is not None or not go_on:
                return found, False
        pos = _WS.match(text, end).end()  # type: ignore[union-attr]
        if pos >= len(text):
            return None, False
        if text[pos] == "}":
            return None, True
        if text[pos] != ",":
            return None, False
        pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]

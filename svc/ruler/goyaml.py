"""YAML text as the reference's encoder (``go.yaml.in/yaml/v3``, ``Marshal``) writes it.

Only what rule groups need: mappings (in the given key order), sequences, strings and
integers. The layout follows yaml.v3: 4-space indentation, sequences indented under
their key, the first key of a mapping in a sequence on the ``- `` line, empty
collections in flow style (``[]``, ``{}``), no line wrapping. Strings are plain when
that reads back as the same string, single-quoted when a plain scalar is not allowed
there, double-quoted when single quotes are not allowed either (or when the text would
read back as another type), and literal blocks (``|-``) when they hold a newline::

    >>> print(dump({"name": "g", "rules": [{"alert": "A", "labels": {"a": "yes"}}]}), end="")
    name: g
    rules:
        - alert: A
          labels:
            a: "yes"
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any, Final

from gocompat.strconv import parse_float, parse_int

__all__ = ["dump"]

_BEST_INDENT: Final = 4
_NON_STRINGS: Final = frozenset(
    [
        *("true", "True", "TRUE", "false", "False", "FALSE", "", "~", "null", "Null", "NULL"),
        *(".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"),
        *("-.inf", "-.Inf", "-.INF", "<<"),
    ]
)
_OLD_BOOLS: Final = frozenset(
    [
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "on",
        "On",
        "ON",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "off",
        "Off",
        "OFF",
    ]
)
_BASE60_FLOAT: Final = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_YAML_FLOAT: Final = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_TIMESTAMP: Final = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:[Tt ]\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})?)?"
)
_FIRST_INDICATORS: Final = frozenset("#,[]{}&*!|>'\"%@`")
_ESCAPES: Final = {
    "\0": "0",
    "\a": "a",
    "\b": "b",
    "\t": "t",
    "\n": "n",
    "\v": "v",
    "\f": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}
_BREAKS: Final = frozenset("\r\n\x85\u2028\u2029")


def dump(data: dict[str, Any]) -> str:
    """The YAML document of a mapping, ending with a newline."""
    out: list[str] = []
    _Writer(out).mapping(data, indent=0, in_sequence=False)
    return "".join(out)


class _Writer:
    def __init__(self, out: list[str]) -> None:
        self.out = out

    def mapping(self, data: dict[str, Any], *, indent: int, in_sequence: bool) -> None:
        first = True
        for key, value in data.items():
            if not (first and in_sequence):
                self.out.append(" " * indent)
            first = False
            self.out.append(_scalar(str(key), indent, simple_key=True) + ":")
            self.value(value, indent)

    def value(self, value: Any, indent: int) -> None:
        """A mapping value after ``key:``, the key's mapping being at ``indent``."""
        nested = _aligned(indent)
        if isinstance(value, dict) and value:
            self.out.append("\n")
            self.mapping(value, indent=nested, in_sequence=False)
        elif isinstance(value, list) and value:
            self.out.append("\n")
            self.sequence(value, indent=nested)
        elif isinstance(value, dict):
            self.out.append(" {}\n")
        elif isinstance(value, list):
            self.out.append(" []\n")
        else:
            self.out.append(" " + _node(value, nested, indent) + "\n")

    def sequence(self, items: list[Any], *, indent: int) -> None:
        for item in items:
            self.out.append(" " * indent + "- ")
            if isinstance(item, dict) and item:
                self.mapping(item, indent=indent + 2, in_sequence=True)
            else:
                self.out.append(_node(item, indent + 2, indent) + "\n")


def _aligned(indent: int) -> int:
    """yaml.v3's indentation of a block nested in a mapping at ``indent``."""
    return _BEST_INDENT * ((indent + _BEST_INDENT) // _BEST_INDENT)


def _node(value: Any, indent: int, parent_indent: int) -> str:
    """A scalar value: integers and booleans as such, anything else as a string.

    ``indent`` is where a block scalar's lines go, ``parent_indent`` the indentation of
    the collection holding the value.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _scalar(str(value), indent, indent - parent_indent)


def _scalar(
    text: str, content_indent: int, indent_hint: int = _BEST_INDENT, *, simple_key: bool = False
) -> str:
    """``text`` as yaml.v3 writes a string scalar; blocks are indented by ``content_indent``.

    ``indent_hint`` is the block's indentation relative to its parent collection, written
    when the text starts with a space or a line break.
    """
    if any(ch in _BREAKS for ch in text if ch != "\n"):
        # yaml.v3 would fold these breaks into spaces on reading back: quote them instead
        return _double_quoted(text)
    if "\n" in text:
        style = "literal"
    elif _plain_resolves_to_string(text):
        style = "plain"
    else:
        style = "double"
    info = _analyze(text)
    if simple_key and info.multiline:
        style = "double"
    if style == "plain" and (not info.block_plain or (not text and simple_key)):
        style = "single"
    if style == "single" and not info.single_allowed:
        style = "double"
    if style == "literal" and (not info.block_allowed or simple_key):
        style = "double"
    if style == "plain":
        return text
    if style == "single":
        return "'" + text.replace("'", "''") + "'"
    if style == "double":
        return _double_quoted(text)
    return _literal(text, content_indent, indent_hint)


def _plain_resolves_to_string(text: str) -> bool:
    """Whether a plain scalar of ``text`` reads back as this string (yaml.v3 ``resolve``)."""
    if text in _NON_STRINGS or text in _OLD_BOOLS or _BASE60_FLOAT.fullmatch(text):
        return False
    first = text[0]
    if first == ".":
        return parse_float(text) is None
    if not (first.isdigit() and first.isascii()) and first not in "+-":
        return True
    if _is_timestamp(text):
        return False
    plain = text.replace("_", "")
    if parse_int(plain) is not None or _parse_uint(plain) is not None:
        return False
    if _YAML_FLOAT.fullmatch(plain) and parse_float(plain) is not None:
        return False
    for prefix, base in (("0b", 2), ("-0b", 2), ("0o", 8), ("-0o", 8)):
        if plain.startswith(prefix):
            digits = plain[len(prefix) :]
            try:
                int(digits, base)
            except ValueError:
                return True
            return digits.isascii() and digits.isalnum()
    return True


def _parse_uint(text: str) -> int | None:
    if text.startswith(("-", "+")):
        return None
    value = parse_int(text, bits=65)
    return value if value is not None and 0 <= value < 1 << 64 else None


def _is_timestamp(text: str) -> bool:
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return False
    try:
        datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class _ScalarInfo:
    multiline: bool
    block_plain: bool
    single_allowed: bool
    block_allowed: bool


def _printable(ch: str) -> bool:
    code = ord(ch)
    return (
        ch == "\n"
        or 0x20 <= code <= 0x7E
        or code == 0x85
        or (0xA0 <= code <= 0xD7FF)
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or 0x10000 <= code <= 0x10FFFF
    )


def _analyze(text: str) -> _ScalarInfo:
    """libyaml's ``analyze_scalar``: which styles can hold ``text`` (block context)."""
    if not text:
        return _ScalarInfo(False, True, True, False)
    block_indicators = text.startswith(("---", "..."))
    line_breaks = special = tabs = False
    leading_space = leading_break = trailing_space = trailing_break = False
    break_space = space_break = previous_space = previous_break = False
    preceded_by_whitespace = True
    for i, ch in enumerate(text):
        followed_by_whitespace = i + 1 >= len(text) or text[i + 1] in " \t\r\n\x85\u2028\u2029"
        if i == 0:
            if ch in _FIRST_INDICATORS or (ch in "?:-" and followed_by_whitespace):
                block_indicators = True
        elif (ch == ":" and followed_by_whitespace) or (ch == "#" and preceded_by_whitespace):
            block_indicators = True
        if ch == "\t":
            tabs = True
        elif not _printable(ch):
            special = True
        if ch == " ":
            leading_space |= i == 0
            trailing_space |= i == len(text) - 1
            break_space |= previous_break
            previous_space, previous_break = True, False
        elif ch in _BREAKS:
            line_breaks = True
            leading_break |= i == 0
            trailing_break |= i == len(text) - 1
            space_break |= previous_space
            previous_space, previous_break = False, True
        else:
            previous_space = previous_break = False
        preceded_by_whitespace = ch in " \t\r\n\x85\u2028\u2029"
    block_plain = not (
        leading_space
        or leading_break
        or trailing_space
        or trailing_break
        or break_space
        or space_break
        or tabs
        or special
        or line_breaks
        or block_indicators
    )
    single_allowed = not (break_space or space_break or tabs or special)
    block_allowed = not (trailing_space or space_break or special)
    return _ScalarInfo(line_breaks, block_plain, single_allowed, block_allowed)


def _double_quoted(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES and (not _printable(ch) or ch in '"\\' or ch in _BREAKS):
            out.append("\\" + _ESCAPES[ch])
        elif not _printable(ch) or code == 0xFEFF:
            if code <= 0xFF:
                out.append(f"\\x{code:02X}")
            elif code <= 0xFFFF:
                out.append(f"\\u{code:04X}")
            else:
                out.append(f"\\U{code:08X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _literal(text: str, indent: int, indent_hint: int) -> str:
    # yaml.v3 always writes its best indentation (4) as the hint, which misplaces the
    # lines of a block nested in a sequence item's mapping (the hint is relative to the
    # parent, at 6, while the lines are at 8): it could not read its own output back.
    # The hint here is the lines' real offset, the same 4 wherever yaml.v3 is right.
    hints = str(indent_hint) if text[0] in " \n" else ""
    if not text.endswith("\n"):
        hints += "-"
    elif text == "\n" or text.endswith("\n\n"):
        hints += "+"
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    body = "\n".join((" " * indent + line) if line else "" for line in lines)
    return "|" + hints + "\n" + body

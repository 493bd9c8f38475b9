"""Loki's and sprig's string functions: case, trimming, padding, regex, URL, base64, JSON."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Final

from gocompat import regex as goregex
from gocompat.spaces import GO_SPACES, trim_space
from gocompat.template.errors import GoError
from gocompat.template.funcspec import Func
from gocompat.template.limits import reserve
from gocompat.template.urls import query_escape, query_unescape
from gocompat.template.values import NIL, LabelMap

__all__ = ["TEXT_FUNCTIONS", "go_lower", "go_upper"]


def _map_runes(text: str, mapper: str) -> str:
    out = []
    for ch in text:
        mapped = getattr(ch, mapper)()
        out.append(mapped if len(mapped) == 1 else ch)
    return "".join(out)


def go_upper(text: str) -> str:
    """``strings.ToUpper`` (simple per-rune mapping, so ``ß`` stays)."""
    return text.upper() if text.isascii() else _map_runes(text, "upper")


def go_lower(text: str) -> str:
    """``strings.ToLower``."""
    return text.lower() if text.isascii() else _map_runes(text, "lower")


def _is_separator(ch: str) -> bool:
    if ch.isascii():
        return not (ch.isalnum() or ch == "_")
    if ch.isalpha() or ch.isdecimal():
        return False
    return ch in GO_SPACES


def _title(text: str) -> str:
    out = []
    prev = " "
    for ch in text:
        if _is_separator(prev):
            titled = ch.title()
            out.append(titled if len(titled) == 1 else ch)
        else:
            out.append(ch)
        prev = ch
    return "".join(out)


def _replaced_size(text: str, old: str, new: str, count: int) -> int:
    """Length of ``text`` with ``count`` (-1: all) occurrences of ``old`` replaced."""
    found = len(text) + 1 if old == "" else text.count(old)
    if count >= 0:
        found = min(found, count)
    return len(text) + found * (len(new) - len(old))


def _replace_n(text: str, old: str, new: str, count: int) -> str:
    if len(new) > len(old):
        reserve(_replaced_size(text, old, new, count))
    return text.replace(old, new) if count < 0 else text.replace(old, new, count)


def _replace_all(old: str, new: str, text: str) -> str:
    return _replace_n(text, old, new, -1)


def _repeat(count: int, text: str) -> str:
    if count < 0:
        raise GoError("strings: negative Repeat count")
    reserve(count * len(text))
    return text * count


def _indent(spaces: int, text: str) -> str:
    if spaces > 0:
        reserve(len(text) + spaces * (text.count("\n") + 1))
    pad = _repeat(spaces, " ")
    return pad + text.replace("\n", "\n" + pad)


def _bytes_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _trunc(count: int, text: str) -> str:
    data = text.encode()
    if count < 0 and len(data) + count > 0:
        return _bytes_text(data[len(data) + count :])
    if count >= 0 and len(data) > count:
        return _bytes_text(data[:count])
    return text


def _slice_error(low: int | None, high: int | None, size: int) -> GoError:
    if low is None:
        return GoError(f"runtime error: slice bounds out of range [:{high}] with length {size}")
    if high is None:
        return GoError(f"runtime error: slice bounds out of range [{low}:{size}]")
    return GoError(f"runtime error: slice bounds out of range [{low}:{high}]")


def _substr(start: int, end: int, text: str) -> str:
    data = text.encode()
    size = len(data)
    if start < 0:
        if end < 0 or end > size:
            raise _slice_error(None, end, size)
        return _bytes_text(data[:end])
    if end < 0 or end > size:
        if start > size:
            raise _slice_error(start, None, size)
        return _bytes_text(data[start:])
    if start > end:
        raise _slice_error(start, end, size)
    return _bytes_text(data[start:end])


def _align(count: int, text: str, right: bool) -> str:
    if count < 0 or count == len(text):
        return text
    pad = count - len(text)
    if pad > 0:
        reserve(count)
        return " " * pad + text if right else text + " " * pad
    return text[len(text) - count :] if right else text[:count]


def _is_empty(value: Any) -> bool:
    if value is None or value is NIL:
        return True
    if isinstance(value, (str, list, dict)):
        return len(value) == 0
    if isinstance(value, LabelMap):
        return len(value.data) == 0
    if isinstance(value, (bool, int, float, complex)):
        return not value
    return False


def _default(fallback: Any, *given: Any) -> Any:
    if not given or _is_empty(given[0]):
        return fallback
    return given[0]


_B64: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _b64_error(text: str) -> int | None:
    quantum = 0
    padding = False
    for index, ch in enumerate(text):
        if ch in "\r\n":
            continue
        if ch in _B64 and not padding:
            quantum = (quantum + 1) % 4
        elif ch == "=" and (quantum >= 2 or padding):
            padding = True
            quantum = (quantum + 1) % 4
        else:
            return index
    return len(text) if quantum else None


def _b64dec(text: str) -> str:
    padded = text + "=" * (-len(text) % 4)
    position = _b64_error(padded)
    if position is not None:
        return f"illegal base64 data at input byte {position}"
    try:
        return _bytes_text(base64.b64decode(padded.replace("\r", "").replace("\n", "")))
    except binascii.Error:
        return "illegal base64 data at input byte 0"


def _b64enc(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")


def _json_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(text)
    return value


def _reject_constant(text: str) -> Any:
    raise ValueError(text)


def _nil_inside(value: Any) -> Any:
    if value is None:
        return NIL
    if type(value) is dict:
        return {k: _nil_inside(v) for k, v in value.items()}
    if type(value) is list:
        return [_nil_inside(v) for v in value]
    return value


def _from_json(text: str) -> Any:
    try:
        value = json.loads(
            text, parse_float=_json_float, parse_int=_json_float, parse_constant=_reject_constant
        )
    except (ValueError, RecursionError):
        return None
    return None if value is None else _nil_inside(value)


def _urldecode(text: str) -> str:
    return query_unescape(text)


def _regex_replace(regex: str, text: str, repl: str) -> str:
    return goregex.replace_all(regex, text, repl, literal=False)


def _regex_replace_literal(regex: str, text: str, repl: str) -> str:
    return goregex.replace_all(regex, text, repl, literal=True)


def _count(regex: str, text: str) -> int:
    return goregex.count_matches(regex, text)


def _f(fn: Any, *params: str, variadic: str | None = None) -> Func:
    return Func(fn, params, variadic)


S: Final = "string"
TEXT_FUNCTIONS: Final = {
    "ToLower": _f(go_lower, S),
    "ToUpper": _f(go_upper, S),
    "Replace": _f(_replace_n, S, S, S, "int"),
    "Trim": _f(lambda s, cut: s.strip(cut), S, S),
    "TrimLeft": _f(lambda s, cut: s.lstrip(cut), S, S),
    "TrimRight": _f(lambda s, cut: s.rstrip(cut), S, S),
    "TrimPrefix": _f(lambda s, p: s.removeprefix(p), S, S),
    "TrimSuffix": _f(lambda s, x: s.removesuffix(x), S, S),
    "TrimSpace": _f(trim_space, S),
    "lower": _f(go_lower, S),
    "upper": _f(go_upper, S),
    "title": _f(_title, S),
    "trim": _f(trim_space, S),
    "trimAll": _f(lambda cut, s: s.strip(cut), S, S),
    "trimPrefix": _f(lambda p, s: s.removeprefix(p), S, S),
    "trimSuffix": _f(lambda x, s: s.removesuffix(x), S, S),
    "replace": _f(_replace_all, S, S, S),
    "trunc": _f(_trunc, "int", S),
    "substr": _f(_substr, "int", "int", S),
    "alignLeft": _f(lambda n, s: _align(n, s, False), "int", S),
    "alignRight": _f(lambda n, s: _align(n, s, True), "int", S),
    "indent": _f(_indent, "int", S),
    "nindent": _f(lambda n, s: "\n" + _indent(n, s), "int", S),
    "repeat": _f(_repeat, "int", S),
    "contains": _f(lambda sub, s: sub in s, S, S),
    "hasPrefix": _f(lambda p, s: s.startswith(p), S, S),
    "hasSuffix": _f(lambda x, s: s.endswith(x), S, S),
    "default": _f(_default, "any", variadic="any"),
    "urlencode": _f(query_escape, S),
    "urldecode": _f(_urldecode, S),
    "b64enc": _f(_b64enc, S),
    "b64dec": _f(_b64dec, S),
    "regexReplaceAll": _f(_regex_replace, S, S, S),
    "regexReplaceAllLiteral": _f(_regex_replace_literal, S, S, S),
    "count": _f(_count, S, S),
    "fromJson": _f(_from_json, S),
}

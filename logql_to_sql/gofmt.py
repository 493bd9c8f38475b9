"""Go text conventions: ``strconv.Quote``, string unquoting and float formatting."""

from __future__ import annotations

import math

__all__ = ["go_format_f", "go_format_v", "go_quote", "go_unquote"]

_SIMPLE_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
}
_QUOTE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """Quote like Go's ``strconv.Quote``: printable runes kept, others escaped."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        esc = _QUOTE_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif 0xD800 <= ord(ch) < 0xE000:
            out.append("\\ufffd")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_unquote(body: str, quote: str) -> str:
    """Decode the escapes of a Go string body; raise ``ValueError`` on a bad escape."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        decoded, i = _unescape(body, i + 1, quote)
        out.append(decoded)
    return "".join(out)


def _unescape(body: str, i: int, quote: str) -> tuple[str, int]:
    ch = body[i] if i < len(body) else ""
    if ch in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[ch], i + 1
    if ch == quote:
        return ch, i + 1
    if ch in "01234567":
        digits = body[i : i + 3]
        if len(digits) == 3 and all(c in "01234567" for c in digits) and int(digits, 8) < 256:
            return chr(int(digits, 8)), i + 3
        raise ValueError("invalid char escape")
    size = {"x": 2, "u": 4, "U": 8}.get(ch, 0)
    digits = body[i + 1 : i + 1 + size]
    if size and len(digits) == size and all(c in "0123456789abcdefABCDEF" for c in digits):
        code = int(digits, 16)
        if ch == "x" or (code <= 0x10FFFF and not 0xD800 <= code < 0xE000):
            return chr(code), i + 1 + size
    raise ValueError("invalid char escape")


def _shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-tripping digits of ``abs(value)`` and its decimal exponent."""
    mant, _, exp_text = repr(abs(value)).partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    exp = int(exp_text or "0") + len(whole) - 1
    if not digits:
        return "0", 0
    exp -= len(whole + frac) - len((whole + frac).lstrip("0"))
    return digits.rstrip("0") or "0", exp


def go_format_v(value: float) -> str:
    """Format like Go's ``%v`` for float64 (``2``, ``0.5``, ``1e+06``, ``+Inf``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    digits, exp = _shortest_digits(value)
    if value == 0:
        return sign + "0"
    if exp < -4 or exp >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return sign + _fixed(digits, exp)


def _fixed(digits: str, exp: int) -> str:
    if exp < 0:
        return "0." + "0" * (-exp - 1) + digits
    if exp + 1 >= len(digits):
        return digits + "0" * (exp + 1 - len(digits))
    return digits[: exp + 1] + "." + digits[exp + 1 :]


def go_format_f(value: float) -> str:
    """Format like Go's ``strconv.FormatFloat(v, 'f', -1, 64)`` (no exponent)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, exp = _shortest_digits(value)
    return sign + _fixed(digits, exp)

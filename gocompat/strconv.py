"""Go's ``strconv``: quoting, unquoting, number parsing and float formatting."""

from __future__ import annotations

import math
import re
import struct
from decimal import Decimal
from typing import Final

__all__ = [
    "NumError",
    "UnquoteError",
    "format_float",
    "is_print",
    "parse_float",
    "parse_float_strict",
    "parse_int",
    "quote",
    "quote_rune",
    "shortest_digits",
    "unquote",
    "unquote_char",
]

_SIMPLE_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
}


def _escape_rune(ch: str, quote_char: str, ascii_only: bool) -> str:
    if ch == quote_char:
        return "\\" + ch
    if ch in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[ch]
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF:  # no rune in Go: what decoding it gives
        return "\\ufffd"
    if code < 0x80 and ch.isprintable():
        return ch
    if not ascii_only and code >= 0x80 and ch.isprintable():
        return ch
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def is_print(code: int) -> bool:
    """``strconv.IsPrint``: letters, marks, numbers, punctuation, symbols and ASCII space."""
    return 0 <= code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF and chr(code).isprintable()


def quote(text: str, *, ascii_only: bool = False) -> str:
    """``strconv.Quote`` (or ``QuoteToASCII``)."""
    return '"' + "".join(_escape_rune(ch, '"', ascii_only) for ch in text) + '"'


def quote_rune(code: int, *, ascii_only: bool = False) -> str:
    """``strconv.QuoteRune``; invalid code points print as U+FFFD."""
    if code < 0 or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        code = 0xFFFD
    return "'" + _escape_rune(chr(code), "'", ascii_only) + "'"


class UnquoteError(ValueError):
    """``strconv.ErrSyntax``: the literal is malformed."""

    def __init__(self) -> None:
        super().__init__("invalid syntax")


_OCTAL: Final = "01234567"
_HEX: Final = "0123456789abcdefABCDEF"
_UNESCAPE: Final = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "\\": 92}


def unquote_char(text: str, pos: int, quote_char: str) -> tuple[int, bool, int]:
    """Decode one (possibly escaped) character: (value, is_byte, next position)."""
    ch = text[pos]
    if ch == quote_char and quote_char in "'\"":
        raise UnquoteError
    if ch != "\\":
        return ord(ch), False, pos + 1
    if pos + 1 >= len(text):
        raise UnquoteError
    esc = text[pos + 1]
    if esc in _UNESCAPE:
        return _UNESCAPE[esc], False, pos + 2
    if esc in "xuU":
        size = {"x": 2, "u": 4, "U": 8}[esc]
        digits = text[pos + 2 : pos + 2 + size]
        if len(digits) < size or any(c not in _HEX for c in digits):
            raise UnquoteError
        value = int(digits, 16)
        if esc != "x" and (value > 0x10FFFF or 0xD800 <= value <= 0xDFFF):
            raise UnquoteError
        return value, esc == "x", pos + 2 + size
    if esc in _OCTAL:
        digits = text[pos + 1 : pos + 4]
        if len(digits) < 3 or any(c not in _OCTAL for c in digits) or int(digits, 8) > 255:
            raise UnquoteError
        return int(digits, 8), True, pos + 4
    if esc in "'\"" and esc == quote_char:
        return ord(esc), False, pos + 2
    raise UnquoteError


def unquote(token: str) -> str:
    """``strconv.Unquote``: a double-quoted, single-quoted (one character) or raw literal."""
    if len(token) < 2 or token[0] != token[-1] or token[0] not in "\"'`":
        raise UnquoteError
    quote_char, body = token[0], token[1:-1]
    if quote_char == "`":
        if "`" in body:
            raise UnquoteError
        return body.replace("\r", "")
    if "\n" in body:
        raise UnquoteError
    if "\\" not in body:
        # Go's quirk: '' has no character and still unquotes (to nothing).
        if quote_char in body or (quote_char == "'" and len(body) > 1):
            raise UnquoteError
        return body
    out = bytearray()
    value, is_byte, pos = unquote_char(body, 0, quote_char)
    out += bytes([value]) if is_byte else chr(value).encode("utf-8", "surrogatepass")
    while pos < len(body):
        if quote_char == "'":
            raise UnquoteError
        value, is_byte, pos = unquote_char(body, pos, quote_char)
        out += bytes([value]) if is_byte else chr(value).encode("utf-8", "surrogatepass")
    return out.decode("utf-8", "replace")


_INT_DIGITS: Final = {"x": (16, _HEX + "_"), "o": (8, _OCTAL + "_"), "b": (2, "01_")}
_INT64_MAX: Final = (1 << 63) - 1


def _underscores_ok(text: str) -> bool:
    """Go's ``underscoreOK``: each ``_`` stands between digits (a base prefix counts)."""
    body = text[1:] if text[:1] in "+-" else text
    saw = "^"
    digits = "0123456789"
    if len(body) >= 2 and body[0] == "0" and body[1].lower() in "xob":
        saw = "0"
        digits = _HEX if body[1].lower() == "x" else digits
        body = body[2:]
    for ch in body:
        if ch in digits:
            saw = "0"
        elif ch == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def parse_int(text: str, *, bits: int = 64) -> int | None:
    """``strconv.ParseInt(text, 0, bits)``; None on syntax or range errors."""
    body = text[1:] if text[:1] in "+-" else text
    negative = text[:1] == "-"
    if not body:
        return None
    base, digits = 10, "0123456789_"
    rest = body
    if len(body) >= 2 and body[0] == "0" and body[1].lower() in _INT_DIGITS:
        base, digits = _INT_DIGITS[body[1].lower()]
        rest = body[2:]
    elif len(body) >= 2 and body[0] == "0":
        base, digits, rest = 8, _OCTAL + "_", body[1:]
    if not rest or any(c not in digits for c in rest) or not _underscores_ok(body):
        return None
    cleaned = rest.replace("_", "")
    if not cleaned:
        return None
    value = -int(cleaned, base) if negative else int(cleaned, base)
    limit = 1 << (bits - 1)
    return value if -limit <= value < limit else None


_DEC_FLOAT: Final = re.compile(r"[+-]?(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9_]+)?")
_HEX_FLOAT: Final = re.compile(r"([+-]?)0[xX]([0-9a-fA-F_]*(?:\.[0-9a-fA-F_]*)?)[pP]([+-]?[0-9_]+)")
_SPECIAL: Final = re.compile(r"([+-]?)(inf|infinity|nan)", re.IGNORECASE)


class NumError(ValueError):
    """``strconv.NumError``: ``str(err)`` is Go's message, e.g.
    ``strconv.ParseFloat: parsing "x": invalid syntax``."""

    def __init__(self, func: str, text: str, reason: str) -> None:
        super().__init__(f"strconv.{func}: parsing {quote(text)}: {reason}")


def parse_float_strict(text: str) -> float:
    """``strconv.ParseFloat(text, 64)``; raise :class:`NumError` as Go returns one
    (``invalid syntax``, or ``value out of range`` on overflow)."""
    value = _parse_float(text)
    if value is None:
        raise NumError("ParseFloat", text, "invalid syntax")
    if math.isinf(value) and not _SPECIAL.fullmatch(text):
        raise NumError("ParseFloat", text, "value out of range")
    return value


def parse_float(text: str) -> float | None:
    """``strconv.ParseFloat(text, 64)``; None on syntax or range errors."""
    try:
        return parse_float_strict(text)
    except NumError:
        return None


def _parse_float(text: str) -> float | None:
    if _DEC_FLOAT.fullmatch(text):
        if "_" in text and not _underscores_ok(text):
            return None
        return float(text.replace("_", ""))
    special = _SPECIAL.fullmatch(text)
    if special:
        if special.group(2).lower() == "nan":
            return None if special.group(1) else math.nan
        return -math.inf if special.group(1) == "-" else math.inf
    hexed = _HEX_FLOAT.fullmatch(text)
    if hexed and _underscores_ok(text):
        mantissa = hexed.group(2).replace("_", "")
        if mantissa in ("", "."):
            return None
        sign = -1.0 if hexed.group(1) == "-" else 1.0
        try:
            return float.fromhex(f"{hexed.group(1)}0x{mantissa}p{hexed.group(3)}".replace("_", ""))
        except OverflowError:
            return math.copysign(math.inf, sign)
    return None


def shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of ``|value|`` and the decimal point position."""
    if value == 0:
        return "0", 1
    _, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    point = len(digits) + exponent
    return text, point


def _format_e(neg: bool, digits: str, point: int, prec: int, verb: str) -> str:
    mantissa = digits[0] + ("." + digits[1:].ljust(prec, "0")[:prec] if prec > 0 else "")
    exp = point - 1 if digits != "0" else 0
    sign = "-" if exp < 0 else "+"
    return ("-" if neg else "") + f"{mantissa}{verb}{sign}{abs(exp):02d}"


def _format_f(neg: bool, digits: str, point: int, prec: int) -> str:
    if point <= 0:
        whole, frac = "0", "0" * (-point) + digits
    else:
        whole, frac = digits[:point].ljust(point, "0"), digits[point:]
    frac = frac.ljust(prec, "0")[:prec]
    return ("-" if neg else "") + whole + ("." + frac if prec > 0 else "")


def format_float(value: float, verb: str = "g", prec: int = -1) -> str:
    """``strconv.FormatFloat(value, verb, prec, 64)`` for verbs e E f g G b x X (and F,
    which ``fmt`` maps to f)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if verb in "bxX":
        return _format_binary(value, verb, prec)
    if prec >= 0:
        return _format_fixed_precision(value, verb, prec)
    neg = math.copysign(1.0, value) < 0
    digits, point = shortest_digits(value)
    if verb in "eE":
        return _format_e(neg, digits, point, len(digits) - 1, verb)
    if verb in "fF":
        return _format_f(neg, digits, point, max(len(digits) - point, 0))
    exp = point - 1
    if exp < -4 or exp >= 6:
        return _format_e(neg, digits, point, len(digits) - 1, "e" if verb == "g" else "E")
    return _format_f(neg, digits, point, max(len(digits) - point, 0))


def _format_fixed_precision(value: float, verb: str, prec: int) -> str:
    if verb in "fF":
        return f"{value:.{prec}f}"
    if verb in "eE":
        return f"{value:.{prec}{verb}}"
    return f"{value:.{max(prec, 1)}{'g' if verb == 'g' else 'G'}}"


_MANT_BITS: Final = 52
_BIAS: Final = -1023


def _mantissa_exponent(value: float) -> tuple[bool, int, int]:
    """Sign, integer mantissa and binary exponent (value = mant * 2**(exp - 52))."""
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    exp = (bits >> _MANT_BITS) & 0x7FF
    mant = bits & ((1 << _MANT_BITS) - 1)
    if exp == 0:
        exp += 1
    else:
        mant |= 1 << _MANT_BITS
    return bool(bits >> 63), mant, exp + _BIAS


def _format_binary(value: float, verb: str, prec: int) -> str:
    neg, mant, exp = _mantissa_exponent(value)
    sign = "-" if neg else ""
    if verb == "b":
        exp -= _MANT_BITS
        return f"{sign}{mant}p{'+' if exp >= 0 else '-'}{abs(exp)}"
    return sign + _format_hex(mant, exp, verb, prec)


def _format_hex(mant: int, exp: int, verb: str, prec: int) -> str:
    """Go's ``%x``: ``0x1.yyyyp±dd``, the leading 1 moved to bit 60 first."""
    if mant == 0:
        exp = 0
    mant <<= 60 - _MANT_BITS
    while mant and not mant & (1 << 60):
        mant <<= 1
        exp -= 1
    if 0 <= prec < 15:
        shift = prec * 4
        extra = (mant << shift) & ((1 << 60) - 1)
        mant >>= 60 - shift
        if extra | (mant & 1) > 1 << 59:
            mant += 1
        mant <<= 60 - shift
        if mant & (1 << 61):
            mant >>= 1
            exp += 1
    hex_digits = "0123456789abcdef" if verb == "x" else "0123456789ABCDEF"
    out = "0" + verb + str((mant >> 60) & 1)
    mant = (mant << 4) & ((1 << 64) - 1)
    if (prec < 0 and mant) or prec > 0:
        out += "."
        count = 0
        while (prec < 0 and mant) or count < prec:
            out += hex_digits[(mant >> 60) & 15]
            mant = (mant << 4) & ((1 << 64) - 1)
            count += 1
    mark = "p" if verb == "x" else "P"
    return f"{out}{mark}{'-' if exp < 0 else '+'}{abs(exp):02d}"

"""Duration and byte-size helpers with Go / Prometheus / go-humanize semantics.

All durations are integer nanoseconds. Errors are :class:`ValueError` carrying the
exact message the Go function would return.
"""

from __future__ import annotations

import math

from gocompat.fmt import go_quote
from gocompat.spaces import trim_space
from gocompat.strconv import parse_float, quote_bytes

__all__ = [
    "format_go_duration",
    "format_humanize_bytes",
    "format_prom_duration",
    "parse_duration",
    "parse_duration_seconds",
    "parse_go_duration",
    "parse_humanize_bytes",
    "parse_prom_duration",
    "parse_prom_or_go_duration",
]

_MAX_INT64 = (1 << 63) - 1
_MS = 1_000_000
_PROM_UNITS: dict[str, tuple[int, int]] = {
    "y": (1, 365 * 86_400_000),
    "w": (2, 7 * 86_400_000),
    "d": (3, 86_400_000),
    "h": (4, 3_600_000),
    "m": (5, 60_000),
    "s": (6, 1000),
    "ms": (7, 1),
}
_GO_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 1000,
    "µs": 1000,
    "μs": 1000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}


def parse_prom_duration(text: str) -> int:
    """Parse a Prometheus duration (``1h30m``, ``2d``, ``0``) into nanoseconds."""
    if text == "0":
        return 0
    if text == "":
        raise ValueError("empty duration string")
    rest, total, last = text, 0, 0
    while rest:
        i = _ascii_digits(rest)
        if i == 0:
            raise ValueError(f"not a valid duration string: {go_quote(text)}")
        value, rest = int(rest[:i]), rest[i:]
        j = 0
        while j < len(rest) and not ("0" <= rest[j] <= "9"):
            j += 1
        if j == 0:
            raise ValueError(f"not a valid duration string: {go_quote(text)}")
        unit, rest = rest[:j], rest[j:]
        if unit not in _PROM_UNITS:
            raise ValueError(f"unknown unit {go_quote(unit)} in duration {go_quote(text)}")
        pos, mult = _PROM_UNITS[unit]
        if pos <= last:
            raise ValueError(f"not a valid duration string: {go_quote(text)}")
        last = pos
        total += value * mult
        if total * _MS > _MAX_INT64:
            raise ValueError("duration out of range")
    return total * _MS


def _ascii_digits(text: str) -> int:
    i = 0
    while i < len(text) and "0" <= text[i] <= "9":
        i += 1
    return i


def _time_quote(text: str) -> str:
    """Quote like Go's ``time`` package in its errors: non-ASCII as ``\\x`` bytes."""
    out = ['"']
    for ch in text:
        if ord(ch) >= 0x80 or ch < " ":
            out.extend(f"\\x{b:02x}" for b in ch.encode())
        else:
            out.append("\\" + ch if ch in '"\\' else ch)
    return "".join(out) + '"'


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _go_duration_term(rest: str, original: str) -> tuple[int, str]:
    """One ``<number><unit>`` of a Go duration: its nanoseconds and the text after it."""
    invalid = ValueError("time: invalid duration " + _time_quote(original))
    if not (rest[0] == "." or _is_digit(rest[0])):
        raise invalid
    end = _ascii_digits(rest)
    whole, rest, pre = int(rest[:end] or "0"), rest[end:], end > 0
    if whole > 1 << 63:
        raise invalid
    frac, scale, post = 0, 1.0, False
    if rest.startswith("."):
        end = 1
        while end < len(rest) and _is_digit(rest[end]):
            if frac <= (1 << 63) // 10:  # Go drops digits past int64 precision
                frac, scale = frac * 10 + int(rest[end]), scale * 10
            end += 1
        rest, post = rest[end:], end > 1
    if not pre and not post:
        raise invalid
    end = 0
    while end < len(rest) and rest[end] != "." and not _is_digit(rest[end]):
        end += 1
    if end == 0:
        raise ValueError("time: missing unit in duration " + _time_quote(original))
    unit = rest[:end]
    if unit not in _GO_UNITS:
        raise ValueError(
            f"time: unknown unit {_time_quote(unit)} in duration {_time_quote(original)}"
        )
    mult = _GO_UNITS[unit]
    if whole > (1 << 63) // mult:
        raise invalid
    value = whole * mult + (int(frac * (mult / scale)) if frac else 0)
    if value > 1 << 63:
        raise invalid
    return value, rest[end:]


def parse_go_duration(text: str) -> int:
    """Parse a Go ``time.ParseDuration`` string (``1.5h``, ``-300ms``) into nanoseconds.

    Errors carry Go's messages, quoted as the ``time`` package quotes them.
    """
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ValueError("time: invalid duration " + _time_quote(text))
    total = 0
    while rest:
        value, rest = _go_duration_term(rest, text)
        total += value
        if total > 1 << 63:
            raise ValueError("time: invalid duration " + _time_quote(text))
    if not negative and total > _MAX_INT64:
        raise ValueError("time: invalid duration " + _time_quote(text))
    return -total if negative else total


def parse_duration(text: str) -> int:
    """Loki's lexer rule: a Go duration, or else a Prometheus duration.

    Both grammars give the same value wherever both accept a text; the order decides
    which error a text that neither accepts gets (here the Prometheus one).
    """
    try:
        return parse_go_duration(text)
    except ValueError:
        return parse_prom_duration(text)


def parse_prom_or_go_duration(text: str) -> int:
    """The API's and the config's rule: a Prometheus duration, or else a Go duration.

    The reverse order of :func:`parse_duration`, so a text neither accepts gets Go's
    ``time: invalid duration`` message, as the reference's API and config answer.
    """
    try:
        return parse_prom_duration(text)
    except ValueError:
        return parse_go_duration(text)


def parse_duration_seconds(text: str) -> float:
    """Seconds of a plain float number of seconds or of a duration
    (:func:`parse_prom_or_go_duration`)."""
    try:
        return float(text)
    except ValueError:
        return parse_prom_or_go_duration(text) / 1e9


def format_go_duration(ns: int) -> str:
    """Format nanoseconds like Go's ``time.Duration.String`` (``1h0m0s``, ``1.5ms``)."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    u = abs(ns)
    if u < 1_000_000_000:
        for unit, size in (("ns", 1), ("µs", 1000), ("ms", 1_000_000)):
            if u < size * 1000:
                return sign + _fraction(u, size) + unit
    text = _fraction(u % 60_000_000_000, 1_000_000_000) + "s"
    minutes = u // 60_000_000_000
    if minutes:
        text = f"{minutes % 60}m" + text
        if minutes >= 60:
            text = f"{minutes // 60}h" + text
    return sign + text


def _fraction(value: int, size: int) -> str:
    whole, frac = divmod(value, size)
    if not frac:
        return str(whole)
    digits = str(frac).rjust(len(str(size)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def format_prom_duration(ns: int) -> str:
    """Format nanoseconds like Prometheus ``model.Duration.String`` (``1h30m``, ``1d``)."""
    ms = int(ns / _MS)
    if ms == 0:
        return "0s"
    out = []
    for unit, (_, mult) in _PROM_UNITS.items():
        if unit in ("y", "w") and ms % mult != 0:
            continue
        value = ms // mult if ms > 0 else 0
        if value > 0:
            out.append(f"{value}{unit}")
            ms -= value * mult
    return "".join(out)


_BYTE_SIZES: dict[str, int] = {"b": 1, "": 1}
for _i, _p in enumerate("kmgtpe", start=1):
    _BYTE_SIZES[f"{_p}ib"] = _BYTE_SIZES[f"{_p}i"] = 1024**_i
    _BYTE_SIZES[f"{_p}b"] = _BYTE_SIZES[_p] = 1000**_i


def parse_humanize_bytes(text: str) -> int:
    """Parse a size like go-humanize ``ParseBytes`` (``1.5KiB`` -> 1536, ``2,048``).

    As there, the leading run of digits (any Unicode decimal digit), dots and commas is
    counted in characters but cut in bytes, the number is read by ``ParseFloat`` and the
    product with the unit truncated to whole bytes.
    """
    digits = 0
    for ch in text:
        if not (ch.isdecimal() or ch in ".,"):
            break
        digits += 1
    raw = text.encode("utf-8", "surrogateescape")
    number = raw[:digits].replace(b",", b"")
    value = parse_float(number.decode("utf-8", "replace")) if number.isascii() else None
    if value is None or math.isinf(value):
        reason = "invalid syntax" if value is None else "value out of range"
        raise ValueError(f"strconv.ParseFloat: parsing {quote_bytes(number)}: {reason}")
    extra = trim_space(raw[digits:].decode("utf-8", "replace")).lower()
    if extra not in _BYTE_SIZES:
        raise ValueError(f"unhandled size name: {extra}")
    value *= _BYTE_SIZES[extra]
    if value >= 2.0**64:
        raise ValueError(f"too large: {text}")
    return int(value)


def format_humanize_bytes(size: int) -> str:
    """Format like go-humanize ``Bytes`` with the space removed (``1.0kB``, ``20MB``)."""
    if size < 10:
        return f"{size}B"
    exp = min(math.floor(math.log(size) / math.log(1000)), 6)
    suffix = ("B", "kB", "MB", "GB", "TB", "PB", "EB")[exp]
    val = math.floor(size / 1000**exp * 10 + 0.5) / 10
    return f"{val:.1f}{suffix}" if val < 10 else f"{val:.0f}{suffix}"

"""The most common timestamps of backfilled lines read with numpy over the bytes, with no
regular expression: a line starting with an RFC 3339 time, and a time field holding
whole Unix seconds, milliseconds, microseconds or nanoseconds.

Each reader says which rows it read; the others go to the general parsers of
:mod:`svc.backfill.timestamps`, which give the same value for every row read here (a
differential test holds them to it). A row is read here only when its value is certain:
a plainly valid date and time (seconds 0-59, the day within its month, a year from 1970).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["leading_rfc3339", "unix_integers"]

_NS = 1_000_000_000
_LONGEST_FRACTION = 60
"""Where reading the digits of a fraction stops (the rows with more go elsewhere)."""
_DAYS_BEFORE_MONTH = np.array([0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334])
_DAYS_IN_MONTH = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])

Ints = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


def _string_buffers(strings: pa.Array) -> tuple[Ints, npt.NDArray[np.uint8]]:
    """Each value's start and end (offsets) and the data bytes of a string array."""
    _, offsets, data = strings.buffers()
    kind = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    bounds = np.frombuffer(offsets, kind)[strings.offset : strings.offset + len(strings) + 1]
    raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(1, np.uint8)
    return bounds.astype(np.int64), raw


class _Bytes:
    """The bytes of a string array's values by position, a column at a time."""

    def __init__(self, strings: pa.Array) -> None:
        bounds, self.raw = _string_buffers(strings)
        self.starts = bounds[:-1]
        self.lengths = np.diff(bounds)

    def at(self, position: int | Ints) -> npt.NDArray[np.uint8]:
        """Each value's byte at ``position`` (one for all, or one per value); 0 past its
        end."""
        index = np.minimum(self.starts + position, len(self.raw) - 1)
        column: npt.NDArray[np.uint8] = self.raw[index]
        column[position >= self.lengths] = 0
        return column

    def digits(self, first: int | Ints, count: int) -> tuple[Ints, Mask]:
        """The number written by ``count`` bytes from ``first``, and whether they are all
        ASCII digits."""
        value = np.zeros(len(self.starts), np.int64)
        ok = np.ones(len(self.starts), bool)
        for offset in range(count):
            digit = self.at(first + offset) - 48  # uint8 wraps: only '0'..'9' are below 10
            ok &= digit < 10
            value = value * 10 + digit
        return value, ok


def _days_from_civil(year: Ints, month: Ints, day: Ints) -> Ints:
    """Days since 1970-01-01 of valid dates from 1970 on."""
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    before = year - 1
    days = 365 * (year - 1970) + (before // 4 - before // 100 + before // 400) - 477
    days += _DAYS_BEFORE_MONTH[month - 1] + ((month > 2) & leap) + day - 1
    return days


def leading_rfc3339(lines: pa.Array) -> tuple[Ints, Mask]:
    """Nanoseconds of lines that start with ``YYYY-MM-DD[T ]hh:mm:ss``, an optional
    ``.`` or ``,`` fraction and an optional ``Z`` or ``±hh[:]mm`` zone; and which rows
    were read (the others are left to the regular expressions)."""
    n = len(lines)
    if n == 0 or lines.null_count:
        return np.zeros(n, np.int64), np.zeros(n, bool)
    b = _Bytes(lines)
    year, ok = b.digits(0, 4)
    month, ok_month = b.digits(5, 2)
    day, ok_day = b.digits(8, 2)
    hour, ok_hour = b.digits(11, 2)
    minute, ok_minute = b.digits(14, 2)
    second, ok_second = b.digits(17, 2)
    ok &= ok_month & ok_day & ok_hour & ok_minute & ok_second
    ok &= (b.at(4) == ord("-")) & (b.at(7) == ord("-"))
    ok &= (b.at(10) == ord("T")) | (b.at(10) == ord(" "))
    ok &= (b.at(13) == ord(":")) & (b.at(16) == ord(":"))
    ok &= (year >= 1970) & (month >= 1) & (month <= 12) & (day >= 1)
    month = np.clip(month, 1, 12)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    ok &= day <= _DAYS_IN_MONTH[month - 1] + ((month == 2) & leap)
    ok &= (hour <= 23) & (minute <= 59) & (second <= 59)
    seconds = _days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
    # A fraction: [.,] and digits, of which the first 9 count and the rest are skipped.
    mark = b.at(19)
    fraction = np.zeros(n, np.int64)
    run = np.zeros(n, np.int64)
    going = ok & ((mark == ord(".")) | (mark == ord(",")))
    position = 20
    while going.any():
        if position == _LONGEST_FRACTION:  # left to the regular expressions
            ok &= ~going
            break
        digit = b.at(position) - 48
        going &= digit < 10
        if position < 29:
            fraction += np.where(going, digit.astype(np.int64) * 10 ** (28 - position), 0)
        run += going
        position += 1
    zone_at = 19 + np.where(run > 0, run + 1, 0)
    sign = b.at(zone_at)
    hours, ok_hours = b.digits(zone_at + 1, 2)
    signed = ok_hours & ((sign == ord("+")) | (sign == ord("-")))
    colon = b.at(zone_at + 3) == ord(":")
    minutes, ok_minutes = b.digits(zone_at + np.where(colon, 4, 3), 2)
    offset = np.where(signed & ok_minutes, hours * 3600 + minutes * 60, 0)
    offset = np.where(sign == ord("-"), -offset, offset)
    values = (seconds - offset) * _NS + fraction
    return np.where(ok, values, 0), ok


def unix_integers(values: pa.Array) -> pa.Array | None:
    """Nanoseconds of time-field values when all are unsigned integers (seconds up to 11
    digits, then ms, us, ns by 3 digits more each, as the general parser tells them
    apart); None when any is not, or a value is out of range."""
    n = len(values)
    if n == 0 or values.null_count:
        return None
    bounds, raw = _string_buffers(values)
    lengths = np.diff(bounds)
    if lengths.min() < 1 or lengths.max() > 19:
        return None
    if not ((raw[bounds[0] : bounds[-1]] - 48) < 10).all():
        return None
    try:
        integers = pc.cast(values, pa.int64()).to_numpy()
    except pa.ArrowInvalid:
        return None
    scale = np.where(
        lengths <= 11, _NS, np.where(lengths <= 14, 1_000_000, np.where(lengths <= 17, 1_000, 1))
    )
    if (integers > np.iinfo(np.int64).max // scale).any():
        return None
    return pa.array(integers * scale, pa.int64())

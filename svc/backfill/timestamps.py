"""Timestamps of backfilled lines, parsed a whole Arrow array at a time.

Every parser here turns a string array into Unix nanoseconds (int64), with null where a
value is not a timestamp of that kind; the regular expressions run on Arrow's RE2, so a
user's ``-time-regex`` runs in linear time too. Text without a zone is UTC.

* :func:`parse_values` reads the value of a time field (JSON lines, logfmt): Unix
  seconds, milliseconds, microseconds or nanoseconds (told apart by the number of
  integer digits, fractions allowed) or RFC 3339 (``T`` or a space, ``.`` or ``,``
  before the fraction, any zone or none), or an explicit ``-time-format``.
* :func:`parse_leading` finds the timestamp of a plain-text line: RFC 3339 or Python
  logging's ``2006-01-02 15:04:05,000`` at the start (after an optional ``[`` or a
  syslog ``<PRI>1 ``), Go's log ``2006/01/02 15:04:05``, BSD syslog ``Jan _2
  15:04:05`` (year: the latest one not in the future), or nginx/Apache CLF
  ``[02/Jan/2006:15:04:05 -0700]`` anywhere; or a ``-time-regex`` whose ``ts`` group
  (else its first group) ``-time-format`` parses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from svc.backfill.fast_times import leading_rfc3339, unix_integers

__all__ = ["TextTimeFormat", "custom_format", "parse_leading", "parse_values"]

_NS = 1_000_000_000
_DAY_NS = 86_400 * _NS


@dataclass(frozen=True)
class TextTimeFormat:
    """A timestamp shape: a regex with a ``ts`` group (and optional ``frac``, ``zone``)
    and the ``strptime`` format of ``ts``."""

    name: str
    pattern: str
    strptime: str
    yearless: bool = False


_RFC3339 = TextTimeFormat(
    "rfc3339",
    r"^(?:<\d{1,3}>\d{1,2} )?\[?(?P<ts>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})"
    r"(?:[.,](?P<frac>\d{1,9})\d*)?(?P<zone>Z|z|[+-]\d{2}:?\d{2})?",
    "%Y-%m-%d %H:%M:%S",
)
_GO_LOG = TextTimeFormat(
    "go",
    r"^(?P<ts>\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d{1,9})\d*)?",
    "%Y/%m/%d %H:%M:%S",
)
_CLF = TextTimeFormat(
    "clf",
    r"\[(?P<ts>\d{2}/[A-Za-z]{3}/\d{4}:\d{2}:\d{2}:\d{2}) (?P<zone>[+-]\d{4})\]",
    "%d/%b/%Y:%H:%M:%S",
)
_SYSLOG = TextTimeFormat(
    "syslog",
    r"^(?:<\d{1,3}>)?(?P<ts>[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d{1,9})\d*)?",
    "%b %d %H:%M:%S",
    yearless=True,
)
TEXT_FORMATS = (_RFC3339, _GO_LOG, _SYSLOG, _CLF)

_VALUE_RFC3339 = TextTimeFormat("rfc3339", _RFC3339.pattern + "$", _RFC3339.strptime)
_NUMBER = r"^(?P<int>-?\d+)(?:\.(?P<frac>\d+))?$"


def custom_format(strptime: str, pattern: str | None) -> TextTimeFormat:
    """A user's ``-time-format`` (``strptime`` syntax, ``%z`` for a zone), applied to a
    ``-time-regex`` match (its ``ts`` group, else its first group) or a whole value."""
    if pattern is None:
        return TextTimeFormat("custom", r"^(?P<ts>.*)$", strptime)
    if "(?P<ts>" not in pattern:
        pattern = pattern.replace("(", "(?P<ts>", 1) if "(" in pattern else f"(?P<ts>{pattern})"
    return TextTimeFormat("custom", pattern, strptime)


def parse_values(values: pa.Array, custom: TextTimeFormat | None = None) -> pa.Array:
    """Nanoseconds of time-field values (numbers or RFC 3339; see the module docstring)."""
    if custom is not None:
        return _parse(values, custom)
    integers = unix_integers(values)
    if integers is not None:
        return integers
    numbers = _parse_numbers(values)
    if numbers.null_count == 0:
        return numbers
    return pc.coalesce(numbers, _parse(values, _VALUE_RFC3339))


def parse_leading(
    lines: pa.Array, custom: TextTimeFormat | None = None, now_ns: int | None = None
) -> pa.Array:
    """Nanoseconds of each line's leading timestamp, null where none is found."""
    if custom is not None:
        return _parse(lines, custom, now_ns)
    # Lines starting with RFC 3339 are read without regular expressions; the rest below.
    values, read = leading_rfc3339(lines)
    if read.all():
        return pa.array(values, pa.int64())
    if not read.any():
        return _parse_leading(lines, now_ns)
    rest = _parse_leading(lines.filter(pa.array(~read)), now_ns)
    values[~read] = rest.fill_null(0).to_numpy()
    missing = np.zeros(len(lines), bool)
    missing[~read] = rest.is_null().to_numpy(zero_copy_only=False)
    return pa.array(values, pa.int64(), mask=missing)


def _parse_leading(lines: pa.Array, now_ns: int | None) -> pa.Array:
    result: pa.Array | None = None
    for fmt in TEXT_FORMATS:
        parsed = _parse(lines, fmt, now_ns)
        result = parsed if result is None else pc.coalesce(result, parsed)
        if result.null_count == 0:
            break
    assert result is not None
    return result


def _parse_numbers(values: pa.Array) -> pa.Array:
    parts = pc.extract_regex(values, _NUMBER)
    integer = pc.struct_field(parts, "int")
    digits = pc.utf8_length(pc.utf8_ltrim(integer, "-"))
    # Seconds up to 11 digits (year 5138), then ms, us, ns by 3 digits more each.
    scale = pc.if_else(
        pc.less_equal(digits, 11),
        _NS,
        pc.if_else(
            pc.less_equal(digits, 14), 1_000_000, pc.if_else(pc.less_equal(digits, 17), 1_000, 1)
        ),
    )
    whole = pc.multiply_checked(pc.cast(_or_zero(integer), pa.int64()), scale)
    fraction = _fraction_ns(pc.struct_field(parts, "frac"))
    negative = pc.starts_with(integer, "-")
    fraction = pc.divide(fraction, pc.divide(pa.scalar(_NS, pa.int64()), scale))
    fraction = pc.if_else(negative, pc.negate(fraction), fraction)
    return pc.if_else(pc.is_valid(parts), pc.add(whole, fraction), pa.scalar(None, pa.int64()))


def _or_zero(strings: pa.Array) -> pa.Array:
    """Strings with null and empty replaced by "0" (for casts)."""
    filled = pc.fill_null(strings, "0")
    return pc.if_else(pc.equal(filled, ""), "0", filled)


def _fraction_ns(frac: pa.Array) -> pa.Array:
    """Nanoseconds of fraction digits ("5" -> 500000000), 0 where there are none."""
    padded = pc.utf8_slice_codeunits(pc.utf8_rpad(_or_zero(frac), 9, "0"), 0, 9)
    return pc.cast(padded, pa.int64())


def _zone_seconds(zone: pa.Array) -> pa.Array:
    """Offsets east of UTC in seconds of ``Z``, ``+hh:mm``, ``-hhmm`` (0 where absent)."""
    digits = pc.replace_substring(pc.fill_null(zone, ""), ":", "")
    has = pc.greater_equal(pc.utf8_length(digits), 5)
    hours = pc.cast(_or_zero(pc.utf8_slice_codeunits(digits, 1, 3)), pa.int64())
    minutes = pc.cast(_or_zero(pc.utf8_slice_codeunits(digits, 3, 5)), pa.int64())
    offset = pc.add(pc.multiply(hours, 3600), pc.multiply(minutes, 60))
    offset = pc.if_else(pc.starts_with(digits, "-"), pc.negate(offset), offset)
    return pc.if_else(has, offset, 0)


def _parse(values: pa.Array, fmt: TextTimeFormat, now_ns: int | None = None) -> pa.Array:
    parts = pc.extract_regex(values, fmt.pattern)
    names = {parts.type.field(i).name for i in range(parts.type.num_fields)}
    text = pc.struct_field(parts, "ts")
    if fmt is _RFC3339 or fmt is _VALUE_RFC3339:
        text = pc.replace_substring(text, "T", " ")
    if fmt.yearless:
        return _parse_yearless(parts, text, fmt, now_ns)
    seconds = pc.strptime(text, format=fmt.strptime, unit="s", error_is_null=True)
    return _combine(parts, names, seconds)


def _combine(parts: pa.Array, names: set[str], seconds: pa.Array) -> pa.Array:
    ns = pc.multiply(pc.cast(pc.cast(seconds, pa.timestamp("s")), pa.int64()), _NS)
    if "frac" in names:
        ns = pc.add(ns, _fraction_ns(pc.struct_field(parts, "frac")))
    if "zone" in names:
        ns = pc.subtract(ns, pc.multiply(_zone_seconds(pc.struct_field(parts, "zone")), _NS))
    return ns


def _parse_yearless(
    parts: pa.Array, text: pa.Array, fmt: TextTimeFormat, now_ns: int | None
) -> pa.Array:
    """Syslog times name no year: the latest year that does not put them in the future."""
    now = time.time_ns() if now_ns is None else now_ns
    year = time.gmtime(now // _NS).tm_year
    names = {parts.type.field(i).name for i in range(parts.type.num_fields)}
    text = pc.replace_substring_regex(text, " +", " ")
    results = []
    for candidate in (year, year - 1):
        dated = pc.binary_join_element_wise(str(candidate), text, " ")
        seconds = pc.strptime(dated, format="%Y " + fmt.strptime, unit="s", error_is_null=True)
        results.append(_combine(parts, names, seconds))
    this_year, last_year = results
    future = pc.greater(this_year, now + _DAY_NS)
    return pc.if_else(pc.fill_null(future, False), last_year, this_year)

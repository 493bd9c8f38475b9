"""Timestamps of the HTTP API and the config file (LOGQL.md section 7)."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

__all__ = ["format_go_time", "format_rfc3339", "parse_rfc3339_ns", "parse_timestamp_ns"]


_MIN_NS = -(1 << 63)
_MAX_NS = (1 << 63) - 1


def parse_timestamp_ns(text: str) -> int:
    """Unix ns of an API timestamp: float seconds, integer s/ns, or RFC 3339 (LOGQL.md 7).

    An integer beyond int64 raises ValueError with Go's ``strconv.ParseInt`` message; a
    valid time beyond int64 nanoseconds (after 2262, say) is clamped to the int64 range.
    """
    if "." in text and _is_float(text):
        return _clamped(round(float(text) * 1000) * 1_000_000)
    if text.lstrip("-").isdigit():
        value = int(text)
        if not _MIN_NS <= value <= _MAX_NS:
            raise ValueError(f'strconv.ParseInt: parsing "{text}": value out of range')
        return _clamped(value * 1_000_000_000 if len(text.lstrip("-")) <= 10 else value)
    return _clamped(parse_rfc3339_ns(text))


def _clamped(ns: int) -> int:
    return min(max(ns, _MIN_NS), _MAX_NS)


def _is_float(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


_RFC3339 = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$"
)


def parse_rfc3339_ns(text: str) -> int:
    """Unix ns of an RFC 3339 time with up to 9 fraction digits; ValueError otherwise."""
    match = _RFC3339.match(text)
    if match is None:
        raise ValueError(f'cannot parse "{text}" to a valid timestamp')
    date, clock, fraction, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    base = datetime.fromisoformat(f"{date}T{clock}{zone}")
    nanos = int((fraction or "").ljust(9, "0"))
    return int(base.timestamp()) * 1_000_000_000 + nanos


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def format_rfc3339(ns: int) -> str:
    """Unix nanoseconds as RFC 3339 in UTC, to the second (Go's ``time.RFC3339``)."""
    moment = _EPOCH + timedelta(microseconds=ns // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def format_go_time(ns: int) -> str:
    """Unix nanoseconds as Go's ``time.Time.String()`` in UTC:
    ``2024-05-01 10:00:00.5 +0000 UTC`` (fraction without trailing zeros)."""
    seconds, fraction = divmod(ns, 1_000_000_000)
    moment = _EPOCH + timedelta(seconds=seconds)
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if fraction:
        text += "." + f"{fraction:09d}".rstrip("0")
    return text + " +0000 UTC"

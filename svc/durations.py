"""Duration and timestamp parameters of the HTTP API and the config file.

Durations are Prometheus durations (``1h30m``, ``2d``) or Go durations (``1.5h``, ``300ms``);
API timestamps follow LOGQL.md section 7.
"""

from __future__ import annotations

import math
import re
from datetime import datetime

from logql_to_sql.durations import format_go_duration, parse_go_duration, parse_prom_duration

__all__ = [
    "format_duration",
    "format_go_duration",
    "parse_duration_ns",
    "parse_duration_seconds",
    "parse_timestamp_ns",
]

_UNIT_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
    "d": 86_400_000_000_000,
    "w": 7 * 86_400_000_000_000,
    "y": 365 * 86_400_000_000_000,
}
_PROM_UNITS = ("y", "w", "d", "h", "m", "s", "ms")


def parse_duration_ns(text: str) -> int:
    """Nanoseconds of a Prometheus or Go duration; ValueError (Go's message) when neither."""
    try:
        return parse_prom_duration(text)
    except ValueError:
        return parse_go_duration(text)


def parse_duration_seconds(text: str) -> float:
    """Seconds of a duration string, or of a plain float number of seconds."""
    try:
        return float(text)
    except ValueError:
        return parse_duration_ns(text) / 1e9


def format_duration(seconds: float) -> str:
    """Prometheus-style text of a duration in seconds (``2h``, ``1m30s``, ``500ms``)."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    out = []
    ms, rest = divmod(ns, 1_000_000)
    if rest:
        return f"{seconds}s"
    for unit in _PROM_UNITS:
        size = _UNIT_NS[unit] // 1_000_000
        if unit in ("y", "w") and ms % size:
            continue  # years and weeks only when exact: 90d reads better than 12w6d
        count, ms = divmod(ms, size)
        if count:
            out.append(f"{count}{unit}")
    return "".join(out)


def parse_timestamp_ns(text: str) -> int:
    """Unix ns of an API timestamp: float seconds, integer s/ns, or RFC 3339 (LOGQL.md 7)."""
    if "." in text and _is_float(text):
        return round(float(text) * 1000) * 1_000_000
    if text.lstrip("-").isdigit():
        value = int(text)
        return value * 1_000_000_000 if len(text.lstrip("-")) <= 10 else value
    return _parse_rfc3339_ns(text)


def _is_float(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


_RFC3339 = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$"
)


def _parse_rfc3339_ns(text: str) -> int:
    match = _RFC3339.match(text)
    if match is None:
        raise ValueError(f'cannot parse "{text}" to a valid timestamp')
    date, clock, fraction, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    base = datetime.fromisoformat(f"{date}T{clock}{zone}")
    nanos = int((fraction or "").ljust(9, "0"))
    return int(base.timestamp()) * 1_000_000_000 + nanos

"""Duration and timestamp parameters of the HTTP API and the config file.

Durations are Prometheus durations (``1h30m``, ``2d``) or Go durations (``1.5h``, ``300ms``);
API timestamps follow LOGQL.md section 7.
"""

from __future__ import annotations

import math
import re
from datetime import datetime

__all__ = [
    "format_duration",
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
_PROM_DURATION = re.compile(
    r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$"
)
_PROM_UNITS = ("y", "w", "d", "h", "m", "s", "ms")
_GO_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration_ns(text: str) -> int:
    """Nanoseconds of a Prometheus or Go duration; ValueError when it is neither."""
    if text in ("0", ""):
        if text == "0":
            return 0
        raise ValueError('time: invalid duration ""')
    match = _PROM_DURATION.match(text)
    if match and any(match.groups()):
        return sum(
            int(group) * _UNIT_NS[unit]
            for group, unit in zip(match.groups(), _PROM_UNITS, strict=True)
            if group
        )
    return _parse_go_duration_ns(text)


def _parse_go_duration_ns(text: str) -> int:
    body = text[1:] if text[:1] in "+-" else text
    sign = -1 if text.startswith("-") else 1
    pos = 0
    total = 0.0
    while pos < len(body):
        part = _GO_PART.match(body, pos)
        if part is None:
            raise ValueError(f'time: invalid duration "{text}"')
        total += float(part.group(1)) * _UNIT_NS[part.group(2)]
        pos = part.end()
    if not body:
        raise ValueError(f'time: invalid duration "{text}"')
    return sign * int(total)


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


def format_go_duration(ns: int) -> str:
    """Go's ``time.Duration.String`` text of ``ns`` (``744h0m0s``, ``1m30s``, ``500ms``)."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _trim_fraction(ns, size) + unit
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    seconds = _trim_fraction(rest, 1_000_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}"
    if minutes:
        return f"{sign}{minutes}m{seconds}"
    return sign + seconds


def _trim_fraction(value: int, unit: int) -> str:
    whole, fraction = divmod(value, unit)
    if not fraction:
        return str(whole)
    digits = str(fraction).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"

"""Timestamps of the HTTP API and the config file (LOGQL.md section 7)."""

from __future__ import annotations

import math
import re
from datetime import datetime

__all__ = ["parse_timestamp_ns"]


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

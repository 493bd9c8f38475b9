"""Query-string and form parameters of the query endpoints, validated as the reference does.

Each function reads from a plain ``Params`` mapping (first value per name, plus ``getall``)
and raises BadRequestError with the spec's message.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gocompat.durations import format_go_duration, format_prom_duration, parse_prom_or_go_duration
from gocompat.strconv import parse_float
from logql_to_sql import Direction
from svc.errors import BadRequestError
from svc.timestamps import parse_timestamp_ns

__all__ = [
    "Params",
    "TimeRange",
    "direction_param",
    "interval_param",
    "limit_param",
    "range_params",
    "step_param",
]

HOUR_NS = 3_600 * 1_000_000_000
MAX_POINTS = 11_000
_MAX_INT64 = (1 << 63) - 1
_MIN_INT64 = -(1 << 63)


class Params:
    """Request parameters: query string merged with a urlencoded form body."""

    def __init__(self, values: Mapping[str, Sequence[str]]) -> None:
        self._values = values

    def get(self, name: str) -> str | None:
        """The first value of ``name``, or None (an empty value counts as absent)."""
        found = self._values.get(name)
        if not found or found[0] == "":
            return None
        return found[0]

    def getall(self, name: str) -> list[str]:
        """Every value of ``name``."""
        return list(self._values.get(name, ()))


@dataclass(frozen=True)
class TimeRange:
    """A validated ``[start_ns, end_ns)`` window."""

    start_ns: int
    end_ns: int


def now_ns() -> int:
    """The current time in Unix ns."""
    return time.time_ns()


def timestamp_param(params: Params, name: str, default: int) -> int:
    """A timestamp parameter in any form of LOGQL.md 7."""
    text = params.get(name)
    if text is None:
        return default
    try:
        return parse_timestamp_ns(text)
    except ValueError as exc:
        raise BadRequestError(f"could not parse '{name}' parameter: {exc}") from exc


def duration_param(params: Params, name: str, default_ns: int) -> int:
    """A Prometheus duration parameter in ns."""
    text = params.get(name)
    if text is None:
        return default_ns
    try:
        return parse_prom_or_go_duration(text)
    except ValueError as exc:
        raise BadRequestError(f"could not parse '{name}' parameter: {exc}") from exc


def range_params(
    params: Params, *, default_since_ns: int = HOUR_NS, max_length_ns: int = 0
) -> TimeRange:
    """``start``/``end``/``since`` with their defaults and ordering rule."""
    now = now_ns()
    end = timestamp_param(params, "end", now)
    since = duration_param(params, "since", default_since_ns)
    start = timestamp_param(params, "start", min(end, now) - since)
    if end <= start:
        raise BadRequestError("end timestamp must not be before or equal to start time")
    if max_length_ns and end - start > max_length_ns:
        raise BadRequestError(
            "the query time range exceeds the limit (query length: "
            f"{format_go_duration(end - start)}, limit: {format_prom_duration(max_length_ns)})"
        )
    return TimeRange(start, end)


def limit_param(
    params: Params, *, default: int = 100, maximum: int = 0, zero_is_default: bool = False
) -> int:
    """``limit``: a positive integer, at most ``maximum`` when that is set.

    With ``zero_is_default``, ``0`` (as the volume endpoints take it) means ``default``.
    """
    text = params.get("limit")
    if text is None:
        return default
    try:
        limit = int(text)
    except ValueError as exc:
        raise BadRequestError(
            f"could not parse 'limit' parameter: {text!r} is not an integer"
        ) from exc
    if limit == 0 and zero_is_default:
        return default
    if limit <= 0:
        raise BadRequestError("limit must be a positive value")
    if maximum and limit > maximum:
        raise BadRequestError(
            "max entries limit per query exceeded, limit > max_entries_limit_per_query "
            f"({limit} > {maximum})"
        )
    return limit


def direction_param(params: Params) -> Direction:
    """``direction``: forward or backward in any case, default backward."""
    text = params.get("direction")
    if text is None:
        return Direction.BACKWARD
    try:
        return Direction(text.lower())
    except ValueError as exc:
        raise BadRequestError(f"invalid direction '{text}'") from exc


def _seconds_or_duration_ns(params: Params, name: str) -> int | None:
    """Go's ``parseSecondsOrDuration``: float seconds (``strconv.ParseFloat``), else a
    Prometheus duration; a value past int64 nanoseconds is an error, and NaN converts as
    Go's does on amd64 (the most negative duration)."""
    text = params.get(name)
    if text is None:
        return None
    seconds = parse_float(text)
    if seconds is not None:
        if math.isnan(seconds):
            return _MIN_INT64
        ns = seconds * 1e9
        if not float(_MIN_INT64) <= ns <= float(_MAX_INT64):
            raise BadRequestError(f'cannot parse "{text}" to a valid duration. It overflows int64')
        return min(round(ns), _MAX_INT64)
    try:
        return parse_prom_or_go_duration(text)
    except ValueError as exc:
        raise BadRequestError(f'cannot parse "{text}" to a valid duration') from exc


def step_param(params: Params, window: TimeRange) -> int:
    """``step`` in ns (ms precision); default ``max(floor((end - start) / 250 s), 1 s)``."""
    step = _seconds_or_duration_ns(params, "step")
    if step is None:
        seconds = max((window.end_ns - window.start_ns) // 250 // 1_000_000_000, 1)
        return seconds * 1_000_000_000
    step = step // 1_000_000 * 1_000_000
    if step <= 0:
        raise BadRequestError(
            "zero or negative query resolution step widths are not accepted. Try a positive integer"
        )
    if (window.end_ns - window.start_ns) // step > MAX_POINTS:
        raise BadRequestError(
            "exceeded maximum resolution of 11,000 points per time series. "
            "Try increasing the value of the step parameter"
        )
    return step


def interval_param(params: Params) -> int:
    """``interval`` in ns, default 0."""
    interval = _seconds_or_duration_ns(params, "interval")
    if interval is None:
        return 0
    if interval < 0:
        raise BadRequestError("interval must be >= 0")
    return interval

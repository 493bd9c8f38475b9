"""Time template functions: ``__timestamp__``, ``now``, ``date``, ``toDate`` and friends.

The server's local zone is UTC, as in Loki's container images: ``date`` formats in UTC
and ``toDate`` parses in UTC.
"""

from __future__ import annotations

import re
import time
from typing import Any, Final

from gocompat.strconv import quote
from gocompat.template.errors import GoError
from gocompat.template.funcspec import CallContext, Func
from gocompat.template.timefmt import ZERO_UNIX, GoTime, format_time, load_location, unix_time
from gocompat.template.timeparse import parse_time
from gocompat.template.values import Int64

__all__ = ["TIME_FUNCTIONS"]

_ZERO_TIME: Final = GoTime(ZERO_UNIX)
_DECIMAL: Final = re.compile(r"[+-]?[0-9]+")


def _now() -> GoTime:
    return unix_time(0, time.time_ns())


def _date(layout: str, value: Any) -> str:
    if isinstance(value, GoTime):
        moment = GoTime(value.sec, value.nsec)
    elif isinstance(value, int) and not isinstance(value, bool) and type(value) in (int, Int64):
        moment = unix_time(int(value))
    else:
        moment = _now()
    return format_time(moment, layout)


def _to_date(layout: str, text: str) -> GoTime:
    try:
        return parse_time(layout, text, None)
    except ValueError:
        return _ZERO_TIME


def _to_date_in_zone(layout: str, zone: str, text: str) -> GoTime:
    try:
        loc = load_location(zone)
    except ValueError:
        loc = None
    try:
        return parse_time(layout, text, loc)
    except ValueError:
        return _ZERO_TIME


def _unix_milli(t: GoTime) -> str:
    return str(t.sec * 1000 + t.nsec // 1_000_000)


_EPOCH_SCALE: Final = {5: (86400, 0), 10: (1, 0), 13: (0, 10**6), 16: (0, 10**3), 19: (0, 1)}


def _unix_to_time(epoch: str) -> GoTime:
    reason = ""
    if not _DECIMAL.fullmatch(epoch):
        reason = "invalid syntax"
    elif not -(1 << 63) <= int(epoch) < 1 << 63:
        reason = "value out of range"
    if reason:
        raise GoError(
            f"unable to parse time '{epoch}': strconv.ParseInt: parsing {quote(epoch)}: {reason}"
        )
    if len(epoch) not in _EPOCH_SCALE:
        raise GoError(f"unable to parse time '{epoch}': %!w(<nil>)")
    seconds, nanos = _EPOCH_SCALE[len(epoch)]
    if seconds:
        return unix_time(int(epoch) * seconds)
    return unix_time(0, int(epoch) * nanos)


def _line(ctx: CallContext) -> str:
    return ctx.line


def _timestamp(ctx: CallContext) -> GoTime:
    return unix_time(0, ctx.timestamp_ns)


TIME_FUNCTIONS: Final = {
    "__line__": Func(_line, (), context=True),
    "__timestamp__": Func(_timestamp, (), context=True),
    "now": Func(_now, ()),
    "date": Func(_date, ("string", "any")),
    "toDate": Func(_to_date, ("string", "string")),
    "toDateInZone": Func(_to_date_in_zone, ("string", "string", "string")),
    "unixEpoch": Func(lambda t: str(t.sec), ("time",)),
    "unixEpochMillis": Func(_unix_milli, ("time",)),
    "unixEpochNanos": Func(lambda t: str(t.unix_nano()), ("time",)),
    "unixToTime": Func(_unix_to_time, ("string",)),
}

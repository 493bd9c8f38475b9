"""Methods of ``time.Time`` reachable as fields, e.g. ``{{(__timestamp__).Unix}}``.

``Month`` and ``Weekday`` return their English names (Go returns named integer types
that print as names).
"""

from __future__ import annotations

from typing import Final

from gocompat.template.funcspec import Func
from gocompat.template.timefmt import DAYS, MONTHS, ZERO_UNIX, GoTime, format_time
from gocompat.template.values import Int64

__all__ = ["TIME_METHODS"]


def _civil(index: int) -> Func:
    return Func(lambda t: t.civil()[index], ())


TIME_METHODS: Final = {
    "Unix": Func(lambda t: Int64(t.sec), ()),
    "UnixMilli": Func(lambda t: Int64(t.sec * 1000 + t.nsec // 10**6), ()),
    "UnixMicro": Func(lambda t: Int64(t.sec * 10**6 + t.nsec // 1000), ()),
    "UnixNano": Func(lambda t: Int64(t.unix_nano()), ()),
    "Year": _civil(0),
    "Month": Func(lambda t: MONTHS[t.civil()[1] - 1], ()),
    "Day": _civil(2),
    "Hour": _civil(3),
    "Minute": _civil(4),
    "Second": _civil(5),
    "Nanosecond": Func(lambda t: t.nsec, ()),
    "YearDay": Func(lambda t: t.yday(), ()),
    "Weekday": Func(lambda t: DAYS[t.weekday()], ()),
    "String": Func(lambda t: t.string(), ()),
    "Format": Func(format_time, ("string",)),
    "UTC": Func(lambda t: GoTime(t.sec, t.nsec), ()),
    "Local": Func(lambda t: GoTime(t.sec, t.nsec), ()),
    "IsZero": Func(lambda t: t.sec == ZERO_UNIX and t.nsec == 0, ()),
}

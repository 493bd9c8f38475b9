"""Go's ``time.ParseInLocation`` with reference layouts."""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from gocompat.template.timefmt import (
    DAYS,
    MONTHS,
    GoTime,
    days_from_civil,
    next_std_chunk,
    time_in,
    zone_at,
)

__all__ = ["parse_time"]


class _ParseError(ValueError):
    pass


@dataclass(slots=True)
class _Fields:
    year: int = 0
    month: int = -1
    day: int = -1
    yday: int = -1
    hour: int = 0
    minute: int = 0
    second: int = 0
    nsec: int = 0
    pm: bool = False
    am: bool = False
    utc: bool = False
    offset: int | None = None
    zone: str = ""


def _digit(value: str, i: int) -> bool:
    return i < len(value) and "0" <= value[i] <= "9"


def _getnum(value: str, fixed: bool, width: int = 2) -> tuple[int, str]:
    if not _digit(value, 0):
        raise _ParseError("bad number")
    n = 1
    while n < width and _digit(value, n):
        n += 1
    if fixed and n < width:
        raise _ParseError("bad number")
    return int(value[:n]), value[n:]


def _skip(value: str, prefix: str) -> str:
    while prefix:
        if prefix[0] == " ":
            if value and value[0] != " ":
                raise _ParseError("bad prefix")
            prefix = prefix.lstrip(" ")
            value = value.lstrip(" ")
            continue
        if not value or value[0] != prefix[0]:
            raise _ParseError("bad prefix")
        prefix, value = prefix[1:], value[1:]
    return value


def _lookup(names: list[str] | tuple[str, ...], value: str) -> tuple[int, str]:
    for index, name in enumerate(names):
        if value[: len(name)].lower() == name.lower():
            return index, value[len(name) :]
    raise _ParseError("bad name")


def _nanos(value: str, nbytes: int) -> int:
    digits = value[1 : min(nbytes, 10)]
    if not digits.isdigit():
        raise _ParseError("bad fraction")
    return int(digits.ljust(9, "0"))


def _signed_offset(value: str) -> int:
    if not value or value[0] not in "+-":
        return 0
    n = 1
    while _digit(value, n):
        n += 1
    if n == 1 or int(value[1:n]) > 23:
        return 0
    return n


def _zone_length(value: str) -> int:
    if len(value) < 3:
        return 0
    if value[:4] in ("ChST", "MeST"):
        return 4
    if value[:3] == "GMT":
        return 3 + _signed_offset(value[3:])
    if value[0] in "+-":
        return _signed_offset(value)
    upper = 0
    while upper < min(6, len(value)) and "A" <= value[upper] <= "Z":
        upper += 1
    if upper == 5 and value[4] == "T":
        return 5
    if upper == 4 and (value[3] == "T" or value[:4] == "WITA"):
        return 4
    return 3 if upper == 3 else 0


_TZ_SHAPES: Final = {
    "NumTZ": (5, (1, 3), (3, 5), None, ()),
    "NumShortTZ": (3, (1, 3), None, None, ()),
    "NumColonTZ": (6, (1, 3), (4, 6), None, (3,)),
    "NumColonSecondsTZ": (9, (1, 3), (4, 6), (7, 9), (3, 6)),
    "NumSecondsTz": (7, (1, 3), (3, 5), (5, 7), ()),
}


def _parse_offset(value: str, code: str, f: _Fields) -> str:
    if code.startswith("ISO8601") and value[:1] == "Z":
        f.utc = True
        return value[1:]
    size, hours, minutes, seconds, colons = _TZ_SHAPES[code.removeprefix("ISO8601")]
    if len(value) < size or value[0] not in "+-" or any(value[i] != ":" for i in colons):
        raise _ParseError("bad offset")
    parts = [value[hours[0] : hours[1]]]
    parts.append(value[minutes[0] : minutes[1]] if minutes else "00")
    parts.append(value[seconds[0] : seconds[1]] if seconds else "00")
    if not all(p.isdigit() for p in parts):
        raise _ParseError("bad offset")
    total = (int(parts[0]) * 60 + int(parts[1])) * 60 + int(parts[2])
    f.offset = -total if value[0] == "-" else total
    return value[size:]


def _parse_second(value: str, layout: str, code: str, f: _Fields) -> str:
    f.second, value = _getnum(value, code == "ZeroSecond")
    if len(value) >= 2 and value[0] in ".," and _digit(value, 1):
        if next_std_chunk(layout)[1].startswith("Frac"):
            return value
        n = 2
        while _digit(value, n):
            n += 1
        f.nsec = _nanos(value, n)
        value = value[n:]
    return value


def _parse_std(value: str, code: str, layout: str, f: _Fields) -> str:
    if code == "Year":
        if len(value) < 2 or not value[:2].isdigit():
            raise _ParseError("bad year")
        f.year = int(value[:2]) + (1900 if int(value[:2]) >= 69 else 2000)
        return value[2:]
    if code == "LongYear":
        if len(value) < 4 or not value[:4].isdigit():
            raise _ParseError("bad year")
        f.year = int(value[:4])
        return value[4:]
    if code in ("Month", "LongMonth"):
        names = [m[:3] for m in MONTHS] if code == "Month" else MONTHS
        index, value = _lookup(names, value)
        f.month = index + 1
        return value
    if code in ("NumMonth", "ZeroMonth"):
        f.month, value = _getnum(value, code == "ZeroMonth")
        if not 1 <= f.month <= 12:
            raise _ParseError("month out of range")
        return value
    if code in ("WeekDay", "LongWeekDay"):
        return _lookup([d[:3] for d in DAYS] if code == "WeekDay" else DAYS, value)[1]
    if code in ("Day", "UnderDay", "ZeroDay"):
        if code == "UnderDay" and value[:1] == " ":
            value = value[1:]
        f.day, value = _getnum(value, code == "ZeroDay")
        return value
    if code in ("UnderYearDay", "ZeroYearDay"):
        for _ in range(2):
            if code == "UnderYearDay" and value[:1] == " ":
                value = value[1:]
        f.yday, value = _getnum(value, code == "ZeroYearDay", 3)
        return value
    if code in ("Hour", "Hour12", "ZeroHour12"):
        f.hour, value = _getnum(value, code == "ZeroHour12")
        if f.hour > (23 if code == "Hour" else 12):
            raise _ParseError("hour out of range")
        return value
    if code in ("Minute", "ZeroMinute"):
        f.minute, value = _getnum(value, code == "ZeroMinute")
        if f.minute > 59:
            raise _ParseError("minute out of range")
        return value
    if code in ("Second", "ZeroSecond"):
        return _parse_second(value, layout, code, f)
    if code in ("PM", "pm"):
        pair = ("PM", "AM") if code == "PM" else ("pm", "am")
        if value[:2] not in pair:
            raise _ParseError("bad am/pm")
        f.pm, f.am = value[:2] == pair[0], value[:2] == pair[1]
        return value[2:]
    if code.startswith("Frac"):
        return _parse_frac(value, code, f)
    if code == "TZ":
        if value[:3] == "UTC":
            f.utc = True
            return value[3:]
        n = _zone_length(value)
        if n == 0:
            raise _ParseError("bad zone")
        f.zone = value[:n]
        return value[n:]
    return _parse_offset(value, code, f)


def _parse_frac(value: str, code: str, f: _Fields) -> str:
    if code.startswith("Frac0"):
        ndigit = 1 + int(code[6:])
        if len(value) < ndigit:
            raise _ParseError("bad fraction")
        f.nsec = _nanos(value, ndigit)
        return value[ndigit:]
    if len(value) < 2 or value[0] not in ".," or not _digit(value, 1):
        return value
    i = 0
    while _digit(value, i + 1):
        i += 1
    f.nsec = _nanos(value, 1 + i)
    return value[1 + i :]


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _resolve_date(f: _Fields) -> None:
    if f.pm and f.hour < 12:
        f.hour += 12
    elif f.am and f.hour == 12:
        f.hour = 0
    if f.yday >= 0:
        leap = _days_in(2, f.year) == 29
        if f.yday < 1 or f.yday > 365 + leap:
            raise _ParseError("day-of-year out of range")
        month, day = 1, f.yday
        while day > _days_in(month, f.year):
            day -= _days_in(month, f.year)
            month += 1
        if (f.month >= 0 and f.month != month) or (f.day >= 0 and f.day != day):
            raise _ParseError("day-of-year does not match")
        f.month, f.day = month, day
    f.month = 1 if f.month < 0 else f.month
    f.day = 1 if f.day < 0 else f.day
    if f.day < 1 or f.day > _days_in(f.month, f.year):
        raise _ParseError("day out of range")


def _date_in(wall: int, loc: zoneinfo.ZoneInfo | None) -> int:
    """Go's ``time.Date`` in ``loc``: the instant whose wall clock there is ``wall``."""
    _, offset = zone_at(wall, loc)
    if offset:
        _, at_utc = zone_at(wall - offset, loc)
        offset = at_utc
    return wall - offset


@lru_cache(maxsize=64)
def _zones_near(loc: zoneinfo.ZoneInfo | None, year_index: int) -> tuple[tuple[str, int], ...]:
    """The (abbreviation, offset) pairs ``loc`` uses within two years of ``year_index``."""
    found: list[tuple[str, int]] = []
    start = year_index * _YEAR
    for month in range(-24, 25):
        zone = zone_at(start + month * _YEAR // 12, loc)
        if zone not in found:
            found.append(zone)
    return tuple(found)


def _lookup_name(loc: zoneinfo.ZoneInfo | None, name: str, unix: int) -> int | None:
    """Go's ``Location.lookupName``: the offset of zone ``name`` in ``loc`` near ``unix``,
    preferring a zone of that name in effect at that time."""
    zones = [z for z in _zones_near(loc, unix // _YEAR) if z[0] == name]
    for _, offset in zones:
        in_effect, effective = zone_at(unix - offset, loc)
        if in_effect == name:
            return effective
    return zones[0][1] if zones else None


_YEAR: Final = 365 * 86400


def _build(f: _Fields, loc: zoneinfo.ZoneInfo | None) -> GoTime:
    wall = days_from_civil(f.year, f.month, f.day) * 86400 + f.hour * 3600 + f.minute * 60
    wall += f.second
    if f.utc:
        return GoTime(wall, f.nsec)
    if f.offset is not None:
        unix = wall - f.offset
        local = time_in(unix, f.nsec, loc)
        if local.offset == f.offset and (not f.zone or local.zone == f.zone):
            return local
        return GoTime(unix, f.nsec, f.offset, f.zone)
    if f.zone:
        offset = _lookup_name(loc, f.zone, wall)
        if offset is not None:
            return time_in(wall - offset, f.nsec, loc)
        # An unknown abbreviation: the wall clock read as UTC, under a made-up zone.
        offset = int(f.zone[3:]) * 3600 if len(f.zone) > 3 and f.zone.startswith("GMT") else 0
        return GoTime(wall, f.nsec, offset, f.zone)
    return time_in(_date_in(wall, loc), f.nsec, loc)


def parse_time(layout: str, value: str, loc: zoneinfo.ZoneInfo | None) -> GoTime:
    """``time.ParseInLocation(layout, value, loc)``; raises ValueError when it fails."""
    fields = _Fields()
    while True:
        prefix, code, suffix = next_std_chunk(layout)
        value = _skip(value, prefix)
        if not code:
            if value:
                raise _ParseError("extra text")
            break
        layout = suffix
        value = _parse_std(value, code, layout, fields)
    _resolve_date(fields)
    return _build(fields, loc)

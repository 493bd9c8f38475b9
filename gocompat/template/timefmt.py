"""Go's ``time.Time`` and its reference-layout formatting (``2006-01-02 15:04:05``)."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

__all__ = [
    "GoTime",
    "civil_from_days",
    "days_from_civil",
    "format_time",
    "load_location",
    "next_std_chunk",
    "time_in",
    "unix_time",
    "zone_at",
]

MONTHS: Final = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
DAYS: Final = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
ZERO_UNIX: Final = -62135596800


def civil_from_days(days: int) -> tuple[int, int, int]:
    """Proleptic Gregorian (year, month, day) of a day count since 1970-01-01."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def days_from_civil(year: int, month: int, day: int) -> int:
    """Day count since 1970-01-01 of a proleptic Gregorian date."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


@dataclass(frozen=True, slots=True)
class GoTime:
    """A Go ``time.Time``: an instant plus the zone it displays in."""

    sec: int
    nsec: int = 0
    offset: int = 0
    zone: str = "UTC"

    def string(self) -> str:
        """``Time.String()`` without the monotonic clock reading."""
        return format_time(self, "2006-01-02 15:04:05.999999999 -0700 MST")

    def unix_nano(self) -> int:
        """``Time.UnixNano()`` (wraps like Go outside the int64 range)."""
        value = self.sec * 1_000_000_000 + self.nsec
        return (value + (1 << 63)) % (1 << 64) - (1 << 63)

    def civil(self) -> tuple[int, int, int, int, int, int]:
        """Wall clock (year, month, day, hour, minute, second) in the time's zone."""
        local = self.sec + self.offset
        days, secs = divmod(local, 86400)
        year, month, day = civil_from_days(days)
        return year, month, day, secs // 3600, secs // 60 % 60, secs % 60

    def weekday(self) -> int:
        """Day of the week, 0 = Sunday."""
        return ((self.sec + self.offset) // 86400 + 4) % 7

    def yday(self) -> int:
        """Day of the year, 1-based."""
        year = self.civil()[0]
        return (self.sec + self.offset) // 86400 - days_from_civil(year, 1, 1) + 1


def unix_time(sec: int, nsec: int = 0) -> GoTime:
    """``time.Unix(sec, nsec)`` in the server's local zone (UTC)."""
    extra, nsec = divmod(nsec, 1_000_000_000)
    return GoTime(sec + extra, nsec)


@lru_cache(maxsize=256)
def load_location(name: str) -> zoneinfo.ZoneInfo | None:
    """``time.LoadLocation``: None means UTC; raises ValueError for unknown zones."""
    if name in ("", "UTC", "Local"):
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValueError(f"unknown time zone {name}") from exc


def zone_at(sec: int, loc: zoneinfo.ZoneInfo | None) -> tuple[str, int]:
    """The zone abbreviation and UTC offset (seconds) of ``loc`` at instant ``sec``.

    Instants outside the years Python's datetime holds get the zone of the same wall
    clock moment in year 1 or 9999: local mean time before any rule, the last rule after.
    """
    if loc is None:
        return "UTC", 0
    try:
        local = dt.datetime.fromtimestamp(sec, loc)
    except (OverflowError, OSError, ValueError):
        year, month, day = civil_from_days(sec // 86400)
        if month == 2 and day == 29:
            day = 28
        naive = dt.datetime(1 if year < 1 else 9999, month, day, tzinfo=loc)
        local = naive + dt.timedelta(seconds=sec % 86400)
    offset = local.utcoffset()
    return local.tzname() or "", int(offset.total_seconds()) if offset is not None else 0


def time_in(sec: int, nsec: int, loc: zoneinfo.ZoneInfo | None) -> GoTime:
    """The instant ``sec``/``nsec`` displayed in ``loc``."""
    if loc is None:
        return GoTime(sec, nsec)
    name, offset = zone_at(sec, loc)
    return GoTime(sec, nsec, offset, name)


_STD0X: Final = ("ZeroMonth", "ZeroDay", "ZeroHour12", "ZeroMinute", "ZeroSecond", "Year")
_TZ_CHUNKS: Final = (
    ("070000", "NumSecondsTz"),
    ("07:00:00", "NumColonSecondsTZ"),
    ("0700", "NumTZ"),
    ("07:00", "NumColonTZ"),
    ("07", "NumShortTZ"),
)


def _lower_next(layout: str, index: int) -> bool:
    return index < len(layout) and "a" <= layout[index] <= "z"


def _chunk_at(layout: str, i: int) -> tuple[int, str, int] | None:
    """The std element starting at ``i``: (prefix end, code, suffix start)."""
    c = layout[i]
    rest = layout[i:]
    if c == "J" and rest.startswith("Jan"):
        if rest.startswith("January"):
            return i, "LongMonth", i + 7
        if not _lower_next(layout, i + 3):
            return i, "Month", i + 3
    elif c == "M" and rest.startswith("Mon"):
        if rest.startswith("Monday"):
            return i, "LongWeekDay", i + 6
        if not _lower_next(layout, i + 3):
            return i, "WeekDay", i + 3
    elif c == "M" and rest.startswith("MST"):
        return i, "TZ", i + 3
    elif c == "0" and len(rest) >= 2 and "1" <= rest[1] <= "6":
        return i, _STD0X[ord(rest[1]) - ord("1")], i + 2
    elif c == "0" and rest.startswith("002"):
        return i, "ZeroYearDay", i + 3
    elif c == "1":
        return (i, "Hour", i + 2) if rest.startswith("15") else (i, "NumMonth", i + 1)
    elif c == "2":
        return (i, "LongYear", i + 4) if rest.startswith("2006") else (i, "Day", i + 1)
    elif c == "_" and rest.startswith("_2"):
        if rest.startswith("_2006"):
            return i + 1, "LongYear", i + 5
        return i, "UnderDay", i + 2
    elif c == "_" and rest.startswith("__2"):
        return i, "UnderYearDay", i + 3
    elif c in "345":
        return i, ("Hour12", "Minute", "Second")[ord(c) - ord("3")], i + 1
    elif c == "P" and rest.startswith("PM"):
        return i, "PM", i + 2
    elif c == "p" and rest.startswith("pm"):
        return i, "pm", i + 2
    elif c in "-Z":
        for text, code in _TZ_CHUNKS:
            if rest[1:].startswith(text):
                return i, ("ISO8601" if c == "Z" else "") + code, i + 1 + len(text)
    elif c in ".," and len(rest) >= 2 and rest[1] in "09":
        j = i + 1
        while j < len(layout) and layout[j] == rest[1]:
            j += 1
        if not (j < len(layout) and layout[j].isdigit()):
            kind = "Frac0" if rest[1] == "0" else "Frac9"
            return i, f"{kind}{c}{j - i - 1}", j
    return None


def next_std_chunk(layout: str) -> tuple[str, str, str]:
    """Split ``layout`` into (literal prefix, std element code, suffix); code "" at end."""
    for i in range(len(layout)):
        found = _chunk_at(layout, i)
        if found is not None:
            start, code, end = found
            return layout[:start], code, layout[end:]
    return layout, "", ""


def _tz_offset(offset: int, colon: bool, with_seconds: bool, short: bool) -> str:
    sign = "-" if offset < 0 else "+"
    offset = abs(offset)
    hours, minutes, seconds = offset // 3600, offset // 60 % 60, offset % 60
    sep = ":" if colon else ""
    text = f"{sign}{hours:02d}"
    if not short:
        text += f"{sep}{minutes:02d}"
    if with_seconds:
        text += f"{sep}{seconds:02d}"
    return text


def _format_zone(t: GoTime, code: str) -> str:
    if code == "TZ":
        if t.zone:
            return t.zone
        return _tz_offset(t.offset, False, False, False)
    if code.startswith("ISO8601") and t.offset == 0:
        return "Z"
    base = code.removeprefix("ISO8601")
    colon = "Colon" in base
    seconds = "Seconds" in base
    return _tz_offset(t.offset, colon, seconds, base == "NumShortTZ")


def _format_frac(nsec: int, code: str) -> str:
    sep, digits = code[5], int(code[6:])
    frac = f"{nsec:09d}"[:digits]
    if code.startswith("Frac9"):
        frac = frac.rstrip("0")
        return sep + frac if frac else ""
    return sep + frac


_Civil = tuple[int, int, int, int, int, int]
_STD_FORMATTERS: Final[dict[str, Callable[[GoTime, _Civil], str]]] = {
    "Year": lambda t, c: f"{c[0] % 100:02d}",
    "LongYear": lambda t, c: f"{c[0]:04d}" if c[0] >= 0 else f"-{-c[0]:04d}",
    "Month": lambda t, c: MONTHS[c[1] - 1][:3],
    "LongMonth": lambda t, c: MONTHS[c[1] - 1],
    "NumMonth": lambda t, c: str(c[1]),
    "ZeroMonth": lambda t, c: f"{c[1]:02d}",
    "WeekDay": lambda t, c: DAYS[t.weekday()][:3],
    "LongWeekDay": lambda t, c: DAYS[t.weekday()],
    "Day": lambda t, c: str(c[2]),
    "UnderDay": lambda t, c: f"{c[2]:2d}",
    "ZeroDay": lambda t, c: f"{c[2]:02d}",
    "UnderYearDay": lambda t, c: f"{t.yday():3d}",
    "ZeroYearDay": lambda t, c: f"{t.yday():03d}",
    "Hour": lambda t, c: f"{c[3]:02d}",
    "Hour12": lambda t, c: str(c[3] % 12 or 12),
    "ZeroHour12": lambda t, c: f"{c[3] % 12 or 12:02d}",
    "Minute": lambda t, c: str(c[4]),
    "ZeroMinute": lambda t, c: f"{c[4]:02d}",
    "Second": lambda t, c: str(c[5]),
    "ZeroSecond": lambda t, c: f"{c[5]:02d}",
    "PM": lambda t, c: "PM" if c[3] >= 12 else "AM",
    "pm": lambda t, c: "pm" if c[3] >= 12 else "am",
}


def _format_std(t: GoTime, code: str, civil: _Civil) -> str:
    formatter = _STD_FORMATTERS.get(code)
    if formatter is not None:
        return formatter(t, civil)
    if code.startswith("Frac"):
        return _format_frac(t.nsec, code)
    return _format_zone(t, code)


@lru_cache(maxsize=256)
def _layout_chunks(layout: str) -> tuple[tuple[str, str], ...]:
    chunks: list[tuple[str, str]] = []
    while layout:
        prefix, code, layout = next_std_chunk(layout)
        chunks.append((prefix, code))
        if not code:
            break
    return tuple(chunks)


def format_time(t: GoTime, layout: str) -> str:
    """``Time.Format(layout)``."""
    civil = t.civil()
    out: list[str] = []
    for prefix, code in _layout_chunks(layout):
        out.append(prefix)
        if code:
            out.append(_format_std(t, code, civil))
    return "".join(out)

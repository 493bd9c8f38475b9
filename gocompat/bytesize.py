"""Byte sizes as the reference's config and messages write them.

Config values (``max_line_size: 256KB``, ``per_stream_rate_limit: 3MB``) are parsed and
printed as the ``c2h5oh/datasize`` package does behind Loki's ``flagext.ByteSize``: binary
units (``KB`` = 1024), a whole number of the largest unit that divides evenly. Sizes in
limit messages use go-humanize's ``IBytes`` (``1.5 MiB``).
"""

from __future__ import annotations

import math

__all__ = ["format_datasize", "format_humanize_ibytes", "parse_datasize"]

_MAX_UINT64 = (1 << 64) - 1
_UNITS = (
    ("EB", 1 << 60),
    ("PB", 1 << 50),
    ("TB", 1 << 40),
    ("GB", 1 << 30),
    ("MB", 1 << 20),
    ("KB", 1 << 10),
)
_SUFFIXES: dict[str, int] = {"": 1, "b": 1, "byte": 1}
for _names, _size in (
    (("k", "kb", "kilo", "kilobyte", "kilobytes"), 1 << 10),
    (("m", "mb", "mega", "megabyte", "megabytes"), 1 << 20),
    (("g", "gb", "giga", "gigabyte", "gigabytes"), 1 << 30),
    (("t", "tb", "tera", "terabyte", "terabytes"), 1 << 40),
    (("p", "pb", "peta", "petabyte", "petabytes"), 1 << 50),
    (("e", "eb"), 1 << 60),
):
    for _name in _names:
        _SUFFIXES[_name] = _size
_IEC = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def parse_datasize(text: str) -> int:
    """Bytes of ``text`` (``256KB``, ``3mb``, ``1024``); ValueError when it is not a size.

    The reference upper-cases the text first, so ``mb`` means megabytes, not bits.
    """
    upper = text.upper()
    digits = len(upper) - len(upper.lstrip("0123456789"))
    if digits == 0:
        raise ValueError(f'strconv.UnmarshalText: parsing "{upper}": invalid syntax')
    unit = upper[digits:].strip().lower()
    size = _SUFFIXES.get(unit)
    if size is None:
        raise ValueError(f'strconv.UnmarshalText: parsing "{upper}": invalid syntax')
    value = int(upper[:digits]) * size
    if value > _MAX_UINT64:
        raise ValueError(f'strconv.UnmarshalText: parsing "{upper}": value out of range')
    return value


def format_datasize(size: int) -> str:
    """``size`` in the largest binary unit that divides it (``3MB``, ``1536B``, ``0B``)."""
    if size == 0:
        return "0B"
    for name, unit in _UNITS:
        if size % unit == 0:
            return f"{size // unit}{name}"
    return f"{size}B"


def format_humanize_ibytes(size: int) -> str:
    """go-humanize ``IBytes``: ``512 B``, ``1.5 KiB``, ``20 MiB``."""
    if size < 10:
        return f"{size} B"
    exp = min(math.floor(math.log(size) / math.log(1024)), len(_IEC) - 1)
    value = math.floor(size / 1024**exp * 10 + 0.5) / 10
    return f"{value:.1f} {_IEC[exp]}" if value < 10 else f"{value:.0f} {_IEC[exp]}"

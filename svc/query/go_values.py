"""``logql_parse_value(kind, text)``: label values read as Go reads them, for the rows the
compiled SQL does not convert itself (``logql_to_sql.sql.conversions``).

Kinds: ``float`` (``strconv.ParseFloat``), ``duration`` (``time.ParseDuration``, also in
nanoseconds), ``bytes`` (go-humanize ``ParseBytes``). A text that does not convert gets
Go's error message instead of a value.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from gocompat.durations import parse_go_duration, parse_humanize_bytes
from gocompat.strconv import parse_float_strict

__all__ = ["VALUE_TYPE", "parse_values_batch"]

VALUE_TYPE = "STRUCT(value DOUBLE, nanos BIGINT, error VARCHAR)"
"""The SQL type the function returns."""

_ARROW_TYPE = pa.struct([("value", pa.float64()), ("nanos", pa.int64()), ("error", pa.string())])

Parsed = tuple[float | None, int | None, str | None]


def _float(text: str) -> Parsed:
    return parse_float_strict(text), None, None


def _duration(text: str) -> Parsed:
    nanos = parse_go_duration(text)
    # Duration.Seconds(): whole seconds and the rest, each as a float (Go truncates both).
    whole = abs(nanos) // 10**9 * (1 if nanos >= 0 else -1)
    return float(whole) + float(nanos - whole * 10**9) / 1e9, nanos, None


def _bytes(text: str) -> Parsed:
    return float(parse_humanize_bytes(text)), None, None


_KINDS: dict[str, Callable[[str], Parsed]] = {
    "float": _float,
    "duration": _duration,
    "bytes": _bytes,
}


def parse_value(kind: str, text: str) -> Parsed:
    """``(value, nanoseconds, error)`` of one text."""
    try:
        return _KINDS[kind](text)
    except ValueError as exc:
        return None, None, str(exc)


def parse_values_batch(
    kinds: pa.Array | pa.ChunkedArray, texts: pa.Array | pa.ChunkedArray
) -> pa.Array:
    """The function over one batch (a constant kind, any texts)."""
    kind_values = kinds.to_pylist()
    rows = [
        None if kind is None or text is None else parse_value(kind, text)
        for kind, text in zip(kind_values, texts.to_pylist(), strict=True)
    ]
    return pa.array(
        [
            None if row is None else {"value": row[0], "nanos": row[1], "error": row[2]}
            for row in rows
        ],
        _ARROW_TYPE,
    )

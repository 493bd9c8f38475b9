"""Arrow columns of an SQL result as JSON and CSV values.

Timestamps become RFC 3339 strings in UTC with nanoseconds, trailing zeros cut (Go's
``RFC3339Nano``, as the other APIs write them), dates and times ISO 8601 text, intervals
ISO 8601 durations, binary values base64; maps become objects. Whole columns are
converted with Arrow compute functions where one exists, so 10,000 rows cost milliseconds.
"""

from __future__ import annotations

import base64
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from gocompat.durations import format_go_duration

__all__ = ["csv_ready", "json_values", "rfc3339_strings", "text_ready"]

_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_JSON = msgspec.json.Encoder(decimal_format="number")


def rfc3339_strings(array: pa.Array) -> pa.Array:
    """A timestamp column as RFC 3339 strings in UTC, nanoseconds kept, trailing zeros cut."""
    digits = _DIGITS[array.type.unit]
    scale = 10**digits
    values = array.cast(pa.int64())
    # Floor division: an instant before 1970 keeps a positive fraction.
    seconds = pc.divide(pc.subtract(values, pc.if_else(pc.less(values, 0), scale - 1, 0)), scale)
    # A cast to text is some 30 times faster than strftime: "2025-11-24 16:00:00".
    base = pc.replace_substring(
        seconds.cast(pa.timestamp("s")).cast(pa.string()), " ", "T", max_replacements=1
    )
    if not digits:
        return pc.binary_join_element_wise(base, "Z", "")
    fraction = pc.subtract(values, pc.multiply(seconds, scale)).cast(pa.string())
    fraction = pc.utf8_rtrim(pc.utf8_lpad(fraction, digits, "0"), "0")
    dot = pc.if_else(pc.equal(fraction, ""), "", ".")
    return pc.binary_join_element_wise(base, dot, fraction, "Z", "")


def _interval_text(value: Any) -> str:
    months, days, nanos = value.months, value.days, value.nanoseconds
    seconds, fraction = divmod(abs(nanos), 1_000_000_000)
    sign = "-" if nanos < 0 else ""
    text = f"{seconds}" + (f".{fraction:09d}".rstrip("0") if fraction else "")
    return f"P{months}M{days}DT{sign}{text}S"


def _is_binary(kind: pa.DataType) -> bool:
    return bool(
        pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_fixed_size_binary(kind)
    )


def _scalar_text(array: pa.Array) -> pa.Array | None:
    """A leaf column as the text JSON and CSV carry, or None when it stays as it is."""
    kind = array.type
    if pa.types.is_timestamp(kind):
        return rfc3339_strings(array)
    if pa.types.is_date(kind):
        return pc.strftime(array, format="%Y-%m-%d")
    if pa.types.is_time(kind):
        text = pc.strftime(array, format="%H:%M:%S")
        text = pc.replace_substring_regex(text, pattern=r"(\.\d*?)0+$", replacement=r"\1")
        return pc.replace_substring_regex(text, pattern=r"\.$", replacement="")
    if pa.types.is_duration(kind):
        nanos = pc.multiply(array.cast(pa.int64()), 10 ** (9 - _DIGITS[kind.unit]))
        return pa.array(
            [None if v is None else format_go_duration(v) for v in nanos.to_pylist()],
            pa.string(),
        )
    if kind == pa.month_day_nano_interval():
        return pa.array(
            [None if v is None else _interval_text(v) for v in array.to_pylist()], pa.string()
        )
    if _is_binary(kind):
        return pa.array(
            [None if v is None else base64.b64encode(v).decode() for v in array.to_pylist()],
            pa.string(),
        )
    return None


def text_ready(array: pa.Array) -> pa.Array:
    """``array`` with every value JSON cannot hold as it is (timestamps, dates, times,
    intervals, binary) turned into text, nested ones included."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        return text_ready(array.dictionary_decode())
    if isinstance(array, pa.ExtensionArray):
        return text_ready(array.storage)
    converted = _scalar_text(array)
    if converted is not None:
        return converted
    mask = array.is_null() if array.null_count else None
    if pa.types.is_map(kind):
        return pa.MapArray.from_arrays(
            array.offsets, text_ready(array.keys), text_ready(array.items), mask=mask
        )
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        cls = pa.ListArray if pa.types.is_list(kind) else pa.LargeListArray
        return cls.from_arrays(array.offsets, text_ready(array.values), mask=mask)
    if pa.types.is_fixed_size_list(kind):
        return text_ready(array.cast(pa.list_(kind.value_type)))
    if pa.types.is_struct(kind):
        children = [text_ready(array.field(i)) for i in range(kind.num_fields)]
        names = [kind.field(i).name for i in range(kind.num_fields)]
        return pa.StructArray.from_arrays(children, names=names, mask=mask)
    if pa.types.is_union(kind):
        return pa.array([_jsonable(v) for v in array.to_pylist()], pa.string())
    return array


def _jsonable(value: Any) -> str | None:
    return None if value is None else _JSON.encode(value).decode()


def _has_map(kind: pa.DataType) -> bool:
    if pa.types.is_map(kind):
        return True
    if pa.types.is_struct(kind):
        return any(_has_map(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _has_map(kind.value_type)
    return False


def _maps_as_objects(value: Any, kind: pa.DataType) -> Any:
    """A Python value of ``kind`` with its maps (lists of pairs) turned into dicts."""
    if value is None:
        return None
    if pa.types.is_map(kind):
        item = kind.item_type
        nested = _has_map(item)
        return {str(k): _maps_as_objects(v, item) if nested else v for k, v in value}
    if pa.types.is_struct(kind):
        return {
            f.name: _maps_as_objects(value[f.name], f.type)
            for f in (kind.field(i) for i in range(kind.num_fields))
        }
    return [_maps_as_objects(v, kind.value_type) for v in value]


def _json_strings(array: pa.Array) -> pa.Array | None:
    """Text values as JSON string literals (null as ``null``); None when one holds a
    control character (those take the general path)."""
    if pc.any(pc.match_substring_regex(array, "[\\x00-\\x1f]")).as_py():
        return None
    escaped = pc.replace_substring(pc.replace_substring(array, "\\", "\\\\"), '"', '\\"')
    quoted = pc.binary_join_element_wise('"', escaped, '"', "")
    return pc.fill_null(quoted, "null")


def _text_map_json(array: pa.MapArray) -> list[Any] | None:
    """A map of text to text as pre-encoded JSON objects, built column-wise (a label map
    per row as Python dicts costs some 2.5 us a row); None when it cannot be."""
    entries = array.values  # the whole child, matching the unadjusted offsets
    keys = _json_strings(entries.field(0))
    items = _json_strings(entries.field(1))
    if keys is None or items is None:
        return None
    pairs = pc.binary_join_element_wise(keys, items, ":")
    joined = pc.binary_join(pa.ListArray.from_arrays(array.offsets, pairs), ",")
    objects = pc.binary_join_element_wise("{", joined, "}", "")
    valid = array.is_valid().to_pylist()
    return [
        msgspec.Raw(text.encode()) if ok else None
        for text, ok in zip(objects.to_pylist(), valid, strict=True)
    ]


def _is_text_map(kind: pa.DataType) -> bool:
    return bool(
        pa.types.is_map(kind)
        and pa.types.is_string(kind.key_type)
        and pa.types.is_string(kind.item_type)
    )


def json_values(array: pa.Array) -> list[Any]:
    """The values of a result column as JSON-ready Python values (maps of text as
    ``msgspec.Raw`` JSON objects)."""
    if _is_text_map(array.type):
        encoded = _text_map_json(array)
        if encoded is not None:
            return encoded
    ready = text_ready(array)
    values: list[Any] = ready.to_pylist()
    if _has_map(ready.type):
        kind = ready.type
        if pa.types.is_map(kind) and not _has_map(kind.item_type):
            return [None if v is None else {str(k): x for k, x in v} for v in values]
        return [_maps_as_objects(v, kind) for v in values]
    return values


def csv_ready(array: pa.Array) -> pa.Array:
    """A result column as CSV can hold it: text for nested values (as JSON) and for what
    :func:`text_ready` converts, the rest as it is."""
    ready = text_ready(array)
    kind = ready.type
    if pa.types.is_nested(kind):
        return pa.array([_jsonable(v) for v in json_values(ready)], pa.string())
    return ready

"""OTLP ``AnyValue`` to text, and attribute lists to label pairs, as OTLP's Go model does.

Scalars render as Go's ``pcommon.Value.AsString``: ints in decimal, doubles like
JavaScript numbers, booleans as ``true``/``false``, bytes as standard base64; arrays
and maps as compact JSON with sorted keys and Go's HTML-safe escaping.
"""

from __future__ import annotations

import base64
import math
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import msgspec

from gocompat import jsonesc
from svc.ingest.labels import sanitize_label_name

if TYPE_CHECKING:
    from collections.abc import Iterable

    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

__all__ = ["any_value_text", "attribute_pairs", "format_double"]


def format_double(value: float) -> str:
    """Format a double as Go does for JSON and ``AsString`` (ECMAScript number style)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = repr(value)
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, _, exponent = text.partition("e")
        sign, digits = exponent[0], exponent[1:].lstrip("0") or "0"
        return f"{mantissa.removesuffix('.0')}e{sign}{digits}"
    text = format(Decimal(text), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _raw(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "kvlist_value":
        return {kv.key: _raw(kv.value) for kv in value.kvlist_value.values}
    if kind == "array_value":
        return [_raw(item) for item in value.array_value.values]
    if kind == "double_value":
        number = value.double_value
        text = format_double(number)
        return msgspec.Raw(text.encode("ascii")) if math.isfinite(number) else text
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    if kind is None:
        return None
    return getattr(value, kind)


def any_value_text(value: AnyValue) -> str:
    """The text of an ``AnyValue``: strings as they are, other kinds rendered."""
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return value.string_value
    if kind is None:
        return ""
    if kind == "bool_value":
        return "true" if value.bool_value else "false"
    if kind == "int_value":
        return str(value.int_value)
    if kind == "double_value":
        return format_double(value.double_value)
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii")
    if kind == "string_value_strindex":
        return str(value.string_value_strindex)
    return jsonesc.encode_sorted(_raw(value)).decode("utf-8")


def attribute_pairs(attributes: Iterable[KeyValue], prefix: str = "") -> list[tuple[str, str]]:
    """Attributes as label pairs: names sanitised, nested maps flattened with ``_``."""
    pairs: list[tuple[str, str]] = []
    for attribute in attributes:
        name = sanitize_label_name(f"{prefix}_{attribute.key}" if prefix else attribute.key)
        if attribute.value.WhichOneof("value") == "kvlist_value":
            pairs.extend(attribute_pairs(attribute.value.kvlist_value.values, name))
        else:
            pairs.append((name, any_value_text(attribute.value)))
    return pairs

"""Python stand-ins for the Go values a template sees.

Go string → ``str``, int → ``int``, int64 → :class:`Int64`, uint8 → :class:`Uint8`,
float64 → ``float``, bool → ``bool``, ``map[string]string`` (the labels) →
:class:`LabelMap`, ``map[string]interface{}`` → ``dict``, ``[]interface{}`` → ``list``,
``time.Time`` → :class:`~gocompat.template.timefmt.GoTime`. ``None`` is Go's invalid
``reflect.Value`` (prints ``<no value>``); :data:`NIL` is a nil ``interface{}`` held in
a JSON container, which fails on field access.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "MISSING",
    "NIL",
    "Int64",
    "LabelMap",
    "Uint8",
    "basic_kind",
    "dig",
    "is_true",
    "type_name",
    "wrap_int64",
]


class Int64(int):
    """A Go ``int64`` (sprig's integer math returns these, not ``int``)."""

    __slots__ = ()


class Uint8(int):
    """A Go ``uint8``, the result of indexing a string."""

    __slots__ = ()


class _Nil:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NIL"


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


NIL: Final = _Nil()
MISSING: Final = _Missing()


class LabelMap:
    """The label set, Go type ``map[string]string``; missing keys read as ``""``."""

    __slots__ = ("data",)

    def __init__(self, data: Mapping[str, str]) -> None:
        self.data = data

    def __repr__(self) -> str:
        return f"LabelMap({dict(self.data)!r})"


_INT64_MOD: Final = 1 << 64
_INT64_MIN: Final = -(1 << 63)


def wrap_int64(value: int) -> Int64:
    """Wrap an integer to int64 the way Go arithmetic overflows."""
    return Int64((value - _INT64_MIN) % _INT64_MOD + _INT64_MIN)


def dig(value: Any) -> Any:
    """Unwrap a nil interface to an invalid value (Go digs into ``interface{}``)."""
    return None if value is NIL else value


def type_name(value: Any) -> str:
    """The Go type name of a value, as error messages print it."""
    from gocompat.template.timefmt import GoTime

    kind = type(value)
    if kind in _TYPE_NAMES:
        return _TYPE_NAMES[kind]
    if isinstance(value, GoTime):
        return "time.Time"
    if value is NIL:
        return "interface {}"
    if value is None:
        return "<nil>"
    return kind.__name__


_TYPE_NAMES: Final[dict[type, str]] = {
    str: "string",
    int: "int",
    Int64: "int64",
    Uint8: "uint8",
    float: "float64",
    bool: "bool",
    complex: "complex128",
    dict: "map[string]interface {}",
    list: "[]interface {}",
    LabelMap: "map[string]string",
}


def is_true(value: Any) -> bool:
    """Go template truthiness: zero values and empty collections are false."""
    if value is None or value is NIL:
        return False
    if isinstance(value, (bool, int, float, complex)):
        return bool(value)
    if isinstance(value, (str, list, dict)):
        return len(value) > 0
    if isinstance(value, LabelMap):
        return len(value.data) > 0
    return True


def basic_kind(value: Any) -> str:
    """Go's comparison kind of a value: bool, int, uint, float, complex, string or invalid."""
    kind = type(value)
    if kind is bool:
        return "bool"
    if kind is int or kind is Int64:
        return "int"
    if kind is Uint8:
        return "uint"
    if kind is float:
        return "float"
    if kind is str:
        return "string"
    if kind is complex:
        return "complex"
    return "invalid"

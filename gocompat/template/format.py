"""Go's ``fmt`` default formatting (``%v``, ``Sprint``, ``Sprintln``)."""

from __future__ import annotations

from typing import Any

from gocompat.strconv import format_float
from gocompat.template.timefmt import GoTime
from gocompat.template.values import NIL, LabelMap

__all__ = ["format_value", "sprint", "sprintln"]


def format_value(value: Any) -> str:
    """Format ``value`` like Go's ``%v``."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[no-any-return]
    if kind is bool:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if kind is float:
        return format_float(value)
    if value is None or value is NIL:
        return "<nil>"
    if isinstance(value, GoTime):
        return value.string()
    if kind is dict:
        items = " ".join(f"{k}:{format_value(value[k])}" for k in sorted(value))
        return f"map[{items}]"
    if isinstance(value, LabelMap):
        data = value.data
        return "map[" + " ".join(f"{k}:{data[k]}" for k in sorted(data)) + "]"
    if kind is list:
        return "[" + " ".join(format_value(v) for v in value) + "]"
    if kind is complex:
        return f"({format_float(value.real)}{_signed(format_float(value.imag))}i)"
    return str(value)


def _signed(text: str) -> str:
    return text if text[0] in "+-" else "+" + text


def sprint(args: list[Any]) -> str:
    """``fmt.Sprint``: spaces between operands when neither side is a string."""
    out: list[str] = []
    prev_string = False
    for index, arg in enumerate(args):
        is_string = type(arg) is str
        if index > 0 and not is_string and not prev_string:
            out.append(" ")
        out.append(format_value(arg))
        prev_string = is_string
    return "".join(out)


def sprintln(args: list[Any]) -> str:
    """``fmt.Sprintln``: operands always separated by spaces, newline appended."""
    return " ".join(format_value(arg) for arg in args) + "\n"

"""Numeric template functions: sprig's conversions and math, Loki's bytes/duration."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

from gocompat.durations import parse_go_duration, parse_humanize_bytes
from gocompat.strconv import parse_float, parse_int
from gocompat.template.errors import GoError
from gocompat.template.funcspec import Func
from gocompat.template.values import Int64, wrap_int64

__all__ = ["NUMBER_FUNCTIONS", "parse_duration", "to_float64", "to_int64"]

_INT64_MIN: Final = -(1 << 63)


def _float_to_int(value: float) -> int:
    if math.isnan(value) or not -(2.0**63) <= value < 2.0**63:
        return _INT64_MIN
    return int(value)


_DECIMAL_TEXT: Final = re.compile(r"([-+]?[0-9]*)(\.[0-9]*)?")


def _trim_decimal(text: str) -> str:
    """spf13/cast's (v1.10) cut of a decimal text to its integer part before ParseInt:
    ``"1.9882"`` -> ``"1"``, ``"-.5"`` -> ``"-0"``; texts that are not plain decimals
    (``"1.5e3"``, ``"1.0.0"``) stay as they are, and fail to parse."""
    if "." not in text:
        return text
    match = _DECIMAL_TEXT.fullmatch(text)
    if match is None:
        return text
    whole = match.group(1)
    return whole + "0" if whole in ("", "-", "+") else whole


def to_int64(value: Any) -> int:
    """spf13/cast ``ToInt64``: numbers truncate, numeric strings parse, the rest is 0."""
    if isinstance(value, int):
        return int(value)
    if type(value) is float:
        return _float_to_int(value)
    if type(value) is str:
        return parse_int(_trim_decimal(value)) or 0
    return 0


def to_float64(value: Any) -> float:
    """spf13/cast ``ToFloat64``."""
    if type(value) is float:
        return value
    if isinstance(value, int):
        return float(value)
    if type(value) is str:
        parsed = parse_float(value)
        return 0.0 if parsed is None else parsed
    return 0.0


def _add(*values: Any) -> Int64:
    return wrap_int64(sum(to_int64(v) for v in values))


def _mul(first: Any, *values: Any) -> Int64:
    product = to_int64(first)
    for value in values:
        product = wrap_int64(product * to_int64(value))
    return wrap_int64(product)


def _divmod(a: Any, b: Any) -> tuple[int, int]:
    x, y = to_int64(a), to_int64(b)
    if y == 0:
        raise GoError("runtime error: integer divide by zero")
    quotient = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    return quotient, x - y * quotient


def _extreme(first: Any, values: tuple[Any, ...], pick: Any) -> Int64:
    return Int64(pick([to_int64(first), *(to_int64(v) for v in values)]))


def _decimal(value: Any) -> Fraction:
    number = to_float64(value)
    if math.isnan(number) or math.isinf(number):
        text = "NaN" if math.isnan(number) else ("+Inf" if number > 0 else "-Inf")
        raise GoError(f"Cannot create a Decimal from {text}")
    return Fraction(Decimal(repr(number)))


def _div_round(a: Fraction, b: Fraction) -> Fraction:
    if b == 0:
        raise GoError("decimal division by 0")
    scaled = a / b * 10**16
    rounded = math.floor(abs(scaled) + Fraction(1, 2))
    return Fraction(rounded if scaled >= 0 else -rounded, 10**16)


_DECIMAL_OPS: Final = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": _div_round,
}


def _decimal_op(op: str, first: Any, values: tuple[Any, ...]) -> float:
    result = _decimal(first)
    for value in values:
        result = _DECIMAL_OPS[op](result, _decimal(value))
    try:
        return float(result)
    except OverflowError:  # decimal's Float64 saturates to an infinity
        return math.inf if result > 0 else -math.inf


def _go_max(x: float, y: float) -> float:
    if math.inf in (x, y):
        return math.inf
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == 0 and y == 0:
        return x if math.copysign(1, x) > 0 else y
    return x if x > y else y


def _go_min(x: float, y: float) -> float:
    if -math.inf in (x, y):
        return -math.inf
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if x == 0 and y == 0:
        return x if math.copysign(1, x) < 0 else y
    return x if x < y else y


def _fold(first: Any, values: tuple[Any, ...], pick: Any) -> float:
    result = to_float64(first)
    for value in values:
        result = pick(result, to_float64(value))
    return result


def _integral(value: float, rounder: Any) -> float:
    if math.isnan(value) or math.isinf(value):
        return value
    result = float(rounder(value))
    return math.copysign(0.0, value) if result == 0 else result


def _round(value: Any, places: int, *round_on: float) -> float:
    threshold = round_on[0] if round_on else 0.5
    power = 10.0 ** float(places)
    digit = power * to_float64(value)
    fraction = math.modf(digit)[0] if not math.isinf(digit) else 0.0
    rounded = _integral(digit, math.ceil if fraction >= threshold else math.floor)
    return float(rounded / power)


def _bytes(text: str) -> float:
    try:
        return float(parse_humanize_bytes(text))
    except ValueError as exc:
        raise GoError(str(exc)) from None


def parse_duration(text: str) -> int:
    """``time.ParseDuration`` in nanoseconds; raises GoError with Go's message."""
    try:
        return parse_go_duration(text)
    except ValueError as exc:
        raise GoError(str(exc)) from None


def _duration_seconds(text: str) -> float:
    nanos = parse_duration(text)
    seconds = abs(nanos) // 10**9 * (1 if nanos >= 0 else -1)
    return float(seconds) + float(nanos - seconds * 10**9) / 1e9


def _f(fn: Any, *params: str, variadic: str | None = None) -> Func:
    return Func(fn, params, variadic)


A: Final = "any"
NUMBER_FUNCTIONS: Final = {
    "int": _f(to_int64, A),
    "float64": _f(to_float64, A),
    "add": _f(_add, variadic=A),
    "sub": _f(lambda a, b: wrap_int64(to_int64(a) - to_int64(b)), A, A),
    "mul": _f(_mul, A, variadic=A),
    "div": _f(lambda a, b: wrap_int64(_divmod(a, b)[0]), A, A),
    "mod": _f(lambda a, b: wrap_int64(_divmod(a, b)[1]), A, A),
    "max": _f(lambda a, *v: _extreme(a, v, max), A, variadic=A),
    "min": _f(lambda a, *v: _extreme(a, v, min), A, variadic=A),
    "addf": _f(lambda *v: _decimal_op("add", 0.0, v), variadic=A),
    "subf": _f(lambda a, *v: _decimal_op("sub", a, v), A, variadic=A),
    "mulf": _f(lambda a, *v: _decimal_op("mul", a, v), A, variadic=A),
    "divf": _f(lambda a, *v: _decimal_op("div", a, v), A, variadic=A),
    "maxf": _f(lambda a, *v: _fold(a, v, _go_max), A, variadic=A),
    "minf": _f(lambda a, *v: _fold(a, v, _go_min), A, variadic=A),
    "ceil": _f(lambda a: _integral(to_float64(a), math.ceil), A),
    "floor": _f(lambda a: _integral(to_float64(a), math.floor), A),
    "round": _f(_round, A, "int", variadic="float64"),
    "bytes": _f(_bytes, "string"),
    "duration": _f(_duration_seconds, "string"),
    "duration_seconds": _f(_duration_seconds, "string"),
}

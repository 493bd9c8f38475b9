"""How a template function is declared: its Go parameter types and implementation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["CallContext", "Func"]


class CallContext(Protocol):
    """What context functions (``__line__``, ``__timestamp__``) can read."""

    line: str
    timestamp_ns: int


@dataclass(frozen=True, slots=True)
class Func:
    """A template function.

    ``params`` are Go parameter kinds: ``string``, ``int``, ``float64``, ``bool``,
    ``time`` (``time.Time``), ``any`` (``interface{}``) or ``value`` (the
    ``reflect.Value`` of Go's builtins, which also accepts nil). ``variadic`` is the
    kind of a trailing ``...`` parameter. ``fn`` raises
    :class:`~gocompat.template.errors.GoError` for a Go error result.
    """

    fn: Callable[..., Any]
    params: tuple[str, ...]
    variadic: str | None = None
    context: bool = False
    builtin: bool = False

"""Bounds on what one render may allocate or how long it may run.

Go's ``text/template`` and sprig cap almost nothing: ``repeat 100000000 "x"`` builds a
100 MB string, ``printf "%010000000d"`` a 10 MB one (``fmt`` only refuses widths and
precisions above about 10^7), and ``range`` over an int loops as long as asked. The
reference accepts that; a shared Python process cannot, so every function that can
multiply its input asks :func:`reserve` for the size of its result *before* building it,
the executor checks every value a call returns and the output as it grows, and loops call
:func:`tick`, which runs the caller's interrupt check (a query deadline) now and then.

The active :class:`RenderLimits` is per thread (a render runs on one thread from start
to end). Without one, :data:`DEFAULT_LIMITS` applies, so the engine is bounded when used
on its own. Sizes are counted in characters of the Python strings.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_LIMITS",
    "OutputTooLarge",
    "RenderAborted",
    "RenderLimits",
    "active_limits",
    "render_limits",
    "reserve",
    "tick",
]

_TICK_EVERY: Final = 1024


class RenderAborted(Exception):
    """A render stopped for a reason outside Go's semantics; not a per-entry error."""


class OutputTooLarge(RenderAborted):
    """A value or the output of one entry would exceed ``limit`` characters."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"template output of {size} characters exceeds the limit of {limit}")
        self.size = size
        self.limit = limit


@dataclass(frozen=True, slots=True)
class RenderLimits:
    """What one render may do: its largest value/output, and a periodic interrupt check.

    ``interrupt`` is called every few hundred loop iterations and function calls; it
    raises (any :class:`RenderAborted`) to stop the render.
    """

    max_chars: int = 16 * 1024 * 1024
    interrupt: Callable[[], None] | None = None


DEFAULT_LIMITS: Final = RenderLimits()


class _Active(threading.local):
    limits: RenderLimits = DEFAULT_LIMITS
    ticks: int = 0


_active = _Active()


def active_limits() -> RenderLimits:
    """The limits of the render running on this thread."""
    return _active.limits


@contextmanager
def render_limits(limits: RenderLimits) -> Iterator[None]:
    """Apply ``limits`` to the renders this thread runs inside the block."""
    saved = _active.limits
    _active.limits = limits
    try:
        yield
    finally:
        _active.limits = saved


def reserve(size: int) -> None:
    """Raise :class:`OutputTooLarge` unless a value of ``size`` characters is allowed."""
    limit = _active.limits.max_chars
    if size > limit:
        raise OutputTooLarge(size, limit)


def tick() -> None:
    """Count one unit of work; every so often run the active interrupt check."""
    _active.ticks += 1
    if _active.ticks >= _TICK_EVERY:
        _active.ticks = 0
        interrupt = _active.limits.interrupt
        if interrupt is not None:
            interrupt()

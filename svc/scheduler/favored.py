"""Lowered work steps aside while favored work runs, for the interpreter lock.

Thread priorities share the cores, but not the interpreter lock: DuckDB's Python client
takes it between the tasks of every statement, so each task of a light tenant's statement
waits for whichever thread runs Python at that moment, at any priority (up to the switch
interval, or a whole C call such as decoding a push body). A tenant over its share (its
queries lowered by ``priority.py``, its pushes refused by the ingestion rate limit) then
sets the latency of the others' queries through the Python work it brings: decoding and
validating the pushes it floods, planning and answering its own queries.

So that work waits while favored work is running: a sub-query of a tenant not lowered.
A lowered sub-query steps aside before it starts and around each of its statements
(:func:`step_aside_if_lowered`, called by the engine), a tenant's push over its rate limit
before it takes a push slot, before it is decoded and before it is checked. The wait is
bounded (``MAX_WAIT_SECONDS`` at each step), so lowered work always goes on, more slowly,
however busy the favored tenants keep the workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol, TypeVar

__all__ = [
    "MAX_WAIT_SECONDS",
    "FavoredWork",
    "LoweredStep",
    "on_a_thread",
    "run_lowered",
    "step_aside_if_lowered",
]

_T = TypeVar("_T")

MAX_WAIT_SECONDS = 0.05
"""The longest a lowered step waits for the favored work to end."""


class FavoredWork:
    """How many favored sub-queries run, and a wait for none to run; thread-safe."""

    def __init__(self, max_wait_seconds: float = MAX_WAIT_SECONDS) -> None:
        self.max_wait_seconds = max_wait_seconds
        self._idle = threading.Condition()
        self._running = 0
        self.waits = 0
        """Lowered steps that found favored work running and waited
        (``svc_query_scheduler_stepped_aside_total``)."""

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Favored work runs inside this block."""
        with self._idle:
            self._running += 1
        try:
            yield
        finally:
            with self._idle:
                self._running -= 1
                if self._running == 0:
                    self._idle.notify_all()

    def step_aside(self) -> None:
        """Wait until no favored work runs, at most ``max_wait_seconds`` (lowered work
        calls this, on its own thread, before each step that runs Python at length)."""
        with self._idle:
            if self._running == 0:
                return
            self.waits += 1
            deadline = time.monotonic() + self.max_wait_seconds
            while self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._idle.wait(left)


_LOWERED: contextvars.ContextVar[FavoredWork | None] = contextvars.ContextVar(
    "lowered_for", default=None
)
"""In a lowered sub-query's context: the favored work it steps aside for."""


def run_lowered(favored: FavoredWork, fn: Callable[[], _T]) -> _T:
    """``fn()`` as lowered work (in the current context): it steps aside first, and
    again wherever it calls :func:`step_aside_if_lowered`."""
    _LOWERED.set(favored)
    favored.step_aside()
    return fn()


def step_aside_if_lowered() -> None:
    """In a lowered sub-query, wait while favored work runs (bounded); else nothing."""
    favored = _LOWERED.get()
    if favored is not None:
        favored.step_aside()


class LoweredStep(Protocol):
    """Runs ``fn()`` as lowered work, awaited (``Scheduler.lowered_step``)."""

    async def __call__(self, fn: Callable[[], _T], /) -> _T: ...


async def on_a_thread(fn: Callable[[], _T], /) -> _T:
    """A :class:`LoweredStep` where nothing is favored: ``fn()`` on a thread."""
    return await asyncio.to_thread(fn)

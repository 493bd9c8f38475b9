"""Deadlines that call a function when they pass, all served by one thread.

A ``threading.Timer`` per statement starts (and waits for) a thread each time: 1 to 5 ms
on a loaded 2-core machine, as much as a small query's whole run. Here one daemon thread
sleeps until the earliest deadline; setting and cancelling one is a heap push and a flag.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

__all__ = ["Alarm", "after"]

_LOG = logging.getLogger(__name__)
_COMPACT_AT = 1024


class Alarm:
    """One scheduled call; :meth:`cancel` before it is due and it never happens."""

    __slots__ = ("action", "cancelled", "due")

    def __init__(self, due: float, action: Callable[[], object]) -> None:
        self.due = due
        self.action = action
        self.cancelled = False

    def cancel(self) -> None:
        """Drop the call (no effect once it ran)."""
        self.cancelled = True


class _Clock:
    """The heap of pending alarms and the thread that fires them."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Alarm]] = []
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._compact_at = _COMPACT_AT

    def add(self, alarm: Alarm) -> None:
        with self._changed:
            if len(self._heap) >= self._compact_at:
                # Cancelled alarms (most of them: statements end before their deadline)
                # would otherwise stay until they are due.
                self._heap = [entry for entry in self._heap if not entry[2].cancelled]
                heapq.heapify(self._heap)
                self._compact_at = max(_COMPACT_AT, 2 * len(self._heap))
            heapq.heappush(self._heap, (alarm.due, next(self._order), alarm))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="alarms", daemon=True)
                self._thread.start()
            # Only a new earliest deadline changes how long the thread sleeps.
            if self._heap[0][2] is alarm:
                self._changed.notify()

    def _serve(self) -> None:
        while True:
            with self._changed:
                while self._heap and self._heap[0][2].cancelled:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._changed.wait()
                    continue
                wait = self._heap[0][0] - time.monotonic()
                if wait > 0:
                    self._changed.wait(wait)
                    continue
                alarm = heapq.heappop(self._heap)[2]
            if alarm.cancelled:
                continue
            try:
                alarm.action()
            except Exception:  # one failed action must not end every later deadline
                _LOG.exception("alarm action failed")


_CLOCK = _Clock()


def after(seconds: float, action: Callable[[], object]) -> Alarm:
    """Call ``action()`` (on the alarms' thread: it must be quick) in ``seconds``, unless
    the returned alarm is cancelled first."""
    alarm = Alarm(time.monotonic() + seconds, action)
    _CLOCK.add(alarm)
    return alarm

"""CPU priority for the tenant that takes more than its share of the query workers.

The fair queue shares the running slots among the active tenants, but a statement, once
running, competes for the cores with every other thread of the process: a tenant running
long heavy statements slows another tenant's light queries (and everyone's pushes) as much
as the slots it holds. So while several tenants are active, the sub-queries of a heavy
tenant run on threads of a lower scheduling priority (a higher nice value, set per thread:
Linux schedules threads, and an unprivileged process may lower its own threads' priority but
never raise it back, so these threads stay low and a task is handed to them).

A tenant is heavy when its recent worker time is above the active tenants' mean (and at
least ``MIN_HEAVY_SECONDS``). Worker time is decayed (half-life ``HALF_LIFE_SECONDS``) and
counts running sub-queries up to now, so a statement that has run for a minute counts before
it ends. A tenant that becomes active starts at the least worker time of the tenants already
active: time spent idle earns no priority. (Otherwise a tenant arriving with a flood of
heavy queries would count as the light one until it had outworked the tenants that were
there before it, and theirs would run lowered meanwhile.)
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Collection
from typing import Any, TypeVar

__all__ = ["LOW_PRIORITY_NICE", "LowPriorityThreads", "TenantUsage", "lowering_threads_started"]

_T = TypeVar("_T")

LOW_PRIORITY_NICE = 10
"""How much lower than the process the low-priority threads run (a tenth of a normal
thread's CPU share under contention: Linux's weights are 1024 at nice 0, 110 at 10)."""
HALF_LIFE_SECONDS = 10.0
MIN_HEAVY_SECONDS = 1.0
"""Below this much recent worker time a tenant is never lowered (a light tenant between
two heavy ones keeps its priority)."""


class TenantUsage:
    """Each tenant's recent worker time, decayed; thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._done: dict[str, tuple[float, float]] = {}
        """tenant -> (decayed seconds, when they were last decayed)."""
        self._running: dict[int, tuple[str, float]] = {}
        """ticket -> (tenant, start) of the sub-queries running."""
        self._tickets = 0

    def started(self, tenant: str) -> int:
        """A sub-query of ``tenant`` starts; returns the ticket to pass to :meth:`ended`."""
        with self._lock:
            self._tickets += 1
            self._running[self._tickets] = (tenant, self._clock())
            return self._tickets

    def ended(self, ticket: int) -> None:
        """The sub-query of ``ticket`` ended: its time joins its tenant's."""
        with self._lock:
            found = self._running.pop(ticket, None)
            if found is None:
                return
            tenant, start = found
            now = self._clock()
            self._done[tenant] = (self._decayed(tenant, now) + (now - start), now)

    def joined(self, tenant: str, active: Collection[str]) -> None:
        """``tenant`` becomes active next to ``active``: its worker time is raised to the
        least of theirs."""
        with self._lock:
            now = self._clock()
            others = self._seconds([name for name in active if name != tenant], now)
            if others:
                floor = min(others.values())
                if self._decayed(tenant, now) < floor:
                    self._done[tenant] = (floor, now)

    def heavy(self, tenant: str, active: Collection[str]) -> bool:
        """Whether ``tenant`` takes more than its share while other tenants are active."""
        if len(active) < 2 or tenant not in active:
            return False
        with self._lock:
            seconds = self._seconds(active, self._clock())
        mine = seconds[tenant]
        return mine >= MIN_HEAVY_SECONDS and mine > sum(seconds.values()) / len(seconds)

    def _seconds(self, tenants: Collection[str], now: float) -> dict[str, float]:
        """Each tenant's decayed worker time, its running sub-queries counted up to now
        (the lock held)."""
        seconds = {name: self._decayed(name, now) for name in tenants}
        for name, start in self._running.values():
            if name in seconds:
                seconds[name] += now - start
        return seconds

    def _decayed(self, tenant: str, now: float) -> float:
        seconds, when = self._done.get(tenant, (0.0, now))
        return seconds * math.exp2(-(now - when) / HALF_LIFE_SECONDS)


class LowPriorityThreads:
    """Threads at ``LOW_PRIORITY_NICE`` that run tasks handed to them (the caller waits)."""

    def __init__(self, threads: int) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(threads, 1),
            thread_name_prefix="query-low",
            initializer=_lower_this_thread,
        )

    def run(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` on a low-priority thread; its result or its exception."""
        return self._pool.submit(fn).result()

    def close(self) -> None:
        """Stop the threads once their tasks are done."""
        self._pool.shutdown(wait=True)


def lowering_threads_started(fn: Callable[[], _T]) -> _T:
    """``fn()``, then every thread of the process that appeared while it ran goes to the
    low priority.

    For DuckDB's own worker threads, started when a database opens: they take tasks of
    any running statement, so a statement of a lowered tenant (its calling thread on a
    low-priority thread) would still get them at normal priority. Lowered, they leave the
    cores to the calling threads at normal priority under contention, and run at full
    speed when nothing else wants the cores. (A calling thread only runs tasks of its own
    statement, so a light query keeps its own thread's priority.)
    """
    before = _thread_ids()
    result = fn()
    for thread in _thread_ids() - before:
        _lower_thread(thread)
    return result


def _thread_ids() -> set[int]:
    try:
        return {int(name) for name in os.listdir("/proc/self/task")}
    except OSError:  # no procfs: threads keep the process's priority
        return set()


def _lower_this_thread() -> None:
    _lower_thread(threading.get_native_id())


def _lower_thread(thread: int) -> None:
    # Relative to the process's own nice value; where threads have no priority of their
    # own (not Linux) the tasks still run, at the process's priority. A thread that ended
    # meanwhile is left alone.
    with contextlib.suppress(OSError, AttributeError):
        nice = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(nice + LOW_PRIORITY_NICE, 19))

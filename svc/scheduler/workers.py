"""The query workers: ``querier.max_concurrent`` threads taking sub-queries from the fair queue.

The HTTP handlers submit a request's work as tasks (one per sub-query); each task runs on a
worker thread inside the request's scope (``svc/query/scope.py``), and its result comes back
to the event loop as an awaitable. A task of a cancelled request is not run; cancelling a
request also fails its tasks still in the queue at once, so the handler answers without
waiting for them to come up.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from svc.errors import ServiceError
from svc.query.scope import RequestScope
from svc.scheduler.favored import FavoredWork, run_lowered
from svc.scheduler.priority import LowPriorityThreads, TenantUsage
from svc.scheduler.queue import FairQueue, QueueStopped

__all__ = ["Scheduler", "SchedulerCollector"]

_T = TypeVar("_T")

LOWERED_STEP_THREADS = 2
"""Threads for lowered work outside the sub-queries (it waits, a few steps at a time)."""

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Task:
    scope: RequestScope
    context: contextvars.Context
    fn: Callable[[], Any]
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    queued_at: float = field(default_factory=time.monotonic)


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


def _deliver(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    value: Any,
    error: BaseException | None,
) -> None:
    """Settle ``future`` on its event loop (nothing to do once the loop is closed)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(_settle, future, value, error)


class Scheduler:
    """A fair queue of query tasks and the threads that run them."""

    def __init__(
        self, workers: int, max_outstanding: int, usage: TenantUsage | None = None
    ) -> None:
        self.workers = max(workers, 1)
        # One worker stays free for the next tenant (when there are several workers).
        self.queue: FairQueue[_Task] = FairQueue(max_outstanding, max(self.workers - 1, 1))
        self.running = 0
        self.usage = usage or TenantUsage()
        """Each tenant's recent worker time: who runs at a lower priority."""
        self.favored = FavoredWork()
        """The sub-queries not lowered, which lowered work steps aside for."""
        self._steps: ThreadPoolExecutor | None = None
        """Where lowered work outside the sub-queries runs (``lowered_step``)."""
        self._low: LowPriorityThreads | None = None
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the worker threads."""
        self._low = LowPriorityThreads(self.workers)
        self._steps = ThreadPoolExecutor(LOWERED_STEP_THREADS, thread_name_prefix="lowered")
        for index in range(self.workers):
            thread = threading.Thread(target=self._work, name=f"query-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Drop what is queued and wait for the running tasks to finish."""
        self.queue.stop()
        for thread in self._threads:
            thread.join()
        self._threads = []
        if self._low is not None:
            self._low.close()
            self._low = None
        if self._steps is not None:
            self._steps.shutdown(wait=True)
            self._steps = None

    def submit(
        self,
        scope: RequestScope,
        tenant: str,
        path: Sequence[str],
        context: contextvars.Context,
        fn: Callable[[], Any],
    ) -> asyncio.Future[Any]:
        """Queue ``fn`` (run in ``context``) for a worker; 429 when the tenant's queue is
        full. The future fails with the scope's reason if the request is cancelled first."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        task = _Task(scope, context, fn, future, loop)
        active = self.queue.active()
        self.queue.put(tenant, path, task)
        if tenant not in active:
            self.usage.joined(tenant, active)

        def cancelled(reason: ServiceError) -> None:
            _deliver(loop, future, None, reason)

        scope.on_cancel(cancelled)
        return future

    async def lowered_step(self, fn: Callable[[], _T]) -> _T:
        """``fn()`` as lowered work outside the sub-queries (the pushes of a tenant over its
        rate limit, a heavy tenant's file listing): on a thread of its own, once favored
        sub-queries have stepped aside (``svc/scheduler/favored.py``). Not on the default
        executor: waiting there, it would hold up the others' steps. Not at a low
        priority either: a low-priority thread holding the interpreter lock is preempted
        with it, and every thread then waits for it (measured: B's p50 and p99 rose)."""

        def aside() -> _T:
            self.favored.step_aside()
            return fn()

        if self._steps is None:  # not started, or stopped: no favored work either
            return await asyncio.to_thread(aside)
        return await asyncio.get_running_loop().run_in_executor(self._steps, aside)

    def lowered(self, tenant: str) -> bool:
        """Whether ``tenant``'s work runs lowered now (over its share, among others)."""
        return self.usage.heavy(tenant, self.queue.active())

    def _work(self) -> None:
        while True:
            try:
                tenant, task = self.queue.get()
            except QueueStopped:
                return
            try:
                self._run(tenant, task)
            finally:
                self.queue.done(tenant)
                # Not kept until the next task arrives: its scope's pinned views and its
                # result hold lake files on disk (svc/storage/leases.py).
                del task

    def _run(self, tenant: str, task: _Task) -> None:
        if task.future.done() or task.scope.reason is not None:
            return
        task.scope.waited(time.monotonic() - task.queued_at)
        with self._lock:
            self.running += 1
        low = self._low if self.lowered(tenant) else None
        ticket = self.usage.started(tenant)
        try:
            if low is None:
                with self.favored.running():
                    value = task.context.run(task.fn)
            else:  # svc/scheduler/priority.py: a tenant over its share, among others
                value = low.run(lambda: self._lowered(task))
        except BaseException as exc:  # delivered to the request, which answers it
            _deliver(task.loop, task.future, None, exc)
        else:
            _deliver(task.loop, task.future, value, None)
        finally:
            self.usage.ended(ticket)
            with self._lock:
                self.running -= 1

    def _lowered(self, task: _Task) -> Any:
        return task.context.run(run_lowered, self.favored, task.fn)


class SchedulerCollector(Collector):
    """The queue's length and the running sub-queries per tenant, read at scrape time."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler

    def collect(self) -> Iterable[Metric]:
        queued, running = self.scheduler.queue.lengths()
        length = GaugeMetricFamily(
            "svc_query_scheduler_queue_length",
            "Sub-queries waiting for a query worker, per tenant.",
            labels=["tenant"],
        )
        for tenant, count in sorted(queued.items()):
            length.add_metric([tenant], count)
        busy = GaugeMetricFamily(
            "svc_query_scheduler_running",
            "Sub-queries running on the query workers, per tenant.",
            labels=["tenant"],
        )
        for tenant, count in sorted(running.items()):
            busy.add_metric([tenant], count)
        workers = GaugeMetricFamily(
            "svc_query_scheduler_workers", "Query worker threads (querier.max_concurrent)."
        )
        workers.add_metric([], self.scheduler.workers)
        stepped = CounterMetricFamily(
            "svc_query_scheduler_stepped_aside",
            "Steps of lowered work (a heavy tenant's sub-queries and statements, the pushes "
            "of a tenant over its ingestion rate) that waited for favored sub-queries.",
        )
        stepped.add_metric([], self.scheduler.favored.waits)
        yield from (length, busy, workers, stepped)

"""The tenant over its share of the query workers runs at a lower CPU priority."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from svc.query.engine import QueryEngine
from svc.query.scope import RequestScope
from svc.scheduler.priority import (
    LOW_PRIORITY_NICE,
    LowPriorityThreads,
    TenantUsage,
    lowering_threads_started,
)
from svc.scheduler.workers import Scheduler
from svc.storage.store import Store, StoreSettings


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _worked(usage: TenantUsage, clock: _Clock, tenant: str, seconds: float) -> None:
    ticket = usage.started(tenant)
    clock.now += seconds
    usage.ended(ticket)


def _usage(**seconds: float) -> tuple[TenantUsage, _Clock]:
    """A usage record where each named tenant has worked that many seconds."""
    clock = _Clock()
    usage = TenantUsage(clock)
    for tenant, worked in seconds.items():
        _worked(usage, clock, tenant, worked)
    return usage, clock


def test_the_tenant_above_the_mean_is_heavy_only_among_others() -> None:
    usage, _ = _usage(a=8.0, b=0.2)
    assert usage.heavy("a", {"a", "b"})
    assert not usage.heavy("b", {"a", "b"})
    assert not usage.heavy("a", {"a"})  # alone: nobody to yield to
    assert not usage.heavy("c", {"a", "b"})  # not active


def test_a_light_tenant_is_never_heavy() -> None:
    usage, _ = _usage(a=0.5, b=0.1)
    assert not usage.heavy("a", {"a", "b"})  # above the mean, below a second


def test_running_time_counts_before_the_sub_query_ends() -> None:
    clock = _Clock()
    usage = TenantUsage(clock)
    usage.started("a")
    clock.now += 30.0
    assert usage.heavy("a", {"a", "b"})


def test_worker_time_decays() -> None:
    usage, clock = _usage(a=8.0, b=1.2)
    assert usage.heavy("a", {"a", "b"})
    clock.now += 60.0  # six half-lives: a has 0.125 s left, b 0.02 s
    assert not usage.heavy("a", {"a", "b"})


def test_a_tenant_that_arrives_starts_at_the_least_worker_time_of_the_active_ones() -> None:
    usage, clock = _usage(b=1.5)  # b has been querying alone
    usage.started("a")  # a arrives with a flood; its first statement runs
    clock.now += 0.3
    # Without joining, a (0.3 s) would count as the light one and b as heavy.
    assert usage.heavy("b", {"a", "b"})
    usage, clock = _usage(b=1.5)
    usage.joined("a", {"b"})
    usage.started("a")
    clock.now += 0.3
    assert not usage.heavy("b", {"a", "b"})
    assert usage.heavy("a", {"a", "b"})


def test_joining_never_lowers_worker_time() -> None:
    usage, _ = _usage(a=6.0, b=1.5)
    usage.joined("a", {"b"})
    assert usage.heavy("a", {"a", "b"})  # a kept its 6 s, not b's 1.5
    usage.joined("c", set())  # nobody active: nothing to start from
    assert not usage.heavy("c", {"a", "c"})


Submit = Callable[[str], Awaitable[int]]


def _niceness(
    scenario: Callable[[Scheduler, _Clock, Submit], Coroutine[Any, Any, list[int]]],
) -> list[int]:
    """The niceness each submitted task of ``scenario`` ran at, on a scheduler of three
    workers with a clock the scenario moves."""
    clock = _Clock()
    scheduler = Scheduler(workers=3, max_outstanding=10, usage=TenantUsage(clock))
    scheduler.start()

    async def submit(tenant: str) -> int:
        future = scheduler.submit(RequestScope(60), tenant, (), contextvars.copy_context(), _nice)
        niceness = int(await future)
        while scheduler.running:  # its worker time is recorded (the clock moves next)
            await asyncio.sleep(0.001)
        return niceness

    try:
        return asyncio.run(scenario(scheduler, clock, submit))
    finally:
        scheduler.stop()


def test_the_scheduler_starts_an_arriving_tenant_at_the_active_ones_level() -> None:
    async def scenario(scheduler: Scheduler, clock: _Clock, submit: Submit) -> list[int]:
        await submit("b")
        _worked(scheduler.usage, clock, "b", 1.5)  # b's light queries, alone
        arrived = await submit("a")  # a arrives: it starts at b's level, not at 0
        _worked(scheduler.usage, clock, "a", 0.5)  # a's first heavy statement
        light = await submit("b")  # b stays at normal priority
        heavy = await submit("a")
        return [arrived, light, heavy]

    normal = _nice()
    assert _niceness(scenario) == [normal, normal, min(normal + LOW_PRIORITY_NICE, 19)]


def _nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def test_low_priority_threads_run_tasks_niced_and_pass_errors() -> None:
    caller = _nice()
    low = LowPriorityThreads(2)
    try:
        assert low.run(_nice) == min(caller + LOW_PRIORITY_NICE, 19)
        with pytest.raises(ZeroDivisionError):
            low.run(lambda: 1 / 0)
    finally:
        low.close()
    assert _nice() == caller  # the caller kept its own


def test_the_scheduler_lowers_the_heavy_tenant_and_not_the_light_one() -> None:
    async def scenario(scheduler: Scheduler, clock: _Clock, submit: Submit) -> list[int]:
        alone = await submit("a")  # the only tenant: nobody to yield to
        _worked(scheduler.usage, clock, "a", 8.0)  # then a's long statements
        light = await submit("b")  # b arrives (at a's level): a is still active
        _worked(scheduler.usage, clock, "a", 1.0)  # a's next statement
        heavy = await submit("a")
        return [alone, light, heavy]

    normal = _nice()
    assert _niceness(scenario) == [normal, normal, min(normal + LOW_PRIORITY_NICE, 19)]


def test_threads_a_call_starts_are_lowered_and_the_others_kept() -> None:
    caller = _nice()
    started = threading.Event()
    stop = threading.Event()
    natives: list[int] = []

    def idle() -> None:
        natives.append(threading.get_native_id())
        started.set()
        stop.wait()

    before = threading.Thread(target=idle)
    before.start()
    started.wait()
    started.clear()
    during = threading.Thread(target=idle)

    def start_one() -> int:
        during.start()
        started.wait()
        return 7

    try:
        assert lowering_threads_started(start_one) == 7
        niceness = [os.getpriority(os.PRIO_PROCESS, native) for native in natives]
    finally:
        stop.set()
        before.join()
        during.join()
    assert niceness == [caller, min(caller + LOW_PRIORITY_NICE, 19)]
    assert _nice() == caller


def test_the_query_engines_duckdb_threads_run_lowered(tmp_path: Path) -> None:
    """DuckDB's own worker threads take tasks of every statement: lowered, a heavy
    tenant's statement cannot use them ahead of a light tenant's calling thread."""
    caller = _nice()
    before = set(os.listdir("/proc/self/task"))
    store = Store(StoreSettings(tmp_path, 1 << 30, 1e9, 1e9, 64 << 20, 4096))
    store.open()
    engine = QueryEngine(store, timeout_seconds=10, threads=3)
    try:
        new = {int(t) for t in set(os.listdir("/proc/self/task")) - before}
        lowered = [t for t in new if os.getpriority(os.PRIO_PROCESS, t) > caller]
        # threads=3: the calling thread and two of DuckDB's own
        assert len(lowered) >= 2
        assert _nice() == caller
    finally:
        engine.close()
        store.close(flush=False)

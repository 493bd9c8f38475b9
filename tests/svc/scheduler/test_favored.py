"""Lowered work steps aside while favored work runs (svc/scheduler/favored.py)."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from svc.query.scope import RequestScope
from svc.scheduler.favored import FavoredWork, run_lowered, step_aside_if_lowered
from svc.scheduler.priority import TenantUsage
from svc.scheduler.workers import Scheduler, SchedulerCollector


def test_nothing_favored_running_means_no_wait() -> None:
    favored = FavoredWork(max_wait_seconds=30)
    began = time.monotonic()
    favored.step_aside()
    assert time.monotonic() - began < 5
    assert favored.waits == 0


def test_a_lowered_step_waits_until_the_favored_work_ends() -> None:
    favored = FavoredWork(max_wait_seconds=30)
    inside, release = threading.Event(), threading.Event()
    ended: list[float] = []

    def favored_work() -> None:
        with favored.running():
            inside.set()
            release.wait()
            ended.append(time.monotonic())

    worker = threading.Thread(target=favored_work)
    worker.start()
    inside.wait()
    stepped: list[float] = []

    def lowered_step() -> None:
        favored.step_aside()
        stepped.append(time.monotonic())

    lowered = threading.Thread(target=lowered_step)
    lowered.start()
    lowered.join(0.2)
    assert not stepped  # still waiting: the favored work runs
    release.set()
    lowered.join(10)
    worker.join()
    assert stepped and stepped[0] >= ended[0]
    assert favored.waits == 1


def test_the_wait_is_bounded() -> None:
    favored = FavoredWork(max_wait_seconds=0.05)
    with favored.running():
        began = time.monotonic()
        favored.step_aside()  # nobody ends the favored work
        waited = time.monotonic() - began
    assert 0.05 <= waited < 5
    favored.step_aside()  # and once it ended, no wait
    assert favored.waits == 1


def test_the_scheduler_starts_a_lowered_sub_query_once_the_favored_one_ended() -> None:
    clock = [1000.0]
    usage = TenantUsage(lambda: clock[0])
    scheduler = Scheduler(workers=5, max_outstanding=10, usage=usage)
    scheduler.favored = FavoredWork(max_wait_seconds=30)
    scheduler.start()
    light_inside, release_light = threading.Event(), threading.Event()
    events: list[str] = []

    def light() -> None:
        light_inside.set()
        release_light.wait()
        events.append("light ended")

    def heavy() -> None:
        events.append("heavy started")

    def blocked() -> None:
        release_light.wait()

    async def scenario() -> None:
        def submit(tenant: str, fn: Callable[[], None]) -> asyncio.Future[None]:
            context = contextvars.copy_context()
            return scheduler.submit(RequestScope(60), tenant, (), context, fn)

        # "a" has worked 8 s, then "b" arrives at its level and "a" works on: "a" is
        # the heavy one while both are active (a sub-query of each stays queued or runs).
        ticket = usage.started("a")
        clock[0] += 8.0
        usage.ended(ticket)
        held = submit("a", blocked)  # keeps "a" active
        light_done = submit("b", light)
        await asyncio.to_thread(light_inside.wait)
        ticket = usage.started("a")
        clock[0] += 1.0
        usage.ended(ticket)
        heavy_done = submit("a", heavy)
        await asyncio.sleep(0.2)
        assert events == []  # the lowered sub-query waits for the favored one
        release_light.set()
        await asyncio.wait_for(asyncio.gather(light_done, heavy_done, held), 10)

    try:
        asyncio.run(scenario())
    finally:
        release_light.set()
        scheduler.stop()
    assert events == ["light ended", "heavy started"]
    assert scheduler.favored.waits == 1
    registry = CollectorRegistry()
    registry.register(SchedulerCollector(scheduler))
    assert registry.get_sample_value("svc_query_scheduler_stepped_aside_total") == 1


def test_only_a_lowered_sub_querys_steps_wait() -> None:
    favored = FavoredWork(max_wait_seconds=0.05)
    with favored.running():
        step_aside_if_lowered()  # favored or plain work: no wait
        assert favored.waits == 0
        context = contextvars.copy_context()
        context.run(run_lowered, favored, lambda: None)  # waits before it starts
        assert favored.waits == 1
        context.run(step_aside_if_lowered)  # and at each statement (the engine's calls)
        assert favored.waits == 2
        step_aside_if_lowered()  # the caller's own context was left alone
        assert favored.waits == 2


def test_a_lowered_step_runs_on_a_thread_of_its_own_once_favored_work_ended() -> None:
    scheduler = Scheduler(workers=2, max_outstanding=10)
    scheduler.favored = FavoredWork(max_wait_seconds=30)
    scheduler.start()

    async def scenario() -> str:
        with scheduler.favored.running():
            step = asyncio.ensure_future(scheduler.lowered_step(threading.current_thread))
            await asyncio.sleep(0.2)
            assert not step.done()  # it waits for the favored work
        return (await asyncio.wait_for(step, 10)).name

    try:
        thread = asyncio.run(scenario())
    finally:
        scheduler.stop()
    assert thread.startswith("lowered")  # not the default executor's
    assert scheduler.favored.waits == 1

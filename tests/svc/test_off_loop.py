"""Large CPU-bound steps of a request run off the event loop (svc/off_loop.py)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time

from svc.off_loop import off_loop


def test_large_steps_run_on_a_thread_and_small_ones_on_the_loop() -> None:
    async def where(large: bool) -> bool:
        loop_thread = threading.get_ident()
        return await off_loop(large, lambda: threading.get_ident() == loop_thread)

    assert asyncio.run(where(False)) is True
    assert asyncio.run(where(True)) is False


def test_errors_of_a_step_on_a_thread_reach_the_caller() -> None:
    def fail() -> None:
        raise ValueError("bad push")

    async def run() -> None:
        await off_loop(True, fail)

    try:
        asyncio.run(run())
    except ValueError as exc:
        assert str(exc) == "bad push"
    else:  # pragma: no cover
        raise AssertionError("the error was lost")


def test_the_event_loop_keeps_answering_while_a_large_step_runs() -> None:
    """While a step of pure Python runs for half a second on a thread, the loop's timer
    still fires (inline, it would wait the whole step)."""

    def busy() -> int:
        n = 0
        stop = time.perf_counter() + 0.5
        while time.perf_counter() < stop:
            n += 1
        return n

    async def run() -> float:
        worst = 0.0
        step = asyncio.create_task(off_loop(True, busy))
        await asyncio.sleep(0)  # the step starts
        while not step.done():
            started = time.perf_counter()
            await asyncio.sleep(0.005)
            worst = max(worst, time.perf_counter() - started)
        await step
        return worst

    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.001)  # as the server sets it
    try:
        assert asyncio.run(run()) < 0.25
    finally:
        sys.setswitchinterval(interval)

"""The query workers: time waited in the queue is counted per request."""

from __future__ import annotations

import asyncio
import contextvars
import threading

from svc.query.scope import RequestScope
from svc.scheduler.workers import Scheduler


def test_a_sub_query_waiting_for_a_worker_counts_its_queue_time() -> None:
    scheduler = Scheduler(workers=1, max_outstanding=10)
    scheduler.start()
    release = threading.Event()
    busy, waiting = RequestScope(60), RequestScope(60)

    async def scenario() -> None:
        first = scheduler.submit(busy, "a", (), contextvars.copy_context(), release.wait)
        second = scheduler.submit(waiting, "b", (), contextvars.copy_context(), lambda: 1)
        await asyncio.sleep(0.2)  # the only worker is held by the first
        release.set()
        await first
        assert await second == 1

    try:
        asyncio.run(scenario())
    finally:
        scheduler.stop()
    assert waiting.queue_seconds >= 0.15
    assert busy.queue_seconds < 0.1

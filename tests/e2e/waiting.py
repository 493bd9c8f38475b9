"""Polling a condition that a server reaches on its own (a flush, a compaction, readiness)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["wait_for"]


def wait_for(
    predicate: Callable[[], bool],
    timeout: float = 30.0,
    *,
    ignoring: tuple[type[Exception], ...] = (),
) -> None:
    """Poll until ``predicate`` holds; an exception of ``ignoring`` counts as not yet."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except ignoring:
            pass
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")

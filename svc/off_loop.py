"""Large CPU-bound steps of a request, run on a thread instead of the event loop.

Decoding a push of thousands of lines, giving each its level and building its Arrow rows
take milliseconds of pure Python. On the event loop they hold up every other request for
that long: one tenant's large pushes then set the latency of everyone's queries. On a
thread they still hold the interpreter lock, but the server's switch interval (1 ms,
``svc/__main__.py``) hands it back to the event loop between slices, so other requests are
served in between. Small steps stay on the loop, where a thread hand-over would cost more
than the step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

__all__ = ["OFF_LOOP_BODY_BYTES", "OFF_LOOP_ENTRIES", "off_loop"]

_T = TypeVar("_T")

OFF_LOOP_ENTRIES = 500
"""From this many entries, a step runs on a thread."""
OFF_LOOP_BODY_BYTES = 64 * 1024
"""From this size, a body is decoded on a thread (about 500 entries of 100 bytes)."""


async def off_loop(large: bool, fn: Callable[[], _T]) -> _T:
    """``fn()``: on a thread of the default executor when ``large``, else right here."""
    if not large:
        return fn()
    return await asyncio.to_thread(fn)

"""How much memory the query engine may use: ``querier.query_memory_limit`` resolved."""

from __future__ import annotations

import os
from pathlib import Path

from gocompat.durations import parse_humanize_bytes

__all__ = ["machine_memory", "parse_memory_limit"]

_CGROUP_LIMITS = (
    Path("/sys/fs/cgroup/memory.max"),  # cgroup v2
    Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"),  # cgroup v1
)
_MIN_LIMIT = 64 * 1024 * 1024


def machine_memory() -> int:
    """Physical memory, or the process's cgroup limit when that is lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in _CGROUP_LIMITS:
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def parse_memory_limit(text: str, total: int | None = None) -> int:
    """Bytes for ``50%`` (of ``total``, the machine's memory by default) or ``4GiB``.

    Raises ValueError for anything else, or for less than 64 MiB.
    """
    text = text.strip()
    if text.endswith("%"):
        try:
            share = float(text[:-1])
        except ValueError:
            raise ValueError(f"invalid memory limit {text!r}") from None
        if not 0 < share <= 100:
            raise ValueError(f"memory limit {text!r} must be a share in (0%, 100%]")
        size = int((machine_memory() if total is None else total) * share / 100)
    else:
        try:
            size = parse_humanize_bytes(text)
        except ValueError:
            raise ValueError(
                f"invalid memory limit {text!r}: want a share such as 50% or a size such as 4GiB"
            ) from None
    if size < _MIN_LIMIT:
        raise ValueError(f"memory limit {text!r} is below 64MiB")
    return size

"""Small durable-file helpers shared by the WAL and the lake."""

from __future__ import annotations

import contextlib
import ctypes
import os
from functools import cache
from pathlib import Path

__all__ = ["fsync_directory", "limit_allocator_caching", "release_free_memory"]


def fsync_directory(directory: Path) -> None:
    """Make a directory's entries (a new or renamed file) durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@cache
def _libc() -> ctypes.CDLL | None:
    with contextlib.suppress(OSError):
        return ctypes.CDLL("libc.so.6")
    return None


def release_free_memory() -> None:
    """Hand memory freed by a flush back to the OS (glibc keeps large freed blocks)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def limit_allocator_caching() -> None:
    """Make glibc return freed memory: few arenas, and big blocks always mapped (a fixed
    threshold, instead of one that grows with every large free and keeps those blocks)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(_M_ARENA_MAX, 2)
        libc.mallopt(_M_MMAP_THRESHOLD, 1024 * 1024)

"""Small durable-file helpers shared by the WAL and the lake."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path

from svc.errors import ServiceError

__all__ = [
    "DataDirectoryInUseError",
    "DataDirectoryLock",
    "fsync_directory",
    "lake_publish_lock",
    "limit_allocator_caching",
    "release_free_memory",
]

LOCK_FILENAME = "svc.lock"
PUBLISH_LOCK_FILENAME = "lake-publish.lock"


class DataDirectoryInUseError(ServiceError):
    """Another process holds the data directory."""


class DataDirectoryLock:
    """An exclusive ``flock`` on ``<data>/svc.lock``: one process owns a data directory.

    The kernel drops the lock when its holder dies, so a ``kill -9`` leaves nothing to
    clean up.
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_FILENAME
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or raise DataDirectoryInUseError at once."""
        if self._fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirectoryInUseError(
                f"data directory {self.path.parent} is in use by another svc process "
                f"(it holds {self.path})"
            ) from None
        self._fd = fd

    def release(self) -> None:
        """Give the lock back."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@contextlib.contextmanager
def lake_publish_lock(directory: Path) -> Iterator[None]:
    """Hold ``<data>/lake-publish.lock`` (blocking): taken by a backfill while it moves
    files into the lake and lists them, and by the startup sweep, so that the sweep never
    takes a backfill's files, listed a moment later, for a crash's leftovers."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / PUBLISH_LOCK_FILENAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


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
    """Hand memory freed by a flush back to the OS at once: glibc keeps large freed
    blocks, and Arrow's pool (mimalloc) keeps freed pages for a second, long enough for
    pushes, flushes and the skip indexer to add their peaks together."""
    import pyarrow  # every caller has it loaded; importers of this module may not need it

    pyarrow.default_memory_pool().release_unused()
    libc = _libc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def limit_allocator_caching() -> None:
    """Make glibc return freed memory: few arenas, and big blocks always mapped (a fixed
    threshold, instead of one that grows with every large free and keeps those blocks)."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(_M_ARENA_MAX, 2)
        libc.mallopt(_M_MMAP_THRESHOLD, 1024 * 1024)


def keep_allocator_caching() -> None:
    """Make glibc keep freed memory for reuse, for a batch command (``svc backfill``) that
    allocates and frees buffers of megabytes all the time: blocks up to 32 MiB come from
    the heap instead of being mapped (and their pages faulted in and zeroed) anew each
    time, and the heap is trimmed only past 256 MiB free. Peak memory is unchanged."""
    libc = _libc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(_M_MMAP_THRESHOLD, 32 * 1024 * 1024)
        libc.mallopt(_M_TRIM_THRESHOLD, 256 * 1024 * 1024)

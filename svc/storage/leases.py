"""Which lake files running queries read, so that replaced files outlive their readers.

A query reads the files of the view it took (``Store.view``); a compaction swaps files in
the catalog at any moment. Each view holds a :class:`Lease` on its files, released when the
last view sharing it is garbage (a view derived with ``dataclasses.replace`` shares it), so
no reader has to remember to let go. A file the catalog no longer lists is *retired*: it
is removed from disk once nothing leases it and its delay has passed. Retired files are
only remembered in memory: after a crash the startup sweep removes every unlisted file,
and no query runs then.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterable

__all__ = ["FileLeases", "Lease"]


class Lease:
    """A hold on some files for as long as this object lives."""

    __slots__ = ("__weakref__", "paths")

    def __init__(self, paths: tuple[str, ...]) -> None:
        self.paths = paths


class FileLeases:
    """Readers per file, and the retired files waiting for their last reader."""

    def __init__(self) -> None:
        # Re-entrant: a garbage collection inside a locked section may finalize a lease,
        # whose release takes the lock again in the same thread.
        self._lock = threading.RLock()
        self._readers: Counter[str] = Counter()
        self._retired: dict[str, float] = {}

    def lease(self, paths: Iterable[str]) -> Lease:
        """Hold ``paths`` until the returned lease is garbage."""
        lease = Lease(tuple(paths))
        with self._lock:
            self._readers.update(lease.paths)
        weakref.finalize(lease, self._release, lease.paths)
        return lease

    def _release(self, paths: tuple[str, ...]) -> None:
        with self._lock:
            self._readers.subtract(paths)
            for path in paths:
                if self._readers[path] <= 0:
                    del self._readers[path]

    def readers(self, path: str) -> int:
        """How many live leases hold ``path``."""
        with self._lock:
            return self._readers.get(path, 0)

    def retire(self, paths: Iterable[str], delay_seconds: float = 0.0) -> None:
        """Mark unlisted files for removal once unread and ``delay_seconds`` from now."""
        due = time.monotonic() + delay_seconds
        with self._lock:
            for path in paths:
                self._retired[path] = due

    def removable(self) -> list[str]:
        """Retired files now due and unread; they are forgotten here (the caller removes)."""
        now = time.monotonic()
        with self._lock:
            ready = [
                path
                for path, due in self._retired.items()
                if due <= now and self._readers.get(path, 0) == 0
            ]
            for path in ready:
                del self._retired[path]
        return ready

    def retired(self) -> set[str]:
        """Retired files not removed yet (unlisted, still kept for their readers)."""
        with self._lock:
            return set(self._retired)

    def waiting(self) -> int:
        """Retired files not removed yet."""
        with self._lock:
            return len(self._retired)

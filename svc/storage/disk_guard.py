"""Refusal of pushes while the data directory's filesystem is nearly full.

``ingester.wal.disk_full_threshold`` (0 to 1, 0 disables it) is the used share of the
filesystem above which pushes are refused, as the reference's WAL throttling does, so the
disk keeps room for flushes and the catalog. Usage is looked at, at most once a second, on
the push path (and at once after a WAL write fails), so refusing stops by itself once
space is freed. The reference answers a throttled push 500 ``Ingester is shutting down``;
here it is 503 with a message that names the cause, a status every push client retries.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from svc.errors import ServiceError
from svc.storage import faults

__all__ = ["DiskFullError", "DiskGuard"]

log = logging.getLogger(__name__)

_CHECK_SECONDS = 1.0


class DiskFullError(ServiceError):
    """The data directory's filesystem is above the threshold (503: retry later)."""

    status = 503


class DiskGuard:
    """Knows whether the filesystem of ``path`` is over ``threshold``; refuses if it is."""

    def __init__(self, path: Path, threshold: float) -> None:
        self.path = path
        self.threshold = threshold
        self.usage: float | None = None
        self.throttled = False
        self.throttle_events_total = 0
        self._checked = float("-inf")
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise DiskFullError while usage is at or over the threshold."""
        if self.threshold <= 0:
            return
        if time.monotonic() - self._checked >= _CHECK_SECONDS:
            self.refresh()
        if self.throttled:
            raise DiskFullError(
                f"disk usage of the data directory is {self.usage or 0:.2%}, at or over "
                f"ingester.wal.disk_full_threshold ({self.threshold:.2%}): pushes are "
                "refused until space is freed"
            )

    def refresh(self) -> None:
        """Measure usage now and log when refusing starts or stops."""
        with self._lock:
            self._checked = time.monotonic()
            try:
                usage = faults.disk_usage(self.path)
            except OSError as exc:
                log.warning("could not measure disk usage of %s: %s", self.path, exc)
                return
            self.usage = usage
            if self.threshold <= 0:
                return
            throttled = usage >= self.threshold
            if throttled == self.throttled:
                return
            self.throttled = throttled
            if throttled:
                self.throttle_events_total += 1
                log.warning(
                    "disk usage exceeded threshold, refusing pushes: usage=%.2f%% threshold=%.2f%%",
                    usage * 100,
                    self.threshold * 100,
                )
            else:
                log.info(
                    "disk usage below threshold, accepting pushes again: usage=%.2f%% "
                    "threshold=%.2f%%",
                    usage * 100,
                    self.threshold * 100,
                )

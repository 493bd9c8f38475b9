"""On-demand and periodic index sync of the schema periods' stores (SPEC 3.3).

    idle ──PUT /sync-indexes (202) or periodic resync──> in progress ──done──> idle
    in progress ──PUT /sync-indexes──> 409, no-op

One sync covers every period: it reloads the stream index from the catalog and checks
that every listed file is on disk (a file missing there is logged, never deleted from
the catalog).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gocompat.durations import format_go_duration

__all__ = ["IndexSyncer", "SyncStatus"]

log = logging.getLogger(__name__)

SYNCABLE_STORES = frozenset({"tsdb"})


@dataclass
class SyncStatus:
    """Sync state of one schema period's store."""

    name: str
    in_progress: bool = False
    last_trigger: str = "never_triggered"
    started: float = 0.0
    last_duration: float = 0.0

    def as_json(self, now: float) -> dict[str, Any]:
        """The index sync status entry of SPEC 2.6."""
        entry: dict[str, Any] = {
            "name": self.name,
            "in_progress": self.in_progress,
            "last_trigger": self.last_trigger,
        }
        if self.in_progress:
            entry["current_duration"] = _seconds_text(now - self.started)
        entry["last_duration"] = _seconds_text(self.last_duration)
        return entry


def _seconds_text(seconds: float) -> str:
    return format_go_duration(int(seconds) * 1_000_000_000)


class IndexSyncer:
    """Runs index syncs one at a time, on demand and every ``resync_interval``."""

    def __init__(
        self,
        stores: list[str],
        sync: Callable[[], None],
        *,
        resync_interval: float,
        min_duration: float = 0.0,
    ) -> None:
        self.statuses = [SyncStatus(name) for name in stores]
        self._sync = sync
        self._resync_interval = resync_interval
        self._min_duration = min_duration
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._periodic: threading.Thread | None = None

    @property
    def can_sync(self) -> bool:
        """False when no period's store can be synced on demand."""
        return any(s.name in SYNCABLE_STORES for s in self.statuses)

    def in_progress(self) -> bool:
        """True while a sync runs."""
        return any(s.in_progress for s in self.statuses)

    def trigger(self, how: str) -> bool:
        """Start a sync in the background; False (and nothing started) if one is running."""
        with self._lock:
            if self.in_progress():
                return False
            now = time.monotonic()
            for status in self.statuses:
                status.in_progress = True
                status.last_trigger = how
                status.started = now
        threading.Thread(target=self._run, name="index-sync", daemon=True).start()
        return True

    def status(self) -> list[dict[str, Any]]:
        """Status entries of every period's store."""
        now = time.monotonic()
        with self._lock:
            return [s.as_json(now) for s in self.statuses]

    def start_periodic(self) -> None:
        """Resync every ``resync_interval`` (skipped while a sync runs)."""
        if self._resync_interval <= 0 or self._periodic is not None:
            return
        self._periodic = threading.Thread(target=self._loop, name="index-resync", daemon=True)
        self._periodic.start()

    def stop(self) -> None:
        """Stop periodic resyncs (a running sync completes on its own)."""
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self._resync_interval):
            self.trigger("periodic")

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self._sync()
        except Exception:
            log.exception("index sync failed")
        remaining = self._min_duration - (time.monotonic() - started)
        if remaining > 0:
            self._stop.wait(remaining)
        with self._lock:
            elapsed = time.monotonic() - started
            for status in self.statuses:
                status.in_progress = False
                status.last_duration = elapsed

"""The ingester service: head and flusher, prepare-shutdown flag and shutdown (SPEC 3.2).

The prepare-shutdown flag is a marker file (as in the reference), so an instance that
crashes after ``POST /ingester/prepare_shutdown`` still flushes on its next clean stop.
"""

from __future__ import annotations

import logging
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from gocompat.durations import format_go_duration
from svc.ops.services import Service, State
from svc.storage.files import fsync_directory
from svc.storage.store import Store

__all__ = ["MARKER_FILENAME", "IngesterLifecycle"]

log = logging.getLogger(__name__)

MARKER_FILENAME = "shutdown-requested.txt"


class IngesterLifecycle:
    """Starting, stopping and readiness of the ingester, and its shutdown settings."""

    def __init__(
        self,
        store: Store,
        *,
        marker_dir: Path,
        flush_on_shutdown: bool,
        min_ready_seconds: float,
    ) -> None:
        self.store = store
        self.marker = marker_dir / MARKER_FILENAME
        self.flush_on_shutdown = flush_on_shutdown
        self.min_ready_seconds = min_ready_seconds
        self.flush_override: bool | None = None
        self.service = Service("ingester", self._starting, self._stopping, depends_on=("wal",))

    # prepare-shutdown flag -------------------------------------------------------------

    @property
    def prepared(self) -> bool:
        """True when the next SIGTERM/SIGINT flushes the head (the marker file exists)."""
        return self.marker.is_file()

    def prepare_shutdown(self) -> None:
        """Set the flag: write the marker file durably."""
        self.marker.parent.mkdir(parents=True, exist_ok=True)
        with self.marker.open("w") as handle:
            handle.write(datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
            handle.flush()
            os.fsync(handle.fileno())
        fsync_directory(self.marker.parent)
        log.info("created prepare-shutdown marker file: path=%s", self.marker)

    def unprepare_shutdown(self) -> None:
        """Unset the flag: the configured shutdown behaviour applies again."""
        self.marker.unlink(missing_ok=True)
        if self.marker.parent.is_dir():
            fsync_directory(self.marker.parent)
        log.info("removed prepare-shutdown marker file: path=%s", self.marker)

    # lifecycle -------------------------------------------------------------------------

    def _starting(self) -> None:
        if self.prepared:
            log.info("prepare-shutdown marker found: the head is flushed on shutdown")
        self.store.read_only = False
        self.store.start_flusher()

    def _stopping(self) -> None:
        self.store.read_only = True
        self.store.stop_flusher()
        flush = self.flush_override
        if flush is None:
            flush = self.flush_on_shutdown or self.prepared
        if flush:
            files = self.store.flush()
            log.info("ingester stopped: flushed the head into %d files", files)
        else:
            log.info("ingester stopped without flushing; the head stays in the WAL")
        if self.prepared:
            self.unprepare_shutdown()

    def shutdown(self, *, flush: bool) -> None:
        """Stop the ingester now (``/ingester/shutdown``), flushing the head or not."""
        self.flush_override = flush
        self.service.stop()

    def not_ready_reason(self) -> str | None:
        """Why the ingester is not ready for traffic, or None (the ``/ready`` check)."""
        state = self.service.state
        if state not in (State.RUNNING, State.STOPPING):
            return f"ingester not ready: {state}"
        since = self.service.running_since
        if since is not None and time.monotonic() - since < self.min_ready_seconds:
            wait = format_go_duration(round(self.min_ready_seconds * 1e9))
            return f"waiting for {wait} after startup"
        return None

"""Progress of a backfill: a bar on a terminal, periodic log lines otherwise."""

from __future__ import annotations

import logging
import time
from typing import TextIO

from svc.backfill.run import Summary

__all__ = ["ProgressReporter"]

log = logging.getLogger("svc.backfill")

_MB = 1_000_000


class ProgressReporter:
    """Called after each chunk; redraws at most every ``interval`` seconds."""

    def __init__(self, stream: TextIO, total_bytes: int, *, interval: float | None = None):
        self.stream = stream
        self.terminal = stream.isatty()
        self.total = total_bytes
        self.interval = interval if interval is not None else (0.2 if self.terminal else 10.0)
        self.started = time.monotonic()
        self._last = 0.0

    def __call__(self, summary: Summary, current_bytes: int) -> None:
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        done = summary.bytes
        elapsed = max(now - self.started, 1e-9)
        rate = done / elapsed
        eta = (self.total - done) / rate if rate > 0 and self.total > done else 0.0
        rejects = sum(summary.rejects.values())
        figures = (
            f"{done / _MB:.1f}/{self.total / _MB:.1f} MB, {summary.lines} lines, "
            f"{rate / _MB:.1f} MB/s, ETA {eta:.0f}s, {rejects} rejected"
        )
        if self.terminal:
            share = min(done / self.total, 1.0) if self.total else 0.0
            filled = int(share * 30)
            bar = "#" * filled + "-" * (30 - filled)
            self.stream.write(f"\r[{bar}] {share * 100:5.1f}% {figures}\x1b[K")
            self.stream.flush()
        else:
            log.info("backfill progress: %s", figures)

    def finish(self) -> None:
        """End the bar's line."""
        if self.terminal:
            self.stream.write("\n")
            self.stream.flush()

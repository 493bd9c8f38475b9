"""Small-file compaction: each tenant-day's small files merged into few large ones.

A file is small below half the target size. A partition whose day ended more than an hour
ago merges all its small files as soon as it has two, or one flushed file (rewritten in the
compacted layout, a third smaller). A partition still receiving data
(today's, mostly) merges only its flushed files, once ``compaction_min_files`` of them
have gathered: its compacted files wait for the day to end, so no file is rewritten over
and over while the day grows.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from datetime import UTC, datetime

from svc.compactor.context import CompactorContext
from svc.compactor.rewrite import RewriteJob
from svc.storage.catalog import FileEntry
from svc.storage.lake import DAY_NS, time_bucketed

__all__ = ["compact", "compaction_jobs"]

log = logging.getLogger(__name__)

_SETTLE_NS = 3_600 * 1_000_000_000


def compaction_jobs(
    files: list[FileEntry], *, target_bytes: int, min_files: int, now_ns: int
) -> list[RewriteJob]:
    """The merges due among ``files`` (module docstring), oldest partitions first."""
    partitions: dict[tuple[str, str], list[FileEntry]] = defaultdict(list)
    for entry in files:
        if entry.file_bytes < target_bytes // 2:
            partitions[(entry.tenant, entry.day)].append(entry)
    jobs = []
    for (tenant, day), small in sorted(partitions.items(), key=lambda item: item[0][1]):
        flushed = [f for f in small if not time_bucketed(f.path)]
        if _day_start_ns(day) + DAY_NS + _SETTLE_NS < now_ns:
            chosen = small
            due = len(small) >= 2 or bool(flushed)
        else:
            chosen = flushed
            due = len(flushed) >= min_files
        if due:
            ordered = tuple(sorted(chosen, key=lambda f: (f.min_ts, f.path)))
            jobs.append(RewriteJob("compaction", tenant, day, ordered))
    return jobs


def compact(ctx: CompactorContext) -> None:
    """One compaction pass."""
    cfg = ctx.config.compactor
    jobs = compaction_jobs(
        ctx.store.catalog.all_files(),
        target_bytes=cfg.compaction_target_file_size,
        min_files=cfg.compaction_min_files,
        now_ns=time.time_ns(),
    )
    for job in jobs:
        if ctx.stopping.is_set():
            return
        ctx.run_job(job)


def _day_start_ns(day: str) -> int:
    try:
        start = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return 1 << 62  # an unknown partition name is never taken as closed
    return int(start.timestamp()) * 1_000_000_000

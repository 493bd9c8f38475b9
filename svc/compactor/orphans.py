"""The sweep of orphaned lake files: published, never listed in the catalog.

A writer killed between a file's upload and its catalog commit, or a compaction that
failed after writing its outputs (and could not remove them), leaves a file that no
catalog lists and nothing reads; in a bucket, or a lake shared through PostgreSQL, no
startup removes it. The compactor lists the lake, then reads the catalog, and removes the
files that are

* older than ``compactor.orphan_grace_period`` (a flush or compaction in another process
  commits its files within that time of writing them),
* not listed in the catalog read after the listing (a commit in between lists them there),
* not published by this process and still waiting for their commit (``unsettled``), and
* not replaced files this process still keeps for their readers.
"""

from __future__ import annotations

import logging
import time

from svc.compactor.context import CompactorContext
from svc.storage.skip_index import remove_sidecars
from svc.storage.store import Store

__all__ = ["orphans", "sweep_orphans"]

log = logging.getLogger(__name__)


def sweep_orphans(ctx: CompactorContext) -> None:
    """Remove the orphaned lake files (a compactor pass)."""
    grace = ctx.config.compactor.orphan_grace_period
    if grace > 0:
        ctx.metrics.orphans_removed.inc(len(orphans(ctx.store, grace, time.time())))


def orphans(store: Store, grace_seconds: float, now: float) -> list[str]:
    """Remove the lake files older than ``now - grace_seconds`` that nothing lists or
    awaits; returns their lake paths."""
    lake = store.lake
    old = [path for path, written in lake.listing() if written < now - grace_seconds]
    if not old:
        return []
    # After the listing: a file committed since is listed, one published since is not old.
    kept = lake.unsettled() | store.leases.retired()
    listed = {entry.path for entry in store.catalog.all_files()}
    removed = []
    for path in old:
        if path in listed or path in kept:
            continue
        try:
            lake.remove(path)
        except OSError as exc:
            log.warning("could not remove orphaned lake file %s: %s", path, exc)
            continue
        remove_sidecars(lake, [path])
        log.warning(
            "removed orphaned lake file %s: no catalog commit listed it within %ss of its "
            "upload (a writer stopped between upload and commit, or a compaction failed)",
            path,
            grace_seconds,
        )
        removed.append(path)
    return removed

"""The compactor service: one thread running deletion, retention and compaction passes.

Started on the targets that run the compactor (``all``, ``backend``, ``compactor``) and
listed by ``GET /services``. It waits one ``compaction_interval`` after starting (as the
reference does), then every ``compaction_interval`` it compacts; with
``retention_enabled``, every retention interval it first processes delete requests, then
applies retention. Between passes it removes replaced files once nothing reads them. A
pass resumes on restart whatever a crash interrupted: files are swapped one transaction at
a time and requests are marked processed only after their files were rewritten.
Stopping cancels a running job (its new files are removed) and waits for the thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from svc.compactor.compaction_pass import compact
from svc.compactor.config import retention_interval_seconds
from svc.compactor.context import CompactorContext
from svc.compactor.deletion_pass import process_deletes
from svc.compactor.deletions import Deletions
from svc.compactor.metrics import CompactorMetrics
from svc.compactor.orphans import sweep_orphans
from svc.compactor.retention_pass import apply_retention
from svc.compactor.rewrite import Rewriter
from svc.compactor.writer import WriterSettings
from svc.config import Config
from svc.query.engine import QueryEngine
from svc.storage.store import Store

__all__ = ["Compactor", "build_compactor", "work_directory"]

log = logging.getLogger(__name__)

_TICK_SECONDS = 1.0
COMPACTOR_LOCK = 4242002
"""The catalog lock a compactor holds while it runs passes: of several instances that run
the compactor over one shared catalog, one works and the others wait."""


def work_directory(path_prefix: str, configured: str) -> Path:
    """The compactor's scratch directory (``<path_prefix>/compactor`` by default)."""
    return Path(configured) if configured else Path(path_prefix) / "compactor"


class Compactor:
    """Runs the passes on a schedule, on a thread of its own."""

    def __init__(self, ctx: CompactorContext) -> None:
        self.ctx = ctx
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        cfg = ctx.config.compactor
        self.compaction_interval = cfg.compaction_interval
        self.retention_interval = retention_interval_seconds(cfg)
        self.passes_total = 0
        self._waiting_logged = False

    def start(self) -> None:
        """Start the thread (the first passes run one compaction interval later)."""
        self.ctx.stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="compactor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Cancel the running job, stop the thread, remove what is due."""
        self.ctx.stopping.set()
        if self._thread is not None:
            self._thread.join()
        self.ctx.rewriter.close()

    def run_once(self, *, retention: bool = True) -> None:
        """One round of every pass (deletes and retention only when retention is on); none
        while another instance's compactor holds the catalog's compactor lock."""
        with self._lock:
            ctx = self.ctx
            if not self._hold_lock():
                return
            if retention and ctx.config.compactor.retention_enabled:
                self._guarded("deletion", process_deletes)
                self._guarded("retention", apply_retention)
            self._guarded("compaction", compact)
            self._guarded("orphans", sweep_orphans)
            ctx.store.remove_retired()
            self.passes_total += 1
            ctx.metrics.last_run.set(time.time())

    def _hold_lock(self) -> bool:
        try:
            held = self.ctx.store.catalog.hold_lock(COMPACTOR_LOCK)
        except Exception as exc:
            log.warning("could not take the compactor lock: %s", exc)
            return False
        if not held and not self._waiting_logged:
            log.info("another instance's compactor holds the compactor lock: waiting")
        elif held and self._waiting_logged:
            log.info("took the compactor lock")
        self._waiting_logged = not held
        return held

    def _guarded(self, name: str, run: Callable[[CompactorContext], None]) -> None:
        if self.ctx.stopping.is_set():
            return
        try:
            run(self.ctx)
        except Exception:
            log.exception("compactor %s pass failed; it runs again on the next round", name)
            self.ctx.metrics.processing_failures.labels(name).inc()

    def _loop(self) -> None:
        ctx = self.ctx
        # As the reference: one interval first, so a restarted instance does not compact
        # while the previous one may still finish (and startup stays quick).
        log.info("waiting %ss before starting the compactor's passes", self.compaction_interval)
        next_compaction = next_retention = time.monotonic() + self.compaction_interval
        while not ctx.stopping.is_set():
            now = time.monotonic()
            retention = now >= next_retention
            if now >= next_compaction or retention:
                self.run_once(retention=retention)
                next_compaction = time.monotonic() + self.compaction_interval
                if retention:
                    next_retention = time.monotonic() + self.retention_interval
            else:
                ctx.store.remove_retired()
            ctx.stopping.wait(_TICK_SECONDS)


def build_compactor(
    config: Config,
    store: Store,
    engine: QueryEngine,
    deletions: Deletions,
    metrics: CompactorMetrics,
) -> Compactor:
    """A compactor over the instance's store and engine (not started)."""
    cfg = config.compactor
    settings = WriterSettings(
        level=cfg.compaction_level,
        row_group_rows=config.ingester.row_group_rows,
        target_bytes=cfg.compaction_target_file_size,
    )
    work = work_directory(config.common.path_prefix, cfg.working_directory)
    rewriter = Rewriter(store, engine, settings, work)
    metrics.watch_waiting(store.leases.waiting)
    return Compactor(CompactorContext(config, store, engine, deletions, metrics, rewriter))

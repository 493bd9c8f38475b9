"""Loaded rule groups of every tenant, their schedule, and the threads evaluating them.

The store is read every ``poll_interval`` (and at once after a write through the API):
new groups are loaded, changed ones replaced (keeping their alerts and series), removed
ones dropped with stale markers for their series. Each group is evaluated on its own
interval at slots ``offset + k * interval`` (the offset a stable hash of the group, as
Prometheus spreads groups) by a pool of ``max_concurrent_evaluations`` threads: a slow
group delays no other group while threads are free, and a group whose evaluation overran
skips the slots it missed.

The first groups loaded for a tenant restore their alerts' ``for`` state after their
second evaluation (Prometheus' order); groups added later start restored.
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from svc.ruler.alerting import OutputSample
from svc.ruler.group import GroupRuntime
from svc.ruler.rulefmt import RuleGroup
from svc.ruler.store import RuleStore, RuleStoreError

__all__ = ["Manager"]

log = logging.getLogger(__name__)

GroupKey = tuple[str, str, str]


class Manager:
    """Schedules and evaluates every loaded rule group."""

    def __init__(
        self,
        store: RuleStore,
        *,
        build: Callable[[str, str, RuleGroup, bool], GroupRuntime],
        evaluate: Callable[[GroupRuntime, int], None],
        append: Callable[[str, list[OutputSample]], None],
        forget: Callable[[GroupKey], None],
        tenant_allowed: Callable[[str], bool],
        poll_interval_s: float,
        max_concurrent: int,
    ) -> None:
        self.store = store
        self._build = build
        self._evaluate = evaluate
        self._append = append
        self._forget = forget
        self._tenant_allowed = tenant_allowed
        self.poll_interval_s = poll_interval_s
        self._groups: dict[GroupKey, GroupRuntime] = {}
        self._next: dict[GroupKey, int] = {}
        self._running: set[GroupKey] = set()
        self._loaded_tenants: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._sync_requested = True
        self._stopped = False
        self._pool = ThreadPoolExecutor(max(1, max_concurrent), thread_name_prefix="ruler-eval")
        self._thread: threading.Thread | None = None
        self.iterations_missed: dict[GroupKey, int] = {}

    # lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Load the rules and start scheduling."""
        self.sync()
        self._thread = threading.Thread(target=self._loop, name="ruler-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop scheduling and wait for running evaluations."""
        with self._lock:
            self._stopped = True
            self._wake.notify_all()
        if self._thread is not None:
            self._thread.join(30)
        self._pool.shutdown(wait=True, cancel_futures=True)

    def request_sync(self) -> None:
        """Re-read the store now (after a write through the API)."""
        with self._lock:
            self._sync_requested = True
            self._wake.notify_all()

    # reading ----------------------------------------------------------------------

    def groups(self, tenant: str) -> list[GroupRuntime]:
        """The tenant's loaded groups, by namespace then name."""
        with self._lock:
            found = [g for key, g in self._groups.items() if key[0] == tenant]
        return sorted(found, key=lambda g: (g.namespace, g.group.name))

    def all_groups(self) -> list[GroupRuntime]:
        """Every loaded group."""
        with self._lock:
            return list(self._groups.values())

    # loading ----------------------------------------------------------------------

    def _desired(self) -> dict[GroupKey, RuleGroup] | None:
        desired: dict[GroupKey, RuleGroup] = {}
        try:
            tenants = [t for t in self.store.tenants() if self._tenant_allowed(t)]
        except (OSError, RuleStoreError) as exc:
            log.error("listing rule tenants failed: %s", exc)
            return None
        for tenant in tenants:
            try:
                namespaces = self.store.namespaces(tenant)
            except RuleStoreError as exc:
                log.error("loading rules of tenant %s failed: %s", tenant, exc)
                with self._lock:
                    kept = {k: g.group for k, g in self._groups.items() if k[0] == tenant}
                desired.update(kept)
                continue
            for namespace, groups in namespaces.items():
                for group in groups:
                    desired[(tenant, namespace, group.name)] = group
        return desired

    def sync(self) -> None:
        """Bring the loaded groups in line with the store."""
        desired = self._desired()
        if desired is None:
            return
        now = time.time_ns()
        with self._lock:
            for key in [k for k in self._groups if k not in desired]:
                if key in self._running:
                    self._sync_requested = True
                    continue
                old = self._groups.pop(key)
                self._next.pop(key, None)
                self._append(key[0], old.stale_markers(now))
                self._forget(key)
            first_load = {k[0] for k in desired} - self._loaded_tenants
            for key, group in desired.items():
                old_group = self._groups.get(key)
                if old_group is not None and old_group.group == group:
                    continue
                if key in self._running:
                    self._sync_requested = True
                    continue
                fresh = self._build(key[0], key[1], group, key[0] in first_load)
                if old_group is not None:
                    fresh.copy_state(old_group)
                    self._append(key[0], fresh.leftover_stale_markers(old_group, now))
                self._groups[key] = fresh
                if old_group is None or old_group.interval_ns != fresh.interval_ns:
                    self._next[key] = _first_slot(key, fresh.interval_ns, now)
            self._loaded_tenants |= {k[0] for k in desired}

    # scheduling -------------------------------------------------------------------

    def _loop(self) -> None:
        next_sync = time.monotonic() + self.poll_interval_s
        while True:
            with self._lock:
                if self._stopped:
                    return
                sync_now = self._sync_requested or time.monotonic() >= next_sync
                self._sync_requested = False
            if sync_now:
                self.sync()
                next_sync = time.monotonic() + self.poll_interval_s
            with self._lock:
                if self._stopped:
                    return
                wait = self._dispatch_due(time.time_ns())
                wait = min(wait, max(0.0, next_sync - time.monotonic()))
                if not self._sync_requested:
                    self._wake.wait(wait)

    def _dispatch_due(self, now: int) -> float:
        """Submit every due group that is not running; seconds until the next is due."""
        soonest = None
        for key, slot in self._next.items():
            if key in self._running:
                continue
            if slot > now:
                soonest = slot if soonest is None else min(soonest, slot)
                continue
            group = self._groups[key]
            missed = (now - slot) // group.interval_ns
            if missed:
                self.iterations_missed[key] = self.iterations_missed.get(key, 0) + missed
            ts = slot + missed * group.interval_ns
            self._running.add(key)
            self._next[key] = ts + group.interval_ns
            self._pool.submit(self._run, group, ts)
        if soonest is None:
            return self.poll_interval_s
        return max(0.0, (soonest - now) / 1e9)

    def _run(self, group: GroupRuntime, ts: int) -> None:
        try:
            self._evaluate(group, ts)
        except Exception:
            log.exception("rule group evaluation failed: %s", group.key)
        finally:
            with self._lock:
                self._running.discard(group.key)
                self._wake.notify_all()


def _first_slot(key: GroupKey, interval_ns: int, now: int) -> int:
    """The first evaluation time: the group's slot after the current one (Prometheus).

    Slots fall on whole milliseconds (intervals are whole milliseconds), so a recorded
    sample's timestamp is exactly the time its query was evaluated at.
    """
    interval_ms = max(1, interval_ns // 1_000_000)
    offset = zlib.crc32("\xff".join(key).encode()) % interval_ms * 1_000_000
    adjusted = now - offset
    return adjusted - adjusted % interval_ns + offset + interval_ns

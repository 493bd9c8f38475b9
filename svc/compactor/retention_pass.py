"""Retention: entries older than their stream's period leave the lake (DELETION.md 8).

Expiry works per stream and per file, like the reference's per chunk: a stream's
entries in a file expire once the newest of them is older than the stream's period. A
file whose streams have all expired is unlisted whole (no rewrite: whole days past
retention go cheaply); a file with some expired streams is rewritten without them. A
stream with entries on both sides of the cut-off waits until all of them are past it, so a
file is not rewritten again at every pass. Replaced files leave the disk after
``retention_delete_delay``. Each pass logs one line with its totals (and one per tenant it
removed anything from) and counts files, entries and bytes per tenant.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass

from svc.compactor.config import parse_selector
from svc.compactor.context import CompactorContext
from svc.compactor.limits import retention_period, retention_streams
from svc.compactor.retention import RetentionPolicy, choose_periods
from svc.compactor.rewrite import RewriteJob
from svc.storage.catalog import FileEntry, FilesChangedError, FileStreamRow

__all__ = ["apply_retention", "retention_policy"]

log = logging.getLogger(__name__)


def retention_policy(ctx: CompactorContext, tenant: str) -> RetentionPolicy:
    """The periods of the tenant's streams."""
    limits = ctx.deletions.limits_for(tenant)
    rules = retention_streams(limits)
    default = retention_period(limits)
    if not rules:
        return RetentionPolicy(default, {})
    matched = [ctx.matching_streams(tenant, parse_selector(rule.selector)) for rule in rules]
    streams = [info.stream_id for info in ctx.store.index.streams(tenant)]
    return RetentionPolicy(default, choose_periods(rules, matched, streams))


@dataclass
class _Removed:
    """What a pass removed from one tenant."""

    files_dropped: int = 0
    files_rewritten: int = 0
    entries: int = 0
    line_bytes: int = 0


def apply_retention(ctx: CompactorContext) -> None:
    """One retention pass over every tenant with files."""
    started = time.perf_counter()
    files_by_tenant: dict[str, list[FileEntry]] = defaultdict(list)
    for entry in ctx.store.catalog.all_files():
        files_by_tenant[entry.tenant].append(entry)
    total, tenants = _Removed(), 0
    for tenant, files in sorted(files_by_tenant.items()):
        if ctx.stopping.is_set():
            break
        policy = retention_policy(ctx, tenant)
        if policy.applies():
            tenants += 1
            removed = _tenant_retention(ctx, tenant, files, policy)
            total.files_dropped += removed.files_dropped
            total.files_rewritten += removed.files_rewritten
            total.entries += removed.entries
            total.line_bytes += removed.line_bytes
    log.info(
        "retention pass done: tenants_with_retention=%d files_dropped=%d files_rewritten=%d "
        "entries_removed=%d line_bytes_removed=%d seconds=%.3f",
        tenants,
        total.files_dropped,
        total.files_rewritten,
        total.entries,
        total.line_bytes,
        time.perf_counter() - started,
    )


def _expired(rows: list[FileStreamRow], policy: RetentionPolicy, now_ns: int) -> set[int]:
    expired = set()
    for row in rows:
        period = policy.period(row.stream_id)
        if period > 0 and row.max_ts < now_ns - round(period * 1e9):
            expired.add(row.stream_id)
    return expired


def _tenant_retention(
    ctx: CompactorContext, tenant: str, files: list[FileEntry], policy: RetentionPolicy
) -> _Removed:
    now = time.time_ns()
    delay = ctx.config.compactor.retention_delete_delay
    summaries = ctx.summaries(files)
    dropped: list[FileEntry] = []
    rewrites: list[tuple[FileEntry, set[int]]] = []
    for entry in files:
        rows = summaries.get(entry.path, [])
        expired = _expired(rows, policy, now)
        if not expired:
            continue
        if expired >= {r.stream_id for r in rows}:
            dropped.append(entry)
        else:
            rewrites.append((entry, expired))
    if not dropped and not rewrites:
        return _Removed()
    removed_rows = removed_bytes = 0
    touched: set[int] = set()
    if dropped:
        try:
            ctx.store.swap_files(dropped, [], [], delay_seconds=delay)
        except FilesChangedError as exc:
            log.warning("retention skipped files: %s (tried again on the next pass)", exc.message)
            dropped = []
        for entry in dropped:
            removed_rows += entry.rows
            removed_bytes += entry.line_bytes
            touched |= {r.stream_id for r in summaries.get(entry.path, [])}
    rewritten = 0
    for entry, expired in rewrites:
        if ctx.stopping.is_set():
            break
        job = RewriteJob(
            "retention", tenant, entry.day, (entry,), dropped_streams=frozenset(expired)
        )
        result = ctx.run_job(job, delay_seconds=delay)
        if result is None:
            continue
        rewritten += 1
        removed_rows += result.rows_in - result.rows_out
        removed_bytes += result.line_bytes_in - result.line_bytes_out
        touched |= expired
    ctx.store.remove_retired()
    gone = ctx.store.refresh_streams(tenant, touched)
    metrics = ctx.metrics
    metrics.retention_removed_files.labels(tenant).inc(len(dropped) + rewritten)
    metrics.retention_removed_rows.labels(tenant).inc(removed_rows)
    metrics.retention_removed_bytes.labels(tenant).inc(removed_bytes)
    log.info(
        "retention applied: tenant=%s files_dropped=%d files_rewritten=%d entries_removed=%d "
        "line_bytes_removed=%d streams_emptied=%d",
        tenant,
        len(dropped),
        rewritten,
        removed_rows,
        removed_bytes,
        len(gone),
    )
    return _Removed(len(dropped), rewritten, removed_rows, removed_bytes)

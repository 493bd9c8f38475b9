"""Physical deletion: delete requests past their cancel period leave the lake.

A pass takes the oldest requests (by start time, at most ``delete_batch_size`` shards) of
tenants in ``filter-and-delete`` mode once they are older than the cancel period plus the
grace period. It flushes the head first (the requested entries that exist are then all in
files), finds the files holding matching entries (per-stream summaries first, then a
count through the query engine), rewrites them per tenant-day without those entries, and
marks the shards processed, raising the tenant's cache generation number. Until then the
entries are hidden from queries; from then on no file holds them.

Copies kept for inspection are scrubbed too: quarantined files of the tenant's affected
days, and damaged WAL segments (their damaged records cannot be told apart by tenant).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import UTC, datetime

from svc.compactor.context import CompactorContext
from svc.compactor.filters import shard_filters
from svc.compactor.limits import (
    FILTER_AND_DELETE,
    deletion_mode,
    retention_period,
    retention_streams,
)
from svc.compactor.request_store import PendingShard
from svc.compactor.requests import now_ms
from svc.compactor.retention import max_retention
from svc.compactor.rewrite import RewriteJob
from svc.ops.cache_gen import raise_generation
from svc.storage.catalog import FileEntry
from svc.storage.lake import DAY_NS
from svc.storage.store import DeleteFilter, FlushError
from svc.tenancy import tenant_directory_name

__all__ = ["process_deletes"]

log = logging.getLogger(__name__)


def process_deletes(ctx: CompactorContext) -> None:
    """One pass over the pending delete requests."""
    cfg = ctx.config.compactor
    requests = ctx.deletions.requests
    try:
        pending = requests.pending()
    except Exception:
        ctx.metrics.load_attempts.labels("fail").inc()
        ctx.metrics.processing_failures.labels("load_requests").inc()
        log.exception("loading pending delete requests failed")
        return
    ctx.metrics.load_attempts.labels("success").inc()
    now = now_ms()
    min_age = round((cfg.delete_request_cancel_period + cfg.delete_request_grace_period) * 1000)
    ready = [
        s
        for s in pending
        if deletion_mode(ctx.deletions.limits_for(s.tenant)) == FILTER_AND_DELETE
        and now - s.created_ms > min_age
    ]
    ctx.metrics.pending_requests.set(len({s.request_id for s in pending}))
    oldest = min((s.created_ms + min_age for s in ready), default=now)
    ctx.metrics.oldest_pending_age.set(max(now - oldest, 0) / 1000)
    batch = ready[: cfg.delete_batch_size]
    if not batch:
        return
    expired = [s for s in batch if _beyond_retention(ctx, s, now)]
    if expired:
        _mark(ctx, expired)
    work = [s for s in batch if s not in expired]
    if not work:
        return
    try:
        ctx.store.flush()
    except FlushError as exc:
        ctx.metrics.processing_failures.labels("flush").inc()
        log.error("delete requests not processed: the head could not be flushed: %s", exc.message)
        return
    by_tenant: dict[str, list[PendingShard]] = defaultdict(list)
    for shard in work:
        by_tenant[shard.tenant].append(shard)
    for tenant, shards in by_tenant.items():
        if ctx.stopping.is_set():
            return
        if _delete(ctx, tenant, shards):
            _mark(ctx, shards)
        else:
            ctx.metrics.processing_failures.labels("rewrite").inc()


def _beyond_retention(ctx: CompactorContext, shard: PendingShard, now: int) -> bool:
    """Whether the shard's whole range is older than anything the tenant keeps."""
    limits = ctx.deletions.limits_for(shard.tenant)
    longest = max_retention(retention_period(limits), retention_streams(limits))
    return longest is not None and shard.shard.end_ms < now - longest * 1000


def _delete(ctx: CompactorContext, tenant: str, shards: list[PendingShard]) -> bool:
    """Rewrite the tenant's files holding entries of ``shards``; False when a job failed."""
    filters = shard_filters((s.request_id, s.query, s.shard) for s in shards)
    selectors = {f.query.selector.matchers for f in filters}
    by_selector = {m: ctx.matching_streams(tenant, m) for m in selectors}
    matched = {f: by_selector[f.query.selector.matchers] for f in filters}
    low = min(f.start_ns for f in filters)
    high = max(f.end_ns for f in filters)
    files = ctx.store.catalog.files(tenant, low, high + 1)
    summaries = ctx.summaries(files)
    candidates = []
    for entry in files:
        rows = summaries.get(entry.path)
        if rows is None or any(
            r.stream_id in matched[f] and r.min_ts <= f.end_ns and r.max_ts >= f.start_ns
            for r in rows
            for f in filters
        ):  # no summaries: only the count below can tell
            candidates.append(entry)
    by_day: dict[str, list[FileEntry]] = defaultdict(list)
    for entry in candidates:
        if ctx.rewriter.visible_rows(tenant, [entry], filters) < entry.rows:
            by_day[entry.day].append(entry)
    removed = 0
    for day, inputs in sorted(by_day.items()):
        job = RewriteJob("delete", tenant, day, tuple(inputs), deletes=filters)
        result = ctx.run_job(job, delay_seconds=ctx.config.compactor.retention_delete_delay)
        if result is None:
            return False
        removed += result.rows_in - result.rows_out
    ctx.metrics.deleted_lines(tenant, removed)
    gone = ctx.store.refresh_streams(tenant, set().union(*matched.values()))
    _scrub(ctx, tenant, filters)
    log.info(
        "delete requests applied: user=%s requests=%s files_rewritten=%d lines_deleted=%d "
        "streams_emptied=%d",
        tenant,
        ",".join(sorted({s.request_id for s in shards})),
        sum(len(v) for v in by_day.values()),
        removed,
        len(gone),
    )
    return True


def _mark(ctx: CompactorContext, shards: list[PendingShard]) -> None:
    """Set shards processed (raising each tenant's cache generation), end their filters,
    count the requests now complete."""
    tenants = {s.tenant for s in shards}
    with ctx.store.catalog.transaction() as db:
        ctx.deletions.requests.mark_processed(db, shards)
        for tenant in tenants:
            raise_generation(db, tenant)
    ctx.deletions.requests.backed_up()
    ctx.deletions.filters.reload()
    for identifier, tenant in {(s.request_id, s.tenant) for s in shards}:
        found = ctx.deletions.requests.get(tenant, identifier)
        if found is not None and found.status == "processed":
            ctx.metrics.requests_processed.labels(tenant).inc()
            log.info("delete request processed: delete_request_id=%s user=%s", identifier, tenant)


def _scrub(ctx: CompactorContext, tenant: str, filters: tuple[DeleteFilter, ...]) -> None:
    """Remove kept copies that may hold deleted entries: the tenant's quarantined files of
    the affected days, and damaged WAL segments."""
    store = ctx.store
    root = store.quarantine_root / tenant_directory_name(tenant)
    if root.is_dir():
        for directory in root.glob("day=*"):
            if not any(_day_overlaps(directory.name[4:], f) for f in filters):
                continue
            for path in directory.iterdir():
                path.unlink(missing_ok=True)
                log.warning(
                    "removed quarantined file %s: a processed delete request covers its tenant "
                    "and day, and a damaged file cannot be filtered",
                    path,
                )
    corrupt = store.wal.corrupt_directory
    if corrupt.is_dir():
        for path in corrupt.iterdir():
            path.unlink(missing_ok=True)
            log.warning(
                "removed damaged WAL segment %s: a processed delete request may cover its "
                "damaged records (their intact records were replayed)",
                path,
            )


def _day_overlaps(day: str, delete: DeleteFilter) -> bool:
    try:
        start = int(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()) * 10**9
    except ValueError:
        return False
    return start <= delete.end_ns and start + DAY_NS > delete.start_ns

"""The ingester's limits on validated streams: active stream count, per-stream rate and the
out-of-order window (LIMITS.md §1, step 5 of §1.1).

A stream is active from its first push until it has received nothing for
``ingester.chunk_idle_period`` (the reference keeps a stream in memory about that long).
While active it has a rate limiter and remembers its newest timestamp: with
``unordered_writes`` an entry older than that timestamp minus half of
``ingester.max_chunk_age`` is refused ("too far behind"); without, any entry older than it.

Each stream is admitted or refused on its own; per-stream rate limiting is all or nothing
for a stream's entries of one push. The error answered is the last refused stream's: 429
for the stream count or the rate, 400 when only entries out of the window were refused,
listing at most ``ingester.max_returned_stream_errors`` entries.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gocompat.bytesize import format_datasize
from svc.config import LimitsConfig
from svc.errors import PRODUCT, BadRequestError, ServiceError, TooManyRequestsError
from svc.ingest.model import PushStream
from svc.ingest.sizes import stream_sizes
from svc.ingest.validate import Discard
from svc.limits.ratelimit import TokenBucket
from svc.timestamps import format_go_time, format_rfc3339

__all__ = ["Admission", "IngesterLimits"]

log = logging.getLogger(__name__)

_SWEEP_SECONDS = 10.0
STREAM_LIMIT = "stream_limit"
PER_STREAM_RATE_LIMIT = "per_stream_rate_limit"
TOO_FAR_BEHIND = "too_far_behind"
OUT_OF_ORDER = "out_of_order"


@dataclass(slots=True)
class _Stream:
    bucket: TokenBucket
    last_seen: float
    highest_ts: int = 0


@dataclass
class _Tenant:
    streams: dict[str, _Stream] = field(default_factory=dict)
    swept: float = 0.0


@dataclass
class Admission:
    """The streams an ingester takes from one push and what it refused."""

    streams: list[PushStream] = field(default_factory=list)
    discards: list[Discard] = field(default_factory=list)
    error: ServiceError | None = None
    """The last refused stream's error."""


class IngesterLimits:
    """Active streams and their limiters, per tenant."""

    def __init__(
        self,
        *,
        max_chunk_age_s: float,
        idle_s: float,
        max_returned_errors: int,
        replication_factor: int = 1,
        healthy_ingesters: Callable[[], int] = lambda: 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.half_age_ns = int(max_chunk_age_s * 1e9) // 2
        self.idle_s = idle_s
        self.max_returned_errors = max_returned_errors
        self.replication_factor = replication_factor
        self.healthy_ingesters = healthy_ingesters
        self.clock = clock
        self._tenants: dict[str, _Tenant] = {}
        self._lock = threading.Lock()

    def stream_limit(self, limits: LimitsConfig) -> int:
        """The tenant's active stream limit here (0: none): the smaller non-zero of the
        local limit and the global one's share (``global / ingesters * RF``)."""
        local = limits.max_streams_per_user
        share = 0
        if limits.max_global_streams_per_user > 0:
            ingesters = max(self.healthy_ingesters(), 1)
            share = int(limits.max_global_streams_per_user / ingesters * self.replication_factor)
        if local and share:
            return min(local, share)
        return local or share

    def active_streams(self, tenant: str) -> int:
        """Streams of the tenant active now."""
        with self._lock:
            found = self._tenants.get(tenant)
            if found is None:
                return 0
            self._sweep(found, self.clock(), force=True)
            return len(found.streams)

    def admit(
        self,
        tenant: str,
        limits: LimitsConfig,
        streams: list[PushStream],
        stream_bytes: list[int],
    ) -> Admission:
        """Check each stream; the accepted ones (and entries) are reserved at once."""
        out = Admission()
        now = self.clock()
        with self._lock:
            state = self._tenants.setdefault(tenant, _Tenant())
            self._sweep(state, now)
            for stream, size in zip(streams, stream_bytes, strict=True):
                self._admit_stream(out, state, tenant, limits, stream, size, now)
        return out

    def _sweep(self, state: _Tenant, now: float, *, force: bool = False) -> None:
        if not force and now - state.swept < _SWEEP_SECONDS:
            return
        state.swept = now
        cutoff = now - self.idle_s
        idle = [key for key, stream in state.streams.items() if stream.last_seen < cutoff]
        for key in idle:
            del state.streams[key]

    def _admit_stream(
        self,
        out: Admission,
        state: _Tenant,
        tenant: str,
        limits: LimitsConfig,
        stream: PushStream,
        size: int,
        now: float,
    ) -> None:
        found = state.streams.get(stream.key)
        if found is None or found.last_seen < now - self.idle_s:
            limit = self.stream_limit(limits)
            if found is None and limit and len(state.streams) >= limit:
                out.discards.append(
                    Discard(STREAM_LIMIT, stream.labels, len(stream.timestamps), size)
                )
                out.error = TooManyRequestsError(
                    f"maximum active stream limit exceeded when trying to create stream "
                    f"{stream.key}, reduce the number of active streams (reduce labels or "
                    f"reduce label values), or contact your {PRODUCT} administrator to see "
                    f"if the limit can be increased, user: '{tenant}'"
                )
                log.debug(
                    "tenant '%s' per-user streams limit exceeded, streams: %d exceeds calculated "
                    "limit: %d (local limit: %d, global limit: %d, local share: %d)",
                    tenant,
                    len(state.streams) + 1,
                    limit,
                    limits.max_streams_per_user,
                    limits.max_global_streams_per_user,
                    limit,
                )
                return
            bucket = TokenBucket(
                float(limits.per_stream_rate_limit), float(limits.per_stream_rate_limit_burst), now
            )
            found = state.streams[stream.key] = _Stream(bucket, now)
        else:
            found.bucket.set_limits(
                float(limits.per_stream_rate_limit), float(limits.per_stream_rate_limit_burst), now
            )
        found.last_seen = now
        self._admit_entries(out, found, tenant, limits, stream, size, now)

    def _admit_entries(
        self,
        out: Admission,
        found: _Stream,
        tenant: str,
        limits: LimitsConfig,
        stream: PushStream,
        size: int,
        now: float,
    ) -> None:
        timestamps = stream.timestamps
        keep, behind, highest = self._window(found.highest_ts, timestamps, limits.unordered_writes)
        sizes: list[int] | None = None
        if behind:
            sizes = stream_sizes(stream.lines, stream.metadata)
            size = sum(sizes[i] for i in keep)
            reason = TOO_FAR_BEHIND if limits.unordered_writes else OUT_OF_ORDER
            dropped = sum(sizes[i] for i, _ in behind)
            out.discards.append(Discard(reason, stream.labels, len(behind), dropped))
        if keep and not found.bucket.allow_n(now, size):
            sizes = sizes or stream_sizes(stream.lines, stream.metadata)
            out.discards.append(Discard(PER_STREAM_RATE_LIMIT, stream.labels, len(keep), size))
            rate = format_datasize(limits.per_stream_rate_limit)
            failed = [
                (
                    i,
                    f"Per stream rate limit exceeded (limit: {rate}/sec) while attempting to "
                    f"ingest for stream '{stream.key}' totaling {format_datasize(sizes[i])}, "
                    "consider splitting a stream via additional labels or contact your "
                    f"{PRODUCT} administrator to see if the limit can be increased",
                )
                for i in keep
            ]
            out.error = self._entries_error(TooManyRequestsError, failed, tenant, stream)
            return
        found.highest_ts = highest
        if len(keep) == len(timestamps):
            out.streams.append(stream)
        elif keep:
            out.streams.append(_subset(stream, keep))
        if behind:
            out.error = self._entries_error(BadRequestError, behind, tenant, stream)

    def _window(
        self, highest: int, timestamps: list[int], unordered: bool
    ) -> tuple[list[int], list[tuple[int, str]], int]:
        """Indices of the entries inside the out-of-order window, the refused ones with
        their reason, and the newest timestamp after the accepted ones."""
        if unordered and (not highest or min(timestamps) >= highest - self.half_age_ns):
            return list(range(len(timestamps))), [], max(highest, max(timestamps))
        keep: list[int] = []
        behind: list[tuple[int, str]] = []
        for index, ts in enumerate(timestamps):
            if unordered:
                cutoff = highest - self.half_age_ns
                if highest and ts < cutoff:
                    behind.append(
                        (
                            index,
                            f"entry too far behind, entry timestamp is: {format_rfc3339(ts)}, "
                            f"oldest acceptable timestamp is: {format_rfc3339(cutoff)}",
                        )
                    )
                    continue
            elif highest and ts < highest:
                behind.append((index, "entry out of order"))
                continue
            keep.append(index)
            highest = max(highest, ts)
        return keep, behind, highest

    def _entries_error(
        self,
        kind: type[ServiceError],
        failed: list[tuple[int, str]],
        tenant: str,
        stream: PushStream,
    ) -> ServiceError:
        """The reference's multi-line error listing a stream's refused entries (``failed``:
        entry index and reason)."""
        shown = failed
        if self.max_returned_errors > 0:
            shown = failed[: self.max_returned_errors]
        lines = [
            f"entry with timestamp {format_go_time(stream.timestamps[index])} ignored, "
            f"reason: '{reason}',\n"
            for index, reason in shown
        ]
        lines.append(
            f"user '{tenant}', total ignored: {len(failed)} out of {len(stream.timestamps)} "
            f"for stream: {stream.key}"
        )
        return kind("".join(lines))


def _subset(stream: PushStream, keep: list[int]) -> PushStream:
    metadata = stream.metadata
    return PushStream(
        stream.labels,
        stream.key,
        [stream.timestamps[i] for i in keep],
        [stream.lines[i] for i in keep],
        [metadata[i] for i in keep] if metadata is not None else None,
    )

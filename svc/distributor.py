"""The distributor: a decoded push through the tenant's limits into the store (LIMITS.md §1.1).

1. The distributor's checks (``svc/ingest/validate.py``) drop failing streams and entries
   and record their messages.
2. Nothing valid left: the 400 (or the blocked status) is answered at once.
3. The ingestion rate limit costs the accepted entries' size; refused, the whole request is
   429 and nothing is written.
4. The ingester's limits (``svc/limits/ingester.py``) admit each stream or not.
5. What is admitted is written; the answer is the ingester's error if any, else the 400
   listing the dropped entries, else 204.

Everything dropped is counted in ``svc_discarded_samples_total`` / ``_bytes_total``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal, TypeVar

from svc.config import Config, LimitsConfig
from svc.config_fields import MIB
from svc.errors import PRODUCT, ServiceError, TooManyRequestsError, UnprocessableEntityError
from svc.ingest.model import DecodedPush, PushLimits
from svc.ingest.push_limits import push_limits
from svc.ingest.validate import LINE_TOO_LONG, Discard, ValidatedPush, validate_push
from svc.limits.discarded import DiscardedData
from svc.limits.ingester import IngesterLimits
from svc.limits.overrides import Overrides
from svc.limits.ratelimit import TokenBucket
from svc.off_loop import OFF_LOOP_ENTRIES, off_loop
from svc.scheduler.favored import LoweredStep, on_a_thread
from svc.storage.store import Store

__all__ = ["Distributor", "Format", "push_limits"]

log = logging.getLogger(__name__)
_T = TypeVar("_T")

Format = Literal["loki", "otlp"]
RATE_LIMITED = "rate_limited"
OVER_LIMIT_SECONDS = 10.0
"""How long after a refusal by the rate limit a tenant's pushes count as lowered work."""
_NO_STREAMS = "error at least one valid stream is required for ingestion"


class Distributor:
    """Checks, limits and writes the pushes of every tenant."""

    def __init__(
        self,
        config: Config,
        overrides: Overrides,
        store: Store,
        discarded: DiscardedData,
        *,
        healthy_distributors: Callable[[], int] = lambda: 1,
        clock: Callable[[], float] = time.monotonic,
        lowered_step: LoweredStep = on_a_thread,
    ) -> None:
        self.config = config
        self.lowered_step = lowered_step
        """Runs the steps of the pushes of a tenant the rate limit refuses as lowered work
        (``Scheduler.lowered_step``: once favored queries stepped aside)."""
        self._refused: dict[str, float] = {}
        """tenant -> when the rate limit last refused a push of it."""
        self.overrides = overrides
        self.store = store
        self.discarded = discarded
        self.healthy_distributors = healthy_distributors
        self.clock = clock
        self.global_strategy = config.limits_config.ingestion_rate_strategy == "global"
        self._rates: dict[str, TokenBucket] = {}
        self._push_limits: dict[int, tuple[LimitsConfig, PushLimits]] = {}
        self.body_limits = self.push_limits(config.limits_config)
        self.ingester = IngesterLimits(
            max_chunk_age_s=config.ingester.max_chunk_age,
            idle_s=config.ingester.chunk_idle_period,
            max_returned_errors=config.ingester.max_returned_stream_errors,
            replication_factor=config.common.replication_factor,
        )

    def push_limits(self, limits: LimitsConfig) -> PushLimits:
        """The decoding and validation settings of a tenant with these limits."""
        found = self._push_limits.get(id(limits))
        if found is not None and found[0] is limits:
            return found[1]
        built = push_limits(self.config, limits)
        self._push_limits[id(limits)] = (limits, built)
        return built

    def rate_limit(self, limits: LimitsConfig) -> float:
        """The tenant's ingestion rate here, in bytes per second: with the global strategy
        the tenant's rate is shared by the healthy distributors."""
        rate = limits.ingestion_rate_mb * MIB
        if self.global_strategy:
            rate /= max(self.healthy_distributors(), 1)
        return rate

    def _rate_allows(self, tenant: str, limits: LimitsConfig, cost: int) -> bool:
        now = self.clock()
        rate, burst = self.rate_limit(limits), limits.ingestion_burst_size_mb * MIB
        bucket = self._rates.get(tenant)
        if bucket is None:
            bucket = self._rates[tenant] = TokenBucket(rate, burst, now)
        else:
            bucket.set_limits(rate, burst, now)
        return bucket.allow_n(now, cost)

    def over_limit(self, tenant: str) -> bool:
        """Whether the rate limit refused a push of ``tenant`` in the last
        ``OVER_LIMIT_SECONDS``: its pushes are then lowered work."""
        refused = self._refused.get(tenant)
        return refused is not None and self.clock() - refused < OVER_LIMIT_SECONDS

    async def stepped_aside(self, tenant: str) -> None:
        """For a tenant over its rate limit, once favored work has stepped aside: the
        handlers wait here before they take one of the few push slots, so that waiting
        never holds up the other tenants' pushes."""
        if self.over_limit(tenant):
            await self.lowered_step(_nothing)

    async def step(self, tenant: str, large: bool, fn: Callable[[], _T]) -> _T:
        """``fn()``, a step of a push that runs Python at length (decoding, checking): on
        the loop, or on a thread when ``large``; for a tenant over its rate limit on a
        thread of its own, once favored work has stepped aside (``lowered_step``)."""
        if not self.over_limit(tenant):
            return await off_loop(large, fn)
        return await self.lowered_step(fn)

    def body_too_large(self, tenant: str, fmt: Format, size: int) -> None:
        """Count a body refused as too large once decompressed."""
        self.discarded.discard_body(tenant, fmt, size)

    async def push(self, tenant: str, decoded: DecodedPush, fmt: Format) -> ServiceError | None:
        """Write what the limits let through; the error to answer, or None for 204.

        Raises the 422 of an empty request and the 429 of the ingestion rate limit (nothing
        is written then).
        """
        if decoded.sent_streams == 0 and fmt == "loki":
            # OTLP exporters may send empty exports; they get their success answer.
            raise UnprocessableEntityError(_NO_STREAMS)
        limits = self.overrides.limits_for(tenant)
        checks = self.push_limits(limits)
        validated = await self.step(
            tenant, False, lambda: validate_push(decoded, checks, tenant, time.time_ns())
        )
        self.discarded.mutate(
            LINE_TOO_LONG, tenant, validated.truncated_samples, validated.truncated_bytes
        )
        self.discarded.discard(tenant, limits, fmt, validated.discards)
        answer = validated.error()
        if not validated.streams:
            self._log(tenant, answer)
            return answer
        cost = validated.bytes
        if not self._rate_allows(tenant, limits, cost):
            self._refused[tenant] = self.clock()
            self.discarded.discard(tenant, limits, fmt, _rate_limited(validated))
            error = TooManyRequestsError(
                f"ingestion rate limit exceeded for user {tenant} (limit: "
                f"{int(self.rate_limit(limits))} bytes/sec) while attempting to ingest "
                f"'{validated.lines}' lines totaling '{cost}' bytes, reduce log volume or "
                f"contact your {PRODUCT} administrator to see if the limit can be increased"
            )
            self._log(tenant, error)
            raise error
        streams = await off_loop(
            validated.lines >= OFF_LOOP_ENTRIES, lambda: validated.accepted(checks)
        )
        admitted = self.ingester.admit(tenant, limits, streams, validated.stream_bytes)
        self.discarded.discard(tenant, limits, fmt, admitted.discards)
        await self.store.push(tenant, admitted.streams)
        answer = admitted.error or answer
        self._log(tenant, answer)
        return answer

    def _log(self, tenant: str, answer: ServiceError | None) -> None:
        if not self.overrides.tenant_config(tenant).log_push_request:
            return
        if answer is None:
            log.info("push request successful: tenant=%s", tenant)
        else:
            log.info("push request failed: tenant=%s code=%d err=%s", tenant, answer.status, answer)


def _nothing() -> None:
    pass


def _rate_limited(validated: ValidatedPush) -> list[Discard]:
    """The accepted entries, refused by the ingestion rate limit. Entries the checks had
    already dropped keep their own reason and are not counted again (the reference counts
    the validated lines only)."""
    return [
        Discard(RATE_LIMITED, stream.labels, len(stream.timestamps), size)
        for stream, size in zip(validated.streams, validated.stream_bytes, strict=True)
    ]

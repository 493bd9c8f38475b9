"""Rate limiters and the stream-count arithmetic (LIMITS.md §1)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from prometheus_client import CollectorRegistry

from svc.config import Config, LimitsConfig
from svc.distributor import OVER_LIMIT_SECONDS, Distributor
from svc.errors import TooManyRequestsError
from svc.ingest.model import DecodedPush
from svc.ingest.push import decode_push
from svc.limits.discarded import DiscardedData
from svc.limits.ingester import IngesterLimits
from svc.limits.overrides import Overrides
from svc.limits.ratelimit import TokenBucket
from svc.model import PushStream
from svc.storage.store import Store
from tests.e2e.clients import json_body

_T = TypeVar("_T")


def test_token_bucket_starts_full_refills_and_never_takes_more_than_the_burst() -> None:
    bucket = TokenBucket(rate=100.0, burst=200.0, now=0.0)
    assert bucket.allow_n(0.0, 150)
    assert not bucket.allow_n(0.0, 100)  # 50 left: nothing is taken
    assert bucket.allow_n(0.0, 50)
    assert not bucket.allow_n(0.5, 60)  # 50 refilled
    assert bucket.allow_n(1.0, 100)
    assert not bucket.allow_n(100.0, 201)  # over the burst, ever
    bucket.set_limits(10.0, 20.0, 100.0)
    assert bucket.tokens == 20.0


def _distributor(tmp_path: Path, strategy: str, healthy: int, store: Store) -> Distributor:
    config = Config()
    config.limits_config = dataclasses.replace(
        config.limits_config, ingestion_rate_strategy=strategy
    )
    return Distributor(
        config,
        Overrides(config),
        store,
        DiscardedData(CollectorRegistry()),
        healthy_distributors=lambda: healthy,
    )


def test_global_strategy_shares_the_rate_between_distributors(tmp_path: Path, store: Store) -> None:
    limits = LimitsConfig(ingestion_rate_mb=4.0)
    assert _distributor(tmp_path, "global", 1, store).rate_limit(limits) == 4 * 1048576
    assert _distributor(tmp_path, "global", 4, store).rate_limit(limits) == 1048576
    assert _distributor(tmp_path, "local", 4, store).rate_limit(limits) == 4 * 1048576


def test_stream_limit_is_the_smaller_non_zero_of_local_and_global_share() -> None:
    def limit(local: int, global_: int, ingesters: int = 1, rf: int = 1) -> int:
        limiter = IngesterLimits(
            max_chunk_age_s=7200,
            idle_s=1800,
            max_returned_errors=10,
            replication_factor=rf,
            healthy_ingesters=lambda: ingesters,
        )
        return limiter.stream_limit(
            LimitsConfig(max_streams_per_user=local, max_global_streams_per_user=global_)
        )

    assert limit(0, 5000) == 5000
    assert limit(100, 5000) == 100
    assert limit(0, 5000, ingesters=4, rf=2) == 2500
    assert limit(0, 0) == 0


def test_idle_streams_stop_counting() -> None:
    now = [0.0]
    limiter = IngesterLimits(
        max_chunk_age_s=7200, idle_s=60, max_returned_errors=10, clock=lambda: now[0]
    )
    limits = LimitsConfig(max_global_streams_per_user=1)
    first = PushStream((("a", "1"),), '{a="1"}', [1], ["x"], None)
    second = PushStream((("a", "2"),), '{a="2"}', [1], ["x"], None)
    assert limiter.admit("t", limits, [first], [1]).error is None
    assert limiter.admit("t", limits, [second], [1]).error is not None
    now[0] = 61.0
    assert limiter.active_streams("t") == 0
    assert limiter.admit("t", limits, [second], [1]).error is None


def test_a_tenant_the_rate_limit_refuses_steps_aside_for_favored_work(store: Store) -> None:
    """After a 429 of the ingestion rate limit, the tenant's pushes are lowered work for
    ``OVER_LIMIT_SECONDS``: their steps run as lowered work (``Scheduler.lowered_step``)."""
    now = [100.0]
    asides: list[int] = []

    async def lowered_step(fn: Callable[[], _T]) -> _T:
        def recorded() -> _T:
            asides.append(threading.get_ident())
            return fn()

        return await asyncio.to_thread(recorded)

    config = Config()
    config.limits_config = dataclasses.replace(
        config.limits_config, ingestion_rate_mb=0.001, ingestion_burst_size_mb=0.001
    )
    distributor = Distributor(
        config,
        Overrides(config),
        store,
        DiscardedData(CollectorRegistry()),
        clock=lambda: now[0],
        lowered_step=lowered_step,
    )
    body = json_body([({"app": "a"}, [(time.time_ns(), "x" * 2000)])])

    def decode() -> DecodedPush:
        return decode_push(
            body,
            content_type="application/json",
            content_encoding=None,
            limits=distributor.push_limits(config.limits_config),
        )

    async def scenario() -> int:
        decoded = await distributor.step("a", False, decode)
        assert asides == []  # not refused yet: on the loop, no wait
        with pytest.raises(TooManyRequestsError):
            await distributor.push("a", decoded, "loki")
        # the refused push's own check already ran before the refusal
        assert asides == [] and distributor.over_limit("a") and not distributor.over_limit("b")
        await distributor.stepped_aside("b")
        assert asides == []
        await distributor.stepped_aside("a")  # before it takes a push slot
        await distributor.step("a", False, decode)
        with pytest.raises(TooManyRequestsError):
            await distributor.push("a", decoded, "loki")  # its check steps aside too
        return threading.get_ident()

    loop_thread = asyncio.run(scenario())
    assert len(asides) == 3 and loop_thread not in asides
    now[0] += OVER_LIMIT_SECONDS
    assert not distributor.over_limit("a")

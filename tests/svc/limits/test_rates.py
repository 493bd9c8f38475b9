"""Rate limiters and the stream-count arithmetic (LIMITS.md §1)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from prometheus_client import CollectorRegistry

from svc.config import Config, LimitsConfig
from svc.distributor import Distributor
from svc.limits.discarded import DiscardedData
from svc.limits.ingester import IngesterLimits
from svc.limits.overrides import Overrides
from svc.limits.ratelimit import TokenBucket
from svc.model import PushStream
from svc.storage.store import Store


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

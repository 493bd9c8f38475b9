"""``GET /patterns``: log templates of the matching streams, counted per step.

Patterns are mined when asked for, not at ingest (the push path stays untouched): one
DuckDB query reads the newest ``pattern_ingester.query_line_limit`` lines of the streams
in ``[start, end)``; each stream gets its own Drain miner (as the reference keeps one per
stream), fed oldest line first. Identical patterns of different streams are then merged,
patterns matching fewer than ``min_cluster_size`` lines are left out, and the counts are
summed into ``step`` buckets. Counts therefore cover at most the newest
``query_line_limit`` lines of the window.

Sample times are aligned the reference's way: a line's time is truncated to the sample
interval, then to the step (``t - t % step`` from the Unix epoch); the effective step is
at least the sample interval; buckets between the first and the last one are zero-filled.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from logql_to_sql import Direction, ast, compile_log_query
from svc.config import PatternIngesterConfig
from svc.query.drain import DrainConfig, DrainMiner
from svc.query.engine import QueryEngine

__all__ = ["PatternSeries", "PatternsRequest", "query_patterns"]

_SECOND = 1_000_000_000


@dataclass(frozen=True)
class PatternsRequest:
    """A validated patterns query over ``[start_ns, end_ns)``."""

    matchers: tuple[ast.Matcher, ...]
    start_ns: int
    end_ns: int
    step_ns: int


@dataclass(frozen=True)
class PatternSeries:
    """One pattern and its ``(unix seconds, count)`` samples, oldest first."""

    pattern: str
    samples: list[tuple[int, int]]

    @property
    def total(self) -> int:
        """Lines the pattern matched."""
        return sum(count for _, count in self.samples)


def query_patterns(
    engine: QueryEngine,
    tenants: tuple[str, ...],
    request: PatternsRequest,
    config: PatternIngesterConfig,
) -> list[PatternSeries]:
    """Patterns of the request's streams, most frequent first (ties by pattern text)."""
    interval = max(round(config.pattern_sample_interval * _SECOND), 1)
    drain = DrainConfig(
        max_clusters=config.max_clusters, max_line_length=config.max_allowed_line_length
    )
    miners: dict[tuple[str, int], DrainMiner] = {}
    for tenant in tenants:
        for stream_id, ts, line in _newest_lines(engine, tenant, request, config.query_line_limit):
            miner = miners.get((tenant, stream_id))
            if miner is None:
                miner = miners[(tenant, stream_id)] = DrainMiner(drain)
            miner.train(line, ts - ts % interval)
    merged: dict[str, Counter[int]] = {}
    for miner in miners.values():
        for cluster in miner.clusters():
            pattern = cluster.pattern
            if pattern:
                merged.setdefault(pattern, Counter()).update(cluster.counts)
    step = max(request.step_ns, interval)
    series = [
        PatternSeries(pattern, _samples(counts, step))
        for pattern, counts in merged.items()
        if counts.total() >= config.min_cluster_size
    ]
    return sorted(series, key=lambda s: (-s.total, s.pattern))


def _newest_lines(
    engine: QueryEngine, tenant: str, request: PatternsRequest, limit: int
) -> list[tuple[int, int, str]]:
    """``(stream_id, ts, line)`` of the newest ``limit`` lines, oldest first."""
    query = ast.LogQuery(selector=ast.StreamSelector(matchers=request.matchers), stages=())
    plan = compile_log_query(
        query,
        start_ns=request.start_ns,
        end_ns=request.end_ns,
        limit=limit,
        direction=Direction.BACKWARD,
    )
    rows, _, _ = engine.run_log_query(tenant, plan, request.start_ns, request.end_ns)
    data = rows.select(["stream_id", "ts", "line"]).to_pydict()
    found = list(zip(data["stream_id"], data["ts"], data["line"], strict=True))
    found.reverse()
    return found


def _samples(counts: Counter[int], step: int) -> list[tuple[int, int]]:
    """Counts per ``step`` bucket from the first to the last non-empty one, in seconds."""
    buckets: Counter[int] = Counter()
    for ts, count in counts.items():
        buckets[ts - ts % step] += count
    first, last = min(buckets), max(buckets)
    return [(ts // _SECOND, buckets.get(ts, 0)) for ts in range(first, last + step, step)]

"""``GET /patterns``: log templates of the matching streams, counted per step.

The reference mines every pushed line at ingest, one Drain miner per stream and level,
keeps what it found for ``retain_for``, and answers a query from those miners. Here the
same miners run when asked, over the lines of the query's range: the push path stays
untouched, and the answer is what the reference's miners would hold had they seen just
those lines.

- Nothing older than ``retain_for`` is mined (the reference has dropped it), and a
  query ending before that answers nothing.
- One DuckDB query per tenant reads the window's lines, the newest
  ``query_line_limit`` of them at most (a bound on the cost of one query; the reference
  has none as it mines as lines arrive).
- Every line of a matching stream is mined (the reference samples none), except in the
  streams the reference writes itself (``__aggregated_metric__``, ``__pattern__``).
- Each stream is read in the format its first line shows (``svc.query.pattern_tokens``)
  and its lines go, oldest first, to the miner of their level (``svc.levels``; levels
  outside the known ones share the ``unknown`` miner).
- Samples, merging and pruning follow ``svc.query.pattern_series``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from logql_to_sql import Direction, ast, compile_log_query
from svc.config import LimitsConfig, PatternIngesterConfig
from svc.levels import LevelDetector, known_level
from svc.model import Labels
from svc.query.drain import Drain, DrainConfig
from svc.query.engine import QueryEngine
from svc.query.log_queries import stream_labels_lookup
from svc.query.pattern_series import (
    PatternSeries,
    SampleWindow,
    cluster_samples,
    merge_tenants,
    prune,
)
from svc.query.pattern_tokens import detect_formats, tokenizer_for

__all__ = ["Entry", "MiningSettings", "PatternsRequest", "mine_stream", "query_patterns"]

_NS_PER_MS = 1_000_000
_NS_PER_S = 1_000_000_000
# The finest step the reference answers, whatever the sample interval.
_MIN_STEP_MS = 10_000
# Streams the reference's own aggregations write: never mined.
_INTERNAL_LABELS = frozenset({"__aggregated_metric__", "__pattern__"})


@dataclass(frozen=True)
class PatternsRequest:
    """A validated patterns query over ``[start_ns, end_ns)``."""

    matchers: tuple[ast.Matcher, ...]
    start_ns: int
    end_ns: int
    step_ns: int


def query_patterns(
    engine: QueryEngine,
    tenants: tuple[str, ...],
    request: PatternsRequest,
    config: PatternIngesterConfig,
    limits: LimitsConfig,
    now_ns: int,
) -> list[PatternSeries]:
    """Patterns of the request's streams: each with its level and ``(s, count)`` samples."""
    earliest = now_ns - round(config.retain_for * _NS_PER_S)
    if request.end_ns <= earliest:
        return []
    window = _sample_window(request, config)
    first_ns = max(request.start_ns, earliest)
    # A sample at ``window.end`` can still be read, so its lines are mined too.
    last_ns = (window.end - window.end % window.interval + window.interval) * _NS_PER_MS
    settings = MiningSettings.from_config(config, limits)
    answers: list[list[PatternSeries]] = []
    for tenant in tenants:
        rows, labels_of = _window_rows(
            engine, tenant, request, first_ns, last_ns, config.query_line_limit
        )
        counts = _mine(labels_of, rows, settings, window)
        answers.append(
            prune(
                [
                    PatternSeries(pattern, level, sorted(samples.items()))
                    for (pattern, level), samples in counts.items()
                ]
            )
        )
    merged = merge_tenants(answers)
    for found in merged:
        found.samples = [(t // 1000, count) for t, count in found.samples]
    return merged


def _sample_window(request: PatternsRequest, config: PatternIngesterConfig) -> SampleWindow:
    """The query's bounds in ms as the reference rounds them, and its sampling."""
    start_ms = request.start_ns // _NS_PER_MS
    end_ms = -(-request.end_ns // _NS_PER_MS)
    return SampleWindow(
        interval=max(round(config.pattern_sample_interval * 1000), 1),
        max_chunk_age=round(config.max_chunk_age * 1000),
        start=start_ms,
        end=end_ms,
        step=max(request.step_ns // _NS_PER_MS, _MIN_STEP_MS),
    )


@dataclass(frozen=True)
class MiningSettings:
    """How one tenant's streams are mined."""

    drain: DrainConfig
    max_line_length: int
    json_fields: tuple[str, ...]
    levels: LevelDetector

    @classmethod
    def from_config(cls, config: PatternIngesterConfig, limits: LimitsConfig) -> MiningSettings:
        """The settings of a service configuration."""
        return cls(
            drain=DrainConfig(
                max_clusters=config.max_clusters, max_eviction_ratio=config.max_eviction_ratio
            ),
            max_line_length=config.max_allowed_line_length,
            json_fields=_json_fields(limits),
            levels=LevelDetector(
                limits.log_level_fields,
                limits.log_level_from_json_max_depth,
                enabled=limits.discover_log_levels and limits.allow_structured_metadata,
            ),
        )


Entry = tuple[int, str, Sequence[tuple[str, str]]]
"""One line to mine: its time (ns), text and structured metadata."""


def mine_stream(
    labels: Sequence[tuple[str, str]], entries: list[Entry], fmt: str, settings: MiningSettings
) -> list[tuple[str, str, list[int]]]:
    """One stream's patterns: text, level and the times of their lines.

    ``entries`` come oldest first; ``fmt`` is the format of the stream's first line
    (``detect_formats``). Templates that leave no pattern text are left out.
    """
    levels = settings.levels
    labels_level = levels.from_labels(labels)
    tokenizer = tokenizer_for(fmt, settings.max_line_length, settings.json_fields)
    miners: dict[str, Drain] = {}
    for ts, line, metadata in entries:
        level = known_level(levels.detect(metadata, line, labels_level))
        miner = miners.get(level)
        if miner is None:
            miner = miners[level] = Drain(tokenizer, settings.drain)
        miner.train(line, ts)
    found = []
    for level, miner in miners.items():
        for cluster in miner.clusters():
            pattern = miner.pattern(cluster)
            if pattern:
                found.append((pattern, level, cluster.times))
    return found


def _mine(
    labels_of: Callable[[int], Labels],
    rows: list[tuple[int, Entry]],
    settings: MiningSettings,
    window: SampleWindow,
) -> dict[tuple[str, str], Counter[int]]:
    """Sample counts by pattern and level of one tenant's rows (oldest first)."""
    by_stream: dict[int, list[Entry]] = {}
    for stream_id, entry in rows:
        by_stream.setdefault(stream_id, []).append(entry)
    formats = detect_formats([entries[0][1] for entries in by_stream.values()])
    counts: dict[tuple[str, str], Counter[int]] = {}
    for (stream_id, entries), fmt in zip(by_stream.items(), formats, strict=True):
        labels = labels_of(stream_id)
        if any(name in _INTERNAL_LABELS for name, _ in labels):
            continue
        for pattern, level, times in mine_stream(labels, entries, fmt, settings):
            samples = cluster_samples(times, window)
            if samples:
                found = counts.setdefault((pattern, level), Counter())
                for sample_time, count in samples:
                    found[sample_time] += count
    return counts


def _json_fields(limits: LimitsConfig) -> tuple[str, ...]:
    """Members whose text JSON lines are mined by: defaults, plus appended, less deleted.

    The reference tries them in no fixed order; here the listed order decides which of
    two present members is used.
    """
    fields = limits.pattern_ingester_tokenizable_json_fields_default.split(",")
    fields += limits.pattern_ingester_tokenizable_json_fields_append.split(",")
    deleted = set(limits.pattern_ingester_tokenizable_json_fields_delete.split(","))
    return tuple(dict.fromkeys(name for name in fields if name and name not in deleted))


def _window_rows(
    engine: QueryEngine,
    tenant: str,
    request: PatternsRequest,
    first_ns: int,
    last_ns: int,
    limit: int,
) -> tuple[list[tuple[int, Entry]], Callable[[int], Labels]]:
    """``(stream_id, entry)`` of the newest ``limit`` lines of the matching streams in
    ``[first_ns, last_ns)``, oldest first, and the labels of their streams."""
    query = ast.LogQuery(selector=ast.StreamSelector(matchers=request.matchers), stages=())
    plan = compile_log_query(
        query, start_ns=first_ns, end_ns=last_ns, limit=limit, direction=Direction.BACKWARD
    )
    table, view, _ = engine.run_log_query(tenant, plan, first_ns, last_ns)
    data: dict[str, list[Any]] = table.select(["stream_id", "ts", "line", "metadata"]).to_pydict()
    metadata = [pairs or () for pairs in data["metadata"]]
    entries = zip(data["ts"], data["line"], metadata, strict=True)
    rows = list(zip(data["stream_id"], entries, strict=True))
    rows.reverse()
    return rows, stream_labels_lookup(engine, tenant, view)

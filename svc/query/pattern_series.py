"""Counts of mined patterns over time, shaped and pruned as the reference answers them.

A cluster counts its lines per sample interval (a line's time truncated to it, in ms),
in chunks: a chunk holds the samples of at most ``max_chunk_age`` after its first one.
A query reads each chunk's samples with a time in ``[from, through)`` (and one at
``through`` when it is the chunk's last, as the reference's range search lets through);
unless the step equals the sample interval, they are summed into ``step`` buckets
(times truncated to the step), zero buckets filling the gaps inside the chunk only.

Series of the same pattern and level (other clusters, other streams) add up. A tenant's
answer keeps the series of at least ``MIN_TOTAL`` lines, most lines first, at most
``MAX_PATTERNS`` of them. Several tenants' answers merge by pattern alone: the first
tenant's level stays, the samples are all kept, in time order.

>>> window = SampleWindow(10_000, max_chunk_age=3_600_000, start=0, end=60_000, step=20_000)
>>> cluster_samples([0, 3_000_000_000, 25_000_000_000], window)
[(0, 2), (20000, 1)]
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, field

__all__ = [
    "MAX_PATTERNS",
    "MIN_TOTAL",
    "PatternSeries",
    "SampleWindow",
    "cluster_samples",
    "merge_tenants",
    "prune",
]

MIN_TOTAL = 30
MAX_PATTERNS = 300
_NS_PER_MS = 1_000_000


@dataclass(frozen=True)
class SampleWindow:
    """How samples are taken and read: all in milliseconds."""

    interval: int
    """Sample interval."""
    max_chunk_age: int
    """Span of one chunk of samples."""
    start: int
    """First sample time read."""
    end: int
    """Sample times from here on are not read (but see the module's note)."""
    step: int
    """Bucket width of the answer (at least 10 s)."""


@dataclass
class PatternSeries:
    """One pattern of one level and its ``(ms, count)`` samples, oldest first."""

    pattern: str
    level: str
    samples: list[tuple[int, int]] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Lines the pattern matched."""
        return sum(count for _, count in self.samples)


def cluster_samples(times_ns: list[int], window: SampleWindow) -> list[tuple[int, int]]:
    """A cluster's samples as the query reads them, from its lines' times (ascending)."""
    out: list[tuple[int, int]] = []
    for chunk in _chunks(times_ns, window):
        out += _read_chunk(chunk, window)
    return out


def _chunks(times_ns: list[int], window: SampleWindow) -> list[list[tuple[int, int]]]:
    """Samples in chunks, as the reference records a cluster's lines."""
    interval, age = window.interval, window.max_chunk_age
    counts = Counter(ms - ms % interval for ms in (ts // _NS_PER_MS for ts in times_ns))
    chunks: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    for sample_time in sorted(counts):
        if current and sample_time - current[0][0] >= age:
            chunks.append(current)
            current = []
        current.append((sample_time, counts[sample_time]))
    if current:
        chunks.append(current)
    return chunks


def _read_chunk(chunk: list[tuple[int, int]], window: SampleWindow) -> list[tuple[int, int]]:
    """The chunk's samples within the window, in step buckets."""
    start, end, step = window.start, window.end, window.step
    first, last = chunk[0][0], chunk[-1][0]
    if start >= end or first >= end or last < start:
        return []
    times = [t for t, _ in chunk]
    low = bisect_left(times, start) if start > first else 0
    high = bisect_left(times, end) if end < last else len(chunk)
    if low >= high:
        return []
    if step == window.interval:
        return chunk[low:high]
    current = chunk[low][0] - chunk[low][0] % step
    buckets = [[current, 0]]
    for sample_time, count in chunk[low:high]:
        if sample_time >= current + step:
            bucket = sample_time - sample_time % step
            buckets += [[t, 0] for t in range(current + step, bucket + 1, step)]
            current = bucket
        buckets[-1][1] += count
    return [(t, c) for t, c in buckets]


def prune(series: list[PatternSeries]) -> list[PatternSeries]:
    """A tenant's answer: series of at least ``MIN_TOTAL`` lines, most first, capped."""
    kept = [s for s in series if s.total >= MIN_TOTAL]
    kept.sort(key=lambda s: (-s.total, s.pattern, s.level))
    return kept[:MAX_PATTERNS]


def merge_tenants(answers: list[list[PatternSeries]]) -> list[PatternSeries]:
    """Several tenants' answers as one: by pattern, first level kept, samples all kept."""
    if len(answers) == 1:
        return answers[0]
    merged: dict[str, PatternSeries] = {}
    for answer in answers:
        for series in answer:
            known = merged.get(series.pattern)
            if known is None:
                merged[series.pattern] = PatternSeries(
                    series.pattern, series.level, list(series.samples)
                )
            else:
                known.samples += series.samples
    for series in merged.values():
        series.samples.sort(key=lambda sample: sample[0])
    return sorted(merged.values(), key=lambda s: (-s.total, s.pattern))

"""Sub-results put back together: metric runs side by side, log windows in query order."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from logql_to_sql import Grid
from svc.query.engine import ScanStats
from svc.query.metric_queries import MetricResult, Series, order_series
from svc.query.streams import ResultStream

__all__ = ["merge_metric_runs", "merge_stats", "merge_streams"]

Labels = tuple[tuple[str, str], ...]


def merge_stats(parts: Sequence[ScanStats]) -> ScanStats:
    """What all sub-queries scanned, added up (warnings once each)."""
    total = ScanStats()
    for part in parts:
        for f in dataclasses.fields(ScanStats):
            value = getattr(part, f.name)
            if isinstance(value, bool):
                setattr(total, f.name, getattr(total, f.name) or value)
            elif isinstance(value, int | float):
                setattr(total, f.name, getattr(total, f.name) + value)
        for name, count in part.extra.items():
            total.extra[name] = total.extra.get(name, 0) + count
        total.warnings += [w for w in part.warnings if w not in total.warnings]
    return total


def merge_metric_runs(
    grid: Grid, runs: Sequence[Grid], parts: Sequence[MetricResult]
) -> MetricResult:
    """The result on ``grid`` from the results of its consecutive ``runs``, in order
    (points past the grid, padding of the last run, are dropped)."""
    by_labels: dict[Labels, Series] = {}
    for run, part in zip(runs, parts, strict=True):
        offset = (run.start_ns - grid.start_ns) // grid.step_ns
        for series in part.series:
            points = [(k + offset, v) for k, v in series.points if k + offset < grid.steps]
            if not points:
                continue
            found = by_labels.get(series.labels)
            if found is None:
                by_labels[series.labels] = Series(series.labels, points)
            else:
                found.points += points
    first = parts[0]
    ordered = order_series(list(by_labels.values()), first.order)
    return MetricResult(grid, ordered, first.scalar, first.order)


def merge_streams(
    parts: Sequence[list[ResultStream]], limit: int, *, backward: bool
) -> tuple[list[ResultStream], int]:
    """Streams of consecutive time windows (in query order) up to ``limit`` entries:
    ``(streams, entries)``. Windows are disjoint, so each stream's entries stay ordered;
    the last window contributes only its first entries in query order."""
    groups: dict[Labels, ResultStream] = {}
    taken = 0
    for streams in parts:
        left = limit - taken
        if left <= 0:
            break
        chosen = _first_entries(streams, left, backward=backward)
        for stream, picks in chosen:
            found = groups.get(stream.labels)
            if found is None:
                categories: list[dict[str, dict[str, str]]] | None = (
                    [] if stream.categories is not None else None
                )
                found = groups[stream.labels] = ResultStream(stream.labels, categories=categories)
            found.values += [stream.values[i] for i in picks]
            if stream.categories is not None and found.categories is not None:
                found.categories += [stream.categories[i] for i in picks]
            taken += len(picks)
    return sorted(groups.values(), key=lambda s: s.key.encode()), taken


def _first_entries(
    streams: list[ResultStream], count: int, *, backward: bool
) -> list[tuple[ResultStream, list[int]]]:
    """Indices of each stream's entries among the ``count`` first of all in query order."""
    total = sum(len(stream.values) for stream in streams)
    if total <= count:
        return [(stream, list(range(len(stream.values)))) for stream in streams]
    order = sorted(
        (
            (ts, position, index)
            for position, stream in enumerate(streams)
            for index, (ts, _) in enumerate(stream.values)
        ),
        key=lambda item: -item[0] if backward else item[0],
    )[:count]
    picks: dict[int, list[int]] = {}
    for _, position, index in order:
        picks.setdefault(position, []).append(index)
    return [(streams[p], sorted(indices)) for p, indices in sorted(picks.items())]

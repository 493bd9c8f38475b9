"""A backfill's buffered rows as sorted runs, and a day's rows put in a file's order
(stream, then time, ties in input order: a stable sort's) with as few copies as they allow.

Each chunk of rows added to the buffer is sorted by stream then time (a copy of that
chunk only, none when it is in order already): per stream, a run. A day's file is then
made of slices of the runs, no copy, when each stream's runs follow one another in time
(most inputs: a stream's lines are written in time order). Runs that overlap in time are
merged: the rows of a run that stay in order for at least ``MIN_SLICE`` rows are sliced,
the rest gathered (a copy of those rows only, two while it is made: where chunks of an
input that is nearly in time order meet). When more than a quarter of the rows would be
gathered, the day's rows are combined into one table instead, for the flush's writer to
sort: the buffer once more, at most, either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["MIN_SLICE", "Arranged", "Part", "Run", "arrange", "in_order"]

MIN_SLICE = 256
"""Fewer rows in order than this are gathered rather than sliced (a slice of a few rows
costs the Parquet writer more than copying them)."""


class Run(NamedTuple):
    """A stream's rows in a part: ``start`` to ``end``, in time order."""

    stream_id: int
    start: int
    end: int
    first_ts: int
    last_ts: int


@dataclass
class Part:
    """One chunk's rows of one day, sorted by stream then time, and its runs."""

    rows: pa.Table
    runs: list[Run]


class Arranged(NamedTuple):
    """A day's rows for its file: in the file's order (``presorted``) or not, and the
    bytes of the copies made to get them so."""

    rows: pa.Table
    presorted: bool
    copied_bytes: int


def arrange(rows: pa.Table) -> Part:
    """Rows (``HEAD_SCHEMA``) as a part: sorted (stable) unless they are already."""
    stream = rows.column("stream_id").to_numpy()
    ts = rows.column("ts").to_numpy()
    same = stream[1:] == stream[:-1]
    ordered = bool(np.all((stream[1:] > stream[:-1]) | (same & (ts[1:] >= ts[:-1]))))
    if not ordered:
        order = pc.sort_indices(rows, sort_keys=[("stream_id", "ascending"), ("ts", "ascending")])
        rows = rows.take(order)
        picked = order.to_numpy()
        stream, ts = stream[picked], ts[picked]
    bounds = np.flatnonzero(stream[1:] != stream[:-1]) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(stream)]))
    columns = (stream[starts], starts, ends, ts[starts], ts[ends - 1])
    return Part(rows, [Run(*run) for run in zip(*(c.tolist() for c in columns), strict=True)])


def in_order(parts: list[Part]) -> Arranged:
    """A day's parts as the rows of its file (module docstring)."""
    by_stream: dict[int, list[pa.Table]] = {}
    chained: dict[int, bool] = {}
    last: dict[int, int] = {}
    for part in parts:
        for run in part.runs:
            previous = last.get(run.stream_id)
            chained[run.stream_id] = chained.get(run.stream_id, True) and (
                previous is None or run.first_ts >= previous
            )
            last[run.stream_id] = run.last_ts
            by_stream.setdefault(run.stream_id, []).append(
                part.rows.slice(run.start, run.end - run.start)
            )
    total = sum(part.rows.num_rows for part in parts)
    allowance = total // 4
    pieces: list[pa.Table] = []
    copied = 0
    for stream_id in sorted(by_stream):
        runs = by_stream[stream_id]
        if chained[stream_id]:
            pieces += runs
            continue
        merged = _merge(runs, allowance)
        if merged is None:
            pieces.clear()  # the copies go before the whole day is combined
            combined = pa.concat_tables([part.rows for part in parts]).combine_chunks()
            return Arranged(combined, False, combined.get_total_buffer_size())
        merged_pieces, gathered, gathered_bytes = merged
        allowance -= gathered
        copied += gathered_bytes
        pieces += merged_pieces
    return Arranged(pa.concat_tables(pieces), True, copied)


def _merge(runs: list[pa.Table], allowance: int) -> tuple[list[pa.Table], int, int] | None:
    """A stream's runs merged by time (stable): pieces sliced from the runs or from the
    rows gathered, and the rows and bytes gathered; None when that would be more rows
    than ``allowance``."""
    offsets = np.cumsum([0] + [run.num_rows for run in runs])
    ts = np.concatenate([run.column("ts").to_numpy() for run in runs])
    order = np.argsort(ts, kind="stable")
    # Segments: rows that follow one another in one run.
    breaks = np.ones(len(order), dtype=bool)
    breaks[1:] = (np.diff(order) != 1) | np.isin(order[1:], offsets[1:-1])
    starts = np.flatnonzero(breaks)
    lengths = np.diff(np.append(starts, len(order)))
    sliced = np.flatnonzero(lengths >= MIN_SLICE)
    keep = np.zeros(len(order) + 1, dtype=np.int64)
    np.add.at(keep, starts[sliced], 1)
    np.add.at(keep, starts[sliced] + lengths[sliced], -1)
    gather_positions = np.flatnonzero(np.cumsum(keep[:-1]) == 0)
    if len(gather_positions) > allowance:
        return None
    gathered = _gather(runs, offsets, order[gather_positions])
    pieces: list[pa.Table] = []
    done = 0  # rows of the merged order emitted
    taken = 0  # of them, gathered
    for index in sliced.tolist():
        start, length = int(starts[index]), int(lengths[index])
        if start > done:
            pieces.append(gathered.slice(taken, start - done))
            taken += start - done
        first = int(order[start])
        run = int(np.searchsorted(offsets, first, side="right")) - 1
        pieces.append(runs[run].slice(first - int(offsets[run]), length))
        done = start + length
    if done < len(order):
        pieces.append(gathered.slice(taken))
    return pieces, len(gather_positions), gathered.get_total_buffer_size()


def _gather(runs: list[pa.Table], offsets: np.ndarray, rows: np.ndarray) -> pa.Table:
    """The rows (indices into the runs one after the other) copied in the order given:
    taken from each run apart (a take from many chunks at once would combine them all
    first), then put in order."""
    ascending = np.sort(rows)  # by run, and in each run by position
    bounds = np.searchsorted(ascending, offsets)
    parts = [
        run.take(ascending[bounds[i] : bounds[i + 1]] - offsets[i])
        for i, run in enumerate(runs)
        if bounds[i + 1] > bounds[i]
    ]
    if not parts:
        return runs[0].slice(0, 0)
    combined = pa.concat_tables(parts).combine_chunks()
    del parts  # two copies of the rows at most
    return combined.take(np.searchsorted(ascending, rows))

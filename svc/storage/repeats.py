"""Whether a lake file may hold one entry twice.

An entry pushed twice (a client retrying a push) is stored twice, and log queries drop
the copies with a DISTINCT over every entry they read, as the reference drops identical
entries at query time. That DISTINCT is most of the cost of an unlimited log query, yet
copies are rare: each writer of a file (flush, backfill, compactor) records in the file's
``svc.file`` metadata (``FileMetadata.unique``) that no two of its entries share stream,
timestamp and line, and a query whose files say so and cannot hold one entry in two files
(:mod:`svc.query.unique_entries`) skips the DISTINCT. The writers only look; they keep
every entry as pushed, so no answer changes.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["RepeatWatch", "repeated_entries"]

_KEYS = ["stream_id", "ts", "line"]


def repeated_entries(rows: pa.Table, order: pa.Array | None = None) -> bool:
    """Whether two of ``rows`` have the same stream, timestamp and line, where ``rows``
    (taken in ``order``, when given) have the entries of one stream with one timestamp
    next to each other (sorted by stream then time, or by time then stream). Only the
    rows sharing both with a neighbour are compared by line (no copy of the lines)."""
    count = rows.num_rows
    if count < 2:
        return False
    ids, times = rows["stream_id"], rows["ts"]
    if order is not None:
        ids, times = ids.take(order), times.take(order)
    tie = pc.and_(
        pc.equal(ids.slice(1), ids.slice(0, count - 1)),
        pc.equal(times.slice(1), times.slice(0, count - 1)),
    )
    if not pc.any(tie).as_py():
        return False
    after = pa.concat_arrays([pa.array([False]), *_chunks(tie)])
    before = pa.concat_arrays([*_chunks(tie), pa.array([False])])
    tied = pc.or_(after, before)
    keys = rows.select(_KEYS)
    keys = keys.filter(tied) if order is None else keys.take(pc.filter(order, tied))
    counts = keys.group_by(_KEYS).aggregate([([], "count_all")])
    return bool(pc.max(counts["count_all"]).as_py() > 1)


def _chunks(values: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(values.chunks) if isinstance(values, pa.ChunkedArray) else [values]


class RepeatWatch:
    """:func:`repeated_entries` over rows that arrive in ordered batches: the entries of
    one stream with one timestamp may straddle two batches."""

    def __init__(self) -> None:
        self.repeated = False
        self._tail: pa.Table | None = None

    def add(self, rows: pa.Table) -> None:
        """Look at the next batch."""
        if self.repeated or not rows.num_rows:
            return
        rows = rows.select(_KEYS)
        checked = rows if self._tail is None else pa.concat_tables([self._tail, rows])
        self.repeated = repeated_entries(checked)
        last = rows.num_rows - 1
        # The batch's last stream and time: with the tail when the batch continues them.
        self._tail = checked.filter(
            pc.and_(
                pc.equal(checked["stream_id"], rows["stream_id"][last]),
                pc.equal(checked["ts"], rows["ts"][last]),
            )
        )

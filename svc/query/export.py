"""Export: every entry a log query matches, with no entry limit, a time slice at a time.

The range is cut into slices: per UTC day that holds data, the time span its files and
in-memory rows cover, in parts of about ``SLICE_ROWS`` rows. Each is one ordinary log
query without a limit over the listed files and the head, so memory stays bounded by a
slice and a caller that stops asking stops the work. Rows come out oldest first with
the labels ``query_range`` reports for them (stream labels, structured metadata and the
labels the pipeline parsed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from logql_to_sql import Direction, ast, compile_log_query
from svc.model import Labels
from svc.query.engine import QueryEngine
from svc.query.log_queries import stream_labels_lookup, with_json_labels
from svc.query.streams import merge_metadata

__all__ = ["SLICE_ROWS", "ExportSlice", "export_slice", "export_slices", "without_repeats"]

SLICE_ROWS = 250_000
_DAY_NS = 86_400 * 1_000_000_000
_LABELS = pa.map_(pa.string(), pa.string())


@dataclass(frozen=True)
class ExportSlice:
    """A part ``[start_ns, end_ns)`` of an export's range."""

    start_ns: int
    end_ns: int


def export_slices(
    engine: QueryEngine, tenant: str, start_ns: int, end_ns: int
) -> list[ExportSlice]:
    """The slices of ``[start_ns, end_ns)`` that hold any of the tenant's data: per UTC
    day, the span its data covers, cut into parts of about ``SLICE_ROWS`` rows."""
    view = engine.store.view(tenant, start_ns, end_ns)
    days: dict[int, _Day] = {}
    for f in view.files:
        low, high = max(f.min_ts, start_ns), min(f.max_ts + 1, end_ns)
        for day in range(low // _DAY_NS, (high - 1) // _DAY_NS + 1):
            _add(days, day, low, high, f.rows)
    for table in view.head_tables:
        inside = table.filter(
            pc.and_(pc.greater_equal(table["ts"], start_ns), pc.less(table["ts"], end_ns))
        )
        day_of = pc.divide(inside["ts"], pa.scalar(_DAY_NS, pa.int64()))
        spans = (
            pa.table({"day": day_of, "ts": inside["ts"]})
            .group_by("day")
            .aggregate([("ts", "min"), ("ts", "max"), ("ts", "count")])
        )
        for day, low, high, count in zip(
            *(spans[c].to_pylist() for c in ("day", "ts_min", "ts_max", "ts_count")), strict=True
        ):
            _add(days, day, low, high + 1, count)
    slices: list[ExportSlice] = []
    for day in sorted(days):
        span = days[day]
        parts = max(1, -(-span.rows // SLICE_ROWS))
        width = max(1, -(-(span.high - span.low) // parts))
        cuts = range(span.low, span.high, width)
        slices += [ExportSlice(cut, min(cut + width, span.high)) for cut in cuts]
    return slices


@dataclass
class _Day:
    low: int
    high: int
    rows: int


def _add(days: dict[int, _Day], day: int, low: int, high: int, rows: int) -> None:
    """Widen a day's span (clipped to the day) and count its rows (a file spanning
    several days counts in each: an estimate, it only sizes the slices)."""
    low, high = max(low, day * _DAY_NS), min(high, (day + 1) * _DAY_NS)
    found = days.get(day)
    if found is None:
        days[day] = _Day(low, high, rows)
        return
    found.low, found.high = min(found.low, low), max(found.high, high)
    found.rows += rows


def export_slice(
    engine: QueryEngine, tenant: str, query: ast.LogQuery, part: ExportSlice
) -> pa.Table:
    """The entries of one slice, oldest first: ``ts`` (ns), ``labels`` (map), ``line``."""
    plan = compile_log_query(
        query,
        start_ns=part.start_ns,
        end_ns=part.end_ns,
        limit=None,
        direction=Direction.FORWARD,
        leave_json_labels=True,
        adjacent_duplicates=True,
    )
    rows, _, _ = engine.run_log_query(tenant, plan, part.start_ns, part.end_ns, expr=query)
    if plan.duplicates_left:
        rows = without_repeats(rows)
    labels_of = stream_labels_lookup(engine, tenant)
    if plan.json_labels_left:
        rows = with_json_labels(rows, labels_of)
    if "labels" in rows.column_names:
        labels = rows["labels"].combine_chunks()
    else:
        labels = _stream_labels(rows, labels_of)
    table = pa.table({"ts": rows["ts"], "labels": labels, "line": rows["line"]})
    ts = table["ts"]
    if (
        table.num_rows > 1
        and not pc.all(pc.less_equal(ts.slice(0, table.num_rows - 1), ts.slice(1))).as_py()
    ):  # the compiled query orders by time; sort only if a plan did not
        table = table.sort_by([("ts", "ascending")])
    return table


def without_repeats(rows: pa.Table) -> pa.Table:
    """``rows`` (ordered so that equal entries are neighbours) without an entry equal to
    the one before it in time, stream, line and structured metadata: an entry pushed twice
    is exported once, as ``query_range`` returns it once."""
    n = rows.num_rows
    if n < 2:
        return rows
    after, before = slice(1, n), slice(0, n - 1)

    def same(name: str) -> pa.ChunkedArray:
        column = rows[name]
        return pc.equal(column[after], column[before])

    repeats = pc.and_(pc.and_(same("ts"), same("stream_id")), same("line"))
    if not pc.any(repeats).as_py():
        return rows
    metadata = rows["metadata"]
    drop = [False] * n
    for index in pc.indices_nonzero(repeats).to_pylist():  # rare: pushed twice
        drop[index + 1] = metadata[index + 1].as_py() == metadata[index].as_py()
    return rows.filter(pc.invert(pa.array(drop)))


def _stream_labels(rows: pa.Table, labels_of: Callable[[int], Labels]) -> pa.Array:
    """Stream labels merged with each entry's structured metadata (as ``query_range``)."""
    ids = rows["stream_id"].combine_chunks()
    unique = pc.unique(ids)
    per_stream = pa.array([list(labels_of(s)) for s in unique.to_pylist()], _LABELS)
    labels = per_stream.take(pc.index_in(ids, value_set=unique))
    metadata = rows["metadata"].combine_chunks()
    if metadata.null_count == len(metadata):
        return labels
    # Entries with structured metadata: their own label sets (rare next to plain ones).
    merged = [
        list(merge_metadata(tuple(stream or ()), meta)) if meta else stream
        for stream, meta in zip(labels.to_pylist(), metadata.to_pylist(), strict=True)
    ]
    return pa.array(merged, _LABELS)

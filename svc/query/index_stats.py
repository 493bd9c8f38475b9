"""How much data matching streams hold in a time range: index stats and the volume source.

Answered from the catalog and the head, never by reading log lines:

* a file's per-stream summary (``file_streams``: rows, line bytes, time span) counts whole
  when the stream's span in that file lies inside the range (and inside one bucket);
* otherwise only the file's ``ts`` and ``stream_id`` columns are read for that stream:
  entries are exact, bytes are the summary's bytes prorated by entries;
* files flushed before summaries existed are read the same way, their bytes prorated
  from the file's totals;
* the head is in memory: entries and line bytes are exact.

A chunk, as in the reference, is one stream's data in one place: a stream's rows in one
file, or its rows in the head.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from logql_to_sql import ast
from svc.query.deleted_streams import correct_usage
from svc.query.engine import QueryEngine
from svc.query.series import matching_streams
from svc.storage.catalog import FileEntry, FileStreamRow
from svc.storage.lake_urls import resolve
from svc.storage.store import Store, StoreView
from svc.storage.streams import StreamInfo

__all__ = ["IndexStats", "Usage", "UsageReport", "index_stats", "stream_usage"]


@dataclass
class Usage:
    """Entries and line bytes of one stream in one bucket."""

    entries: int = 0
    bytes: int = 0


@dataclass
class UsageReport:
    """Usage per (stream id, bucket) and the number of chunks it came from."""

    usage: dict[tuple[int, int], Usage] = field(default_factory=lambda: defaultdict(Usage))
    chunks: int = 0

    def add(self, stream_id: int, bucket: int, entries: int, line_bytes: int) -> None:
        """Count entries and bytes of a stream in a bucket."""
        found = self.usage[(stream_id, bucket)]
        found.entries += entries
        found.bytes += line_bytes


@dataclass(frozen=True)
class IndexStats:
    """The index stats record (SPEC 2.6)."""

    streams: int
    chunks: int
    entries: int
    bytes: int


def index_stats(
    engine: QueryEngine,
    tenant: str,
    matchers: tuple[ast.Matcher, ...],
    start_ns: int,
    end_ns: int,
) -> IndexStats:
    """Streams, chunks, entries and line bytes of the matching streams in the range."""
    streams = matching_streams(engine, tenant, [matchers] if matchers else [], start_ns, end_ns)
    report = stream_usage(engine.store, tenant, streams, start_ns, end_ns)
    correct_usage(engine, tenant, report, streams, start_ns, end_ns)
    present = {stream_id for (stream_id, _), u in report.usage.items() if u.entries}
    return IndexStats(
        streams=len(present),
        chunks=report.chunks,
        entries=sum(u.entries for u in report.usage.values()),
        bytes=sum(u.bytes for u in report.usage.values()),
    )


def stream_usage(
    store: Store,
    tenant: str,
    streams: Iterable[StreamInfo],
    start_ns: int,
    end_ns: int,
    step_ns: int = 0,
) -> UsageReport:
    """Usage of ``streams`` in ``[start_ns, end_ns)``, per bucket ``ts // step_ns``
    (one bucket, 0, without a step)."""
    report = UsageReport()
    wanted = {info.stream_id for info in streams}
    if not wanted:
        return report
    view = store.view(tenant, start_ns, end_ns)
    summaries: dict[str, list[FileStreamRow]] = defaultdict(list)
    for row in store.catalog.file_streams(f.path for f in view.files):
        summaries[row.path].append(row)
    window = _Window(start_ns, end_ns, step_ns)
    for entry in view.files:
        try:
            _file_usage(report, view, entry, summaries.get(entry.path), wanted, window)
        except (OSError, pa.ArrowException) as exc:
            # A damaged file is set aside and counts for nothing, as for queries.
            if not store.quarantine_unreadable([entry], str(exc)):
                raise
    for table in view.head_tables:
        _head_usage(report, table, wanted, window)
    return report


@dataclass(frozen=True)
class _Window:
    start_ns: int
    end_ns: int
    step_ns: int

    def bucket(self, ts: int) -> int:
        return ts // self.step_ns if self.step_ns else 0

    def holds(self, first: int, last: int) -> bool:
        """Whether every ts in ``[first, last]`` is in the range and in one bucket."""
        inside = self.start_ns <= first and last < self.end_ns
        return inside and self.bucket(first) == self.bucket(last)

    def overlaps(self, first: int, last: int) -> bool:
        return first < self.end_ns and last >= self.start_ns

    def buckets(self, ts: pa.ChunkedArray) -> pa.ChunkedArray:
        if not self.step_ns:
            return pc.multiply(ts, pa.scalar(0, pa.int64()))
        return pc.divide(ts, pa.scalar(self.step_ns, pa.int64()))

    def mask(self, ts: pa.ChunkedArray) -> pa.ChunkedArray:
        return pc.and_(
            pc.greater_equal(ts, pa.scalar(self.start_ns, pa.int64())),
            pc.less(ts, pa.scalar(self.end_ns, pa.int64())),
        )


def _file_usage(
    report: UsageReport,
    view: StoreView,
    entry: FileEntry,
    rows: list[FileStreamRow] | None,
    wanted: set[int],
    window: _Window,
) -> None:
    if rows is None:
        bytes_per_row = {stream_id: entry.line_bytes / max(entry.rows, 1) for stream_id in wanted}
        _scan_file(report, view, entry, bytes_per_row, window)
        return
    partial: dict[int, float] = {}
    for row in rows:
        if row.stream_id not in wanted or not window.overlaps(row.min_ts, row.max_ts):
            continue
        if window.holds(row.min_ts, row.max_ts):
            report.add(row.stream_id, window.bucket(row.min_ts), row.rows, row.line_bytes)
            report.chunks += 1
        else:
            partial[row.stream_id] = row.line_bytes / max(row.rows, 1)
    if partial:
        _scan_file(report, view, entry, partial, window)


def _scan_file(
    report: UsageReport,
    view: StoreView,
    entry: FileEntry,
    bytes_per_row: dict[int, float],
    window: _Window,
) -> None:
    """Count a file's entries per stream and bucket from its ts and stream_id columns."""
    where, filesystem = resolve(view.lake.url(entry.path))
    table = pq.read_table(
        where,
        filesystem=filesystem,
        columns=["ts", "stream_id"],
        filters=[
            ("stream_id", "in", list(bytes_per_row)),
            ("ts", ">=", window.start_ns),
            ("ts", "<", window.end_ns),
        ],
    )
    counts = _grouped_counts(table, window)
    seen: set[int] = set()
    for stream_id, bucket, entries in counts:
        report.add(stream_id, bucket, entries, round(entries * bytes_per_row[stream_id]))
        seen.add(stream_id)
    report.chunks += len(seen)


def _grouped_counts(table: pa.Table, window: _Window) -> list[tuple[int, int, int]]:
    grouped = (
        pa.table({"stream_id": table["stream_id"], "bucket": window.buckets(table["ts"])})
        .group_by(["stream_id", "bucket"])
        .aggregate([("stream_id", "count")])
    )
    return list(
        zip(
            grouped["stream_id"].to_pylist(),
            grouped["bucket"].to_pylist(),
            grouped["stream_id_count"].to_pylist(),
            strict=True,
        )
    )


def _head_usage(report: UsageReport, table: pa.Table, wanted: set[int], window: _Window) -> None:
    keep = pc.and_(
        pc.is_in(table["stream_id"], value_set=pa.array(list(wanted), pa.int64())),
        window.mask(table["ts"]),
    )
    rows = table.filter(keep)
    if rows.num_rows == 0:
        return
    grouped = (
        pa.table(
            {
                "stream_id": rows["stream_id"],
                "bucket": window.buckets(rows["ts"]),
                "bytes": pc.binary_length(rows["line"]),
            }
        )
        .group_by(["stream_id", "bucket"])
        .aggregate([("bytes", "count"), ("bytes", "sum")])
    )
    for stream_id, bucket, entries, line_bytes in zip(
        grouped["stream_id"].to_pylist(),
        grouped["bucket"].to_pylist(),
        grouped["bytes_count"].to_pylist(),
        grouped["bytes_sum"].to_pylist(),
        strict=True,
    ):
        report.add(stream_id, bucket, entries, line_bytes or 0)
    report.chunks += len(pc.unique(rows["stream_id"]))

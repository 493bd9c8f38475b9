"""Compacted lake files: the layout that makes the lake small and keeps queries pruning.

Rows arrive sorted by time bucket, then stream (streams of one line shape next to each
other: ``rewrite``), then time. Row groups never span two buckets (unless the first is
small), so row-group statistics prune by time: a compacted day answers "the last hour"
as the small flushed files did. Files are cut at bucket boundaries once they reach the
target size, so they cover consecutive time ranges and the catalog prunes them too.

Encodings, each measured on the benchmark corpus (``benchmarks/compaction.py``,
RESULTS.md): ``line`` DELTA_LENGTH_BYTE_ARRAY (the text without interleaved lengths
compresses better and decodes faster), ``ts`` and ``stream_id`` DELTA_BINARY_PACKED,
dictionaries only for the label and metadata maps, 8 MiB pages, zstd at the compaction
level (15 by default; flushes use 1, Arrow's default).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.log_rows import LABEL_MAP, LOG_ROW_SCHEMA
from svc.storage.catalog import FileEntry, FileStreamRow
from svc.storage.lake import (
    COMPACTED_PREFIX,
    FILE_METADATA_KEY,
    FileMetadata,
    day_directory,
    encode_file_metadata,
)
from svc.storage.objects import LakeStorage
from svc.storage.repeats import RepeatWatch

__all__ = ["JobIdentity", "WriterSettings", "bucket_ns", "write_compacted"]

LabelsOf = Callable[[int], list[tuple[str, str]]]

_HOUR_NS = 3_600 * 1_000_000_000
_BUCKETS_NS = [m * 60 * 1_000_000_000 for m in (5, 15, 30, 60, 120, 180, 360, 720, 1440)]
_PAGE_BYTES = 8 << 20
_DICTIONARY_COLUMNS = [
    "labels.key_value.key",
    "labels.key_value.value",
    "metadata.key_value.key",
    "metadata.key_value.value",
]
_ENCODINGS = {
    "ts": "DELTA_BINARY_PACKED",
    "stream_id": "DELTA_BINARY_PACKED",
    "line": "DELTA_LENGTH_BYTE_ARRAY",
}


@dataclass(frozen=True)
class WriterSettings:
    """How compacted files are written."""

    level: int = 15
    row_group_rows: int = 131_072
    target_bytes: int = 256 << 20


@dataclass(frozen=True)
class JobIdentity:
    """What every file of a job records about it (for a catalog rebuild)."""

    tenant: str
    day: str
    job_id: str
    generation: int
    flushes: frozenset[str]
    wal_first_seq: int
    wal_seq: int
    backfills: frozenset[str] = frozenset()
    """Manifest keys of the backfilled inputs whose entries the job rewrites."""


def bucket_ns(rows: int, span_ns: int, row_group_rows: int) -> int:
    """Time bucket of a partition: about one row group of rows per bucket on average,
    from 5 minutes to a day (an hour when nothing is known)."""
    if rows <= 0 or span_ns <= 0:
        return _HOUR_NS
    wanted = span_ns * row_group_rows // rows
    return next((b for b in _BUCKETS_NS if b >= wanted), _BUCKETS_NS[-1])


@dataclass
class _File:
    relative: Path
    temporary: Path
    writer: pq.ParquetWriter
    summaries: dict[int, list[int]] = field(default_factory=dict)


def write_compacted(
    lake: LakeStorage,
    batches: Iterator[pa.RecordBatch],
    bucket: int,
    labels_of: LabelsOf,
    identity: JobIdentity,
    settings: WriterSettings,
    cancelled: Callable[[], bool] = lambda: False,
) -> list[tuple[FileEntry, list[FileStreamRow]]]:
    """Write rows (``ts, stream_id, line, metadata``, sorted by ``ts // bucket``, then
    stream by stream, each in time order) as new published files of one tenant-day;
    returns their entries and summaries. On failure or cancellation nothing stays behind."""
    writer = _Writer(lake, bucket, labels_of, identity, settings)
    try:
        for batch in batches:
            if cancelled():
                raise InterruptedError("compaction cancelled")
            writer.add(pa.Table.from_batches([batch]))
        return writer.finish()
    except BaseException:
        writer.abandon()
        raise


class _Writer:
    """Cuts sorted rows into row groups and files, and publishes the files."""

    def __init__(
        self,
        lake: LakeStorage,
        bucket: int,
        labels_of: LabelsOf,
        identity: JobIdentity,
        settings: WriterSettings,
    ) -> None:
        self.lake = lake
        self.bucket = bucket
        self.labels_of = labels_of
        self.identity = identity
        self.settings = settings
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.pending_bucket: int | None = None
        self.current: _File | None = None
        self.rotate = False
        self.done: list[_File] = []
        self.published: list[tuple[FileEntry, list[FileStreamRow]]] = []
        self.repeats = RepeatWatch()

    def add(self, rows: pa.Table) -> None:
        # Seen before any of them is written: the entries of one stream with one timestamp
        # are in one bucket, and a file is closed only between buckets, so a file's flag
        # (_metadata) covers all of its rows.
        self.repeats.add(rows)
        buckets = pc.divide(rows["ts"], pa.scalar(self.bucket, pa.int64()))
        for start, length, number in _runs(buckets):
            if self.pending_bucket is not None and number != self.pending_bucket:
                self._bucket_ends()
            self.pending.append(rows.slice(start, length))
            self.pending_rows += length
            self.pending_bucket = number
            while self.pending_rows >= self.settings.row_group_rows:
                self._write_group(self.settings.row_group_rows)

    def _bucket_ends(self) -> None:
        """A bucket's rows are all in: write them out once they make a decent row group,
        and start a new file past the target size."""
        if self.pending_rows >= self.settings.row_group_rows // 4:
            self._write_group(self.pending_rows)
        if self.current is not None and not self.pending_rows:
            # The next rows go to a new file: closed only once they come, when it is
            # known that this one is not the last.
            self.rotate = self._size() >= self.settings.target_bytes

    def _size(self) -> int:
        assert self.current is not None
        return self.current.temporary.stat().st_size

    def _write_group(self, rows: int) -> None:
        table = pa.concat_tables(self.pending).combine_chunks()
        group, rest = table.slice(0, rows), table.slice(rows)
        self.pending = [rest] if rest.num_rows else []
        self.pending_rows = rest.num_rows
        if self.rotate and self.current is not None:
            self._close()
        self.rotate = False
        current = self.current or self._open()
        current.writer.write_table(self._with_labels(group), row_group_size=rows)
        _summarize(current.summaries, group)

    def _with_labels(self, rows: pa.Table) -> pa.Table:
        ids = pc.unique(rows["stream_id"])
        values = pa.array([self.labels_of(s) for s in ids.to_pylist()], LABEL_MAP)
        labels = values.take(pc.index_in(rows["stream_id"], value_set=ids))
        return pa.table(
            [rows["ts"], rows["stream_id"], labels, rows["line"], rows["metadata"]],
            schema=LOG_ROW_SCHEMA,
        )

    def _open(self) -> _File:
        relative = day_directory(self.identity.tenant, self.identity.day) / (
            f"{COMPACTED_PREFIX}{uuid.uuid4().hex}.parquet"
        )
        final = self.lake.staging / relative
        final.parent.mkdir(parents=True, exist_ok=True)
        temporary = final.with_name(final.name + ".tmp")
        writer = pq.ParquetWriter(
            temporary,
            LOG_ROW_SCHEMA,
            compression="zstd",
            compression_level=self.settings.level,
            use_dictionary=_DICTIONARY_COLUMNS,
            column_encoding=_ENCODINGS,
            data_page_size=_PAGE_BYTES,
            write_statistics=True,
        )
        self.current = _File(relative, temporary, writer)
        return self.current

    def _close(self, last: bool = False) -> None:
        current = self.current
        assert current is not None
        metadata = self._metadata(current, last)
        current.writer.add_key_value_metadata({FILE_METADATA_KEY: encode_file_metadata(metadata)})
        current.writer.close()
        self.current = None
        self.done.append(current)
        file_bytes = self.lake.publish(current.temporary, str(current.relative))
        entry = FileEntry(
            path=str(current.relative),
            tenant=self.identity.tenant,
            day=self.identity.day,
            min_ts=metadata.min_ts,
            max_ts=metadata.max_ts,
            rows=metadata.rows,
            line_bytes=metadata.line_bytes,
            file_bytes=file_bytes,
            streams=len(metadata.streams),
        )
        summaries = [
            FileStreamRow(str(current.relative), sid, *values)
            for sid, values in sorted(current.summaries.items())
        ]
        self.published.append((entry, summaries))

    def _metadata(self, current: _File, last: bool) -> FileMetadata:
        identity = self.identity
        streams = [(sid, *values) for sid, values in sorted(current.summaries.items())]
        return FileMetadata(
            format=2,
            tenant=identity.tenant,
            day=identity.day,
            flush_id=identity.job_id,
            flush_files=0,
            wal_first_seq=identity.wal_first_seq,
            wal_seq=identity.wal_seq,
            rows=sum(s[1] for s in streams),
            line_bytes=sum(s[2] for s in streams),
            min_ts=min(s[3] for s in streams),
            max_ts=max(s[4] for s in streams),
            streams=[(s[0], s[1], s[2], s[3], s[4]) for s in streams],
            flushes=sorted(identity.flushes),
            generation=identity.generation,
            job_id=identity.job_id,
            job_part=len(self.done),
            job_last=last,
            unique=not self.repeats.repeated,
            backfills=sorted(identity.backfills),
        )

    def finish(self) -> list[tuple[FileEntry, list[FileStreamRow]]]:
        if self.pending_rows:
            self._write_group(self.pending_rows)
        if self.current is not None:
            self._close(last=True)
        return self.published

    def abandon(self) -> None:
        """Remove what was written (temporary and published files alike)."""
        if self.current is not None:
            with contextlib.suppress(Exception):
                self.current.writer.close()
            self.done.append(self.current)
            self.current = None
        for written in self.done:
            with contextlib.suppress(OSError):
                written.temporary.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                self.lake.remove(str(written.relative))


def _runs(values: pa.Array | pa.ChunkedArray) -> Iterator[tuple[int, int, int]]:
    """``(start, length, value)`` of each run of equal values (sorted input)."""
    array = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    count = len(array)
    if count == 0:
        return
    changes = [0]
    if count > 1:
        differ = pc.not_equal(array.slice(1), array.slice(0, count - 1))
        changes += [i + 1 for i in pc.indices_nonzero(differ).to_pylist()]
    changes.append(count)
    numbers = array.take(pa.array(changes[:-1], pa.int64())).to_pylist()
    for index, number in enumerate(numbers):
        yield changes[index], changes[index + 1] - changes[index], int(number)


def _summarize(summaries: dict[int, list[int]], rows: pa.Table) -> None:
    """Add a row group's per-stream rows, line bytes and time span."""
    table = pa.table(
        {"stream_id": rows["stream_id"], "ts": rows["ts"], "bytes": pc.binary_length(rows["line"])}
    )
    grouped = table.group_by("stream_id").aggregate(
        [("ts", "count"), ("bytes", "sum"), ("ts", "min"), ("ts", "max")]
    )
    for sid, count, size, low, high in zip(
        grouped["stream_id"].to_pylist(),
        grouped["ts_count"].to_pylist(),
        grouped["bytes_sum"].to_pylist(),
        grouped["ts_min"].to_pylist(),
        grouped["ts_max"].to_pylist(),
        strict=True,
    ):
        found = summaries.get(sid)
        if found is None:
            summaries[sid] = [count, size or 0, low, high]
        else:
            found[0] += count
            found[1] += size or 0
            found[2] = min(found[2], low)
            found[3] = max(found[3], high)

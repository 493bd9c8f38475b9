"""The Parquet lake: one file per flush, tenant and day, written atomically.

Layout: ``<root>/tenant=<percent-encoded id>/day=<YYYY-MM-DD>/<uuid>.parquet``, rows sorted
by stream then time (row-group statistics prune both), zstd compressed.

Each file carries, in its Parquet key-value metadata under ``svc.file``, what a catalog
rebuild needs (``svc catalog rebuild``): the tenant, the flush it belongs to (id, number
of files, the WAL segments its rows came from) and its per-stream summaries. Stream
labels are in the rows themselves.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.log_rows import LABEL_MAP, LOG_ROW_SCHEMA
from svc.storage import faults
from svc.storage.catalog import FileEntry, FileStreamRow
from svc.storage.files import fsync_directory, release_free_memory
from svc.storage.repeats import RepeatWatch, repeated_entries
from svc.tenancy import tenant_directory_name

if TYPE_CHECKING:
    from svc.storage.objects import LakeStorage

__all__ = [
    "COMPACTED_PREFIX",
    "DAY_NS",
    "FILE_METADATA_KEY",
    "FileMetadata",
    "FlushInfo",
    "day_directory",
    "day_numbers",
    "day_of",
    "day_rows",
    "decode_file_metadata",
    "encode_file_metadata",
    "publish_file",
    "publish_staged",
    "stream_summaries",
    "time_bucketed",
    "write_day_file",
]

_DICTIONARY_COLUMNS = [
    "stream_id",
    "labels.key_value.key",
    "labels.key_value.value",
    "metadata.key_value.key",
    "metadata.key_value.value",
]
"""Columns whose values repeat. Lines and times mostly do not: a dictionary of them is
built, outgrows its page and is dropped for plain values, at a cost (about a tenth of the
writer's CPU) and a larger file."""
_STATISTICS_COLUMNS = ["ts", "stream_id", *_DICTIONARY_COLUMNS[1:]]
"""Every column but the line: times and streams prune row groups, the metadata keys'
null counts tell a file without structured metadata (``svc/query/file_metadata.py``);
no query prunes by a line's minimum or maximum, which cost a comparison of every line."""

DAY_NS = 86_400 * 1_000_000_000
FILE_METADATA_KEY = b"svc.file"
COMPACTED_PREFIX = "compacted-"
"""Names of the compactor's files start with it (flushed ones are bare hex UUIDs)."""

LabelsOf = Callable[[int], list[tuple[str, str]]]


@dataclass(frozen=True)
class FlushInfo:
    """The flush a file belongs to: its files are listed together or not at all."""

    flush_id: str
    files: int
    wal_first_seq: int
    """First WAL segment holding rows of this flush."""
    wal_seq: int
    """Last WAL segment holding rows of this flush (the watermark it commits)."""
    backfill: str | None = None
    """The backfill manifest key, for files written by a backfill (no WAL segments)."""


class FileMetadata(msgspec.Struct, kw_only=True):
    """The ``svc.file`` key-value metadata of a lake file."""

    format: int
    tenant: str
    day: str
    flush_id: str
    flush_files: int
    wal_first_seq: int
    wal_seq: int
    rows: int
    line_bytes: int
    min_ts: int
    max_ts: int
    streams: list[tuple[int, int, int, int, int]]
    """Per stream: id, rows, line bytes, first and last timestamp."""
    flushes: list[str] = []
    """Compacted files (format 2): the flushes whose entries the file holds (a flushed
    file holds its own, ``flush_id``)."""
    generation: int = 0
    """Compacted files: rewritten later than every file of a lower generation."""
    job_id: str = ""
    """Compacted files: the job that wrote it; its files are ``job_part`` 0, 1, ..."""
    job_part: int = 0
    job_last: bool = True
    """Compacted files: whether this is the job's last file (the job is complete when
    every part up to the last one is present)."""
    backfill: str | None = None
    """Set on files written by a backfill: the manifest key of their input."""
    backfills: list[str] = []
    """Compacted files: the manifest keys of the backfilled inputs whose entries they hold
    (a catalog rebuild puts them back in the manifest, so no input is imported twice)."""
    unique: bool = False
    """Whether the writer found no two entries with the same stream, timestamp and line
    (:mod:`svc.storage.repeats`; files written before it looked say False)."""

    def flush_ids(self) -> frozenset[str]:
        """The flushes whose entries the file holds."""
        return frozenset(self.flushes) if self.flushes else frozenset((self.flush_id,))


_encode_metadata = msgspec.json.Encoder().encode
_decode_metadata = msgspec.json.Decoder(FileMetadata).decode


def decode_file_metadata(raw: bytes) -> FileMetadata:
    """The ``svc.file`` metadata of a file (raises msgspec errors when malformed)."""
    return _decode_metadata(raw)


def encode_file_metadata(metadata: FileMetadata) -> bytes:
    """The ``svc.file`` metadata value of a file."""
    return _encode_metadata(metadata)


def day_directory(tenant: str, day: str) -> Path:
    """A tenant-day partition, relative to the lake root."""
    return Path(tenant_directory_name(tenant)) / f"day={day}"


def publish_file(temporary: Path, final: Path, sites: str = "lake") -> None:
    """Make a written file durable under its final name: fsync, rename, fsync the
    directory; the temporary file is removed when that fails. ``sites``: the fault
    injection sites' prefix (``<sites>.write``, ``<sites>.sync``)."""
    try:
        faults.check_file(f"{sites}.write", temporary)
        with temporary.open("rb") as handle:
            faults.check(f"{sites}.sync")
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    temporary.rename(final)
    fsync_directory(final.parent)


def day_of(ts_ns: int) -> str:
    """The UTC day partition name of a timestamp."""
    return datetime.fromtimestamp(ts_ns // 1_000_000_000, UTC).strftime("%Y-%m-%d")


def day_numbers(head: pa.Table) -> list[int]:
    """The UTC days (as day numbers since the epoch) a tenant's head rows fall on."""
    return list(pc.unique(pc.divide(head["ts"], pa.scalar(DAY_NS, pa.int64()))).to_pylist())


def day_rows(head: pa.Table, day_number: int, days: int) -> pa.Table:
    """The rows of one day, out of a head spanning ``days`` days."""
    if days == 1:
        # A head holds one day almost always: filter (a full copy) only when it spans more.
        return head
    in_day = pc.equal(
        pc.divide(head["ts"], pa.scalar(DAY_NS, pa.int64())), pa.scalar(day_number, pa.int64())
    )
    return head.filter(in_day)


def stream_summaries(path: str, rows: pa.Table) -> list[FileStreamRow]:
    """Rows, line bytes and time span of each stream in ``rows`` (the rows of one file)."""
    table = pa.table(
        {
            "stream_id": rows["stream_id"],
            "ts": rows["ts"],
            "bytes": pc.binary_length(rows["line"]),
        }
    )
    grouped = table.group_by("stream_id").aggregate(
        [("ts", "count"), ("bytes", "sum"), ("ts", "min"), ("ts", "max")]
    )
    return [
        FileStreamRow(path, stream_id, count, line_bytes or 0, min_ts, max_ts)
        for stream_id, count, line_bytes, min_ts, max_ts in zip(
            grouped["stream_id"].to_pylist(),
            grouped["ts_count"].to_pylist(),
            grouped["bytes_sum"].to_pylist(),
            grouped["ts_min"].to_pylist(),
            grouped["ts_max"].to_pylist(),
            strict=True,
        )
    ]


def write_day_file(
    lake: LakeStorage,
    tenant: str,
    rows: pa.Table,
    labels_of: LabelsOf,
    row_group_rows: int,
    flush: FlushInfo,
    stage: Path | None = None,
    release_memory: bool = True,
    presorted: bool = False,
) -> tuple[FileEntry, list[FileStreamRow]]:
    """Write one day of a tenant's rows, sorted by stream then time, as a new lake file.

    Returns its catalog entry and per-stream summaries. The file is written under a
    temporary name in the lake's staging directory, then published (renamed into a local
    lake, uploaded to an object store); on failure the temporary file is removed.
    With ``stage``, the file is written to the same relative path under ``stage``
    instead, for :func:`publish_staged` to move into the lake later (a backfill).
    ``release_memory`` hands freed memory back to the OS after each row group (the
    server, which goes on ingesting); a backfill keeps it for its next file.
    One row group is sorted at a time: the flush never holds a sorted copy of the whole
    head, only of the row group being written. ``presorted`` rows (a backfill's) are
    already in that order: their row groups are slices of them, chunks and all (no copy).
    """
    if not presorted:
        # take() on a many-chunked table concatenates it on every call: combine it once.
        rows = rows.combine_chunks()
    day = day_of(pc.min(rows["ts"]).as_py())
    relative = day_directory(tenant, day) / f"{uuid.uuid4().hex}.parquet"
    summaries = stream_summaries(str(relative), rows)
    order = None
    if not presorted:
        order = pc.sort_indices(rows, sort_keys=[("stream_id", "ascending"), ("ts", "ascending")])
    metadata = _file_metadata(tenant, day, summaries, flush)
    if presorted:
        # A row group at a time: the lines of entries sharing stream and time are copied
        # to be compared, all of them at once would be the buffer again.
        watch = RepeatWatch()
        for start in range(0, rows.num_rows, row_group_rows):
            watch.add(rows.slice(start, row_group_rows))
        metadata.unique = not watch.repeated
    else:
        metadata.unique = not repeated_entries(rows, order)
    final = (lake.staging if stage is None else stage) / relative
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = final.with_name(final.name + ".tmp")
    try:
        _write_sorted(
            temporary,
            rows,
            order,
            labels_of,
            row_group_rows,
            _encode_metadata(metadata),
            release_memory,
        )
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise
    if stage is None:
        file_bytes = lake.publish(temporary, str(relative))
    else:
        publish_file(temporary, final)
        file_bytes = final.stat().st_size
    entry = FileEntry(
        path=str(relative),
        tenant=tenant,
        day=day,
        min_ts=metadata.min_ts,
        max_ts=metadata.max_ts,
        rows=metadata.rows,
        line_bytes=metadata.line_bytes,
        file_bytes=file_bytes,
        streams=len(summaries),
    )
    return entry, summaries


def publish_staged(stage: Path, root: Path, relative_paths: list[str]) -> None:
    """Move staged files (see :func:`write_day_file`) into the lake, durably."""
    directories = set()
    for relative in relative_paths:
        final = root / relative
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(stage / relative, final)
        directories.add(final.parent)
    for directory in directories:
        fsync_directory(directory)


def _file_metadata(
    tenant: str, day: str, summaries: list[FileStreamRow], flush: FlushInfo
) -> FileMetadata:
    return FileMetadata(
        format=1,
        tenant=tenant,
        day=day,
        flush_id=flush.flush_id,
        flush_files=flush.files,
        wal_first_seq=flush.wal_first_seq,
        wal_seq=flush.wal_seq,
        backfill=flush.backfill,
        rows=sum(s.rows for s in summaries),
        line_bytes=sum(s.line_bytes for s in summaries),
        min_ts=min(s.min_ts for s in summaries),
        max_ts=max(s.max_ts for s in summaries),
        streams=[(s.stream_id, s.rows, s.line_bytes, s.min_ts, s.max_ts) for s in summaries],
    )


def _write_sorted(
    path: Path,
    rows: pa.Table,
    order: pa.Array | None,
    labels_of: LabelsOf,
    row_group_rows: int,
    metadata: bytes,
    release_memory: bool,
) -> None:
    """Write ``rows`` taken in ``order`` (None: as they are) one row group at a time."""
    stream_ids = pc.unique(rows["stream_id"])
    label_values = pa.array([labels_of(s) for s in stream_ids.to_pylist()], LABEL_MAP)
    with pq.ParquetWriter(
        path,
        LOG_ROW_SCHEMA,
        compression="zstd",
        use_dictionary=_DICTIONARY_COLUMNS,
        write_statistics=_STATISTICS_COLUMNS,
    ) as w:
        for start in range(0, rows.num_rows, row_group_rows):
            if order is None:
                chunk = rows.slice(start, row_group_rows)
            else:
                chunk = rows.take(order.slice(start, row_group_rows))
            labels = label_values.take(pc.index_in(chunk["stream_id"], value_set=stream_ids))
            w.write_table(
                pa.table(
                    [chunk["ts"], chunk["stream_id"], labels, chunk["line"], chunk["metadata"]],
                    schema=LOG_ROW_SCHEMA,
                ),
                row_group_size=row_group_rows,
            )
            del chunk, labels
            # Encoding a row group leaves tens of MB of freed blocks in the C heap: hand them
            # back now, or they add up over the row groups of the flush (and ingest goes on).
            if release_memory:
                release_free_memory()
        w.add_key_value_metadata({FILE_METADATA_KEY: metadata})


def time_bucketed(path: str) -> bool:
    """Whether the file at ``path`` is in the compacted layout: rows sorted by time bucket
    first, so each row group covers a short time range and a time predicate skips the
    others (a flushed file's row groups each span the whole file)."""
    return Path(path).name.startswith(COMPACTED_PREFIX)

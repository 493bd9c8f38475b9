"""The Parquet lake: one file per flush, tenant and day, written atomically.

Layout: ``<root>/tenant=<percent-encoded id>/day=<YYYY-MM-DD>/<uuid>.parquet``, rows sorted
by stream then time (row-group statistics prune both), zstd compressed.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from schemas.log_rows import LABEL_MAP, LOG_ROW_SCHEMA
from svc.storage.catalog import FileEntry, FileStreamRow
from svc.storage.files import fsync_directory, release_free_memory
from svc.tenancy import tenant_directory_name

__all__ = [
    "DAY_NS",
    "day_of",
    "stream_summaries",
    "write_tenant_files",
    "write_tenant_files_summarized",
]

DAY_NS = 86_400 * 1_000_000_000

LabelsOf = Callable[[int], list[tuple[str, str]]]


def day_of(ts_ns: int) -> str:
    """The UTC day partition name of a timestamp."""
    return datetime.fromtimestamp(ts_ns // 1_000_000_000, UTC).strftime("%Y-%m-%d")


def write_tenant_files(
    root: Path, tenant: str, head: pa.Table, labels_of: LabelsOf, row_group_rows: int
) -> list[FileEntry]:
    """Write a tenant's head rows as one file per day; returns their catalog entries."""
    return write_tenant_files_summarized(root, tenant, head, labels_of, row_group_rows)[0]


def write_tenant_files_summarized(
    root: Path, tenant: str, head: pa.Table, labels_of: LabelsOf, row_group_rows: int
) -> tuple[list[FileEntry], list[FileStreamRow]]:
    """``write_tenant_files``, plus each file's per-stream summary rows."""
    days = pc.divide(head["ts"], pa.scalar(DAY_NS, pa.int64()))
    day_numbers = pc.unique(days).to_pylist()
    entries = []
    summaries: list[FileStreamRow] = []
    for day_number in day_numbers:
        # A head holds one day almost always: filter (a full copy) only when it spans more.
        part = (
            head
            if len(day_numbers) == 1
            else head.filter(pc.equal(days, pa.scalar(day_number, pa.int64())))
        )
        entry = _write_day(root, tenant, part, labels_of, row_group_rows)
        entries.append(entry)
        summaries += stream_summaries(entry.path, part)
    return entries, summaries


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


def _write_day(
    root: Path, tenant: str, rows: pa.Table, labels_of: LabelsOf, row_group_rows: int
) -> FileEntry:
    """Write rows sorted by stream then time, one row group at a time: the flush never
    holds a sorted copy of the whole head, only of the row group being written."""
    # take() on a many-chunked table concatenates it on every call: combine it once.
    rows = rows.combine_chunks()
    order = pc.sort_indices(rows, sort_keys=[("stream_id", "ascending"), ("ts", "ascending")])
    stream_ids = pc.unique(rows["stream_id"])
    label_values = pa.array([labels_of(s) for s in stream_ids.to_pylist()], LABEL_MAP)
    min_ts = pc.min(rows["ts"]).as_py()
    max_ts = pc.max(rows["ts"]).as_py()
    day = day_of(min_ts)
    relative = Path(tenant_directory_name(tenant)) / f"day={day}" / f"{uuid.uuid4().hex}.parquet"
    final = root / relative
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = final.with_name(final.name + ".tmp")
    with pq.ParquetWriter(
        temporary, LOG_ROW_SCHEMA, compression="zstd", write_statistics=True
    ) as writer:
        for start in range(0, len(order), row_group_rows):
            chunk = rows.take(order.slice(start, row_group_rows))
            labels = label_values.take(pc.index_in(chunk["stream_id"], value_set=stream_ids))
            writer.write_table(
                pa.table(
                    [chunk["ts"], chunk["stream_id"], labels, chunk["line"], chunk["metadata"]],
                    schema=LOG_ROW_SCHEMA,
                ),
                row_group_size=row_group_rows,
            )
            del chunk, labels
            # Encoding a row group leaves tens of MB of freed blocks in the C heap: hand them
            # back now, or they add up over the row groups of the flush (and ingest goes on).
            release_free_memory()
    with temporary.open("rb") as handle:
        os.fsync(handle.fileno())
    temporary.rename(final)
    fsync_directory(final.parent)
    return FileEntry(
        path=str(relative),
        tenant=tenant,
        day=day,
        min_ts=min_ts,
        max_ts=max_ts,
        rows=rows.num_rows,
        line_bytes=pc.sum(pc.binary_length(rows["line"])).as_py() or 0,
        file_bytes=final.stat().st_size,
        streams=len(stream_ids),
    )

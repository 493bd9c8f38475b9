"""The compacted file layout: buckets, row groups, file cuts, metadata and encodings."""

from __future__ import annotations

import itertools
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from schemas.log_rows import HEAD_SCHEMA
from svc.compactor.writer import JobIdentity, WriterSettings, bucket_ns, write_compacted
from svc.storage.lake import FILE_METADATA_KEY, decode_file_metadata, time_bucketed
from svc.storage.objects import LocalLake

HOUR = 3_600 * 10**9
BASE = 1_700_000_000 * 10**9 // HOUR * HOUR
IDENTITY = JobIdentity("t", "2023-11-14", "job1", 7, frozenset({"f1", "f2"}), 3, 9)


def _rows(hours: int, per_hour: int, streams: int) -> pa.Table:
    ts, ids, lines = [], [], []
    for hour in range(hours):
        for i in range(per_hour):
            ts.append(BASE + hour * HOUR + i * (HOUR // per_hour))
            ids.append(i % streams)
            lines.append(f"level=info hour={hour} i={i} some text that repeats a lot")
    table = pa.table(
        {
            "ts": pa.array(ts, pa.int64()),
            "stream_id": pa.array(ids, pa.int64()),
            "line": pa.array(lines, pa.string()),
            "metadata": pa.nulls(len(ts), HEAD_SCHEMA.field("metadata").type),
        }
    )
    order = pc.sort_indices(
        pa.table({"b": pc.divide(table["ts"], HOUR), "s": table["stream_id"], "t": table["ts"]}),
        sort_keys=[("b", "ascending"), ("s", "ascending"), ("t", "ascending")],
    )
    return table.take(order)


def _write(tmp_path: Path, rows: pa.Table, settings: WriterSettings) -> list[Path]:
    written = write_compacted(
        LocalLake(tmp_path),
        iter(rows.to_batches(max_chunksize=500)),
        HOUR,
        lambda stream_id: [("s", str(stream_id))],
        IDENTITY,
        settings,
    )
    return [tmp_path / entry.path for entry, _ in written]


def test_row_groups_stay_within_a_bucket_and_files_cut_at_the_target(tmp_path: Path) -> None:
    rows = _rows(hours=6, per_hour=2000, streams=5)
    paths = _write(tmp_path, rows, WriterSettings(level=3, row_group_rows=1000, target_bytes=2_000))
    assert len(paths) > 1
    assert all(time_bucketed(str(p)) for p in paths)
    read = pa.concat_tables([pq.read_table(p) for p in paths])
    assert read.num_rows == rows.num_rows
    columns = ["ts", "stream_id", "line"]
    assert read.select(columns).to_pydict() == rows.select(columns).to_pydict()
    spans = []
    for path in paths:
        meta = pq.read_metadata(path)
        for group in range(meta.num_row_groups):
            stats = meta.row_group(group).column(0).statistics
            assert stats.min // HOUR == stats.max // HOUR
        ts = pq.read_table(path)["ts"]
        spans.append((pc.min(ts).as_py(), pc.max(ts).as_py()))
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))  # consecutive time ranges


def test_each_file_records_its_job_part_and_summaries(tmp_path: Path) -> None:
    rows = _rows(hours=4, per_hour=1000, streams=3)
    paths = _write(tmp_path, rows, WriterSettings(level=3, row_group_rows=1000, target_bytes=2_000))
    parts = []
    for path in paths:
        meta = decode_file_metadata(pq.read_metadata(path).metadata[FILE_METADATA_KEY])
        table = pq.read_table(path)
        assert (meta.format, meta.tenant, meta.day, meta.job_id) == (2, "t", "2023-11-14", "job1")
        assert (meta.generation, meta.wal_first_seq, meta.wal_seq) == (7, 3, 9)
        assert meta.flush_ids() == frozenset({"f1", "f2"})
        assert meta.rows == table.num_rows
        assert sum(s[1] for s in meta.streams) == table.num_rows
        assert (meta.min_ts, meta.max_ts) == (
            pc.min(table["ts"]).as_py(),
            pc.max(table["ts"]).as_py(),
        )
        assert table["labels"][0].as_py() == [("s", str(table["stream_id"][0].as_py()))]
        parts.append((meta.job_part, meta.job_last))
    assert parts == [(i, i == len(paths) - 1) for i in range(len(paths))]


def test_encodings_of_the_columns(tmp_path: Path) -> None:
    path = _write(tmp_path, _rows(1, 100, 2), WriterSettings())[0]
    group = pq.read_metadata(path).row_group(0)
    encodings = {
        group.column(i).path_in_schema: group.column(i).encodings for i in range(group.num_columns)
    }
    assert "DELTA_BINARY_PACKED" in encodings["ts"]
    assert "DELTA_LENGTH_BYTE_ARRAY" in encodings["line"]
    assert group.column(3).compression == "ZSTD"


def test_a_failed_write_leaves_nothing(tmp_path: Path) -> None:
    rows = _rows(hours=3, per_hour=1000, streams=2)

    def batches() -> object:
        yield from rows.to_batches(max_chunksize=500)[:4]
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        write_compacted(
            LocalLake(tmp_path),
            batches(),  # type: ignore[arg-type]
            HOUR,
            lambda _: [],
            IDENTITY,
            WriterSettings(level=1, row_group_rows=500, target_bytes=1),
        )
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize(
    ("rows", "span_hours", "bucket_minutes"),
    [(0, 0, 60), (2_000_000, 6, 30), (1000, 24, 1440), (131_072 * 48, 24, 30)],
)
def test_bucket_size_follows_the_row_rate(rows: int, span_hours: int, bucket_minutes: int) -> None:
    assert bucket_ns(rows, span_hours * HOUR, 131_072) == bucket_minutes * 60 * 10**9

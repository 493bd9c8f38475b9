"""How a flushed (or backfilled) file's columns are encoded: lines plain and without
statistics, the columns queries prune by with them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.log_rows import HEAD_SCHEMA, LABEL_MAP
from svc.storage.lake import FlushInfo, write_day_file
from svc.storage.objects import LocalLake

DAY_START = 1_700_006_400_000_000_000


def _written(tmp_path: Path) -> pq.FileMetaData:
    rows = 3_000
    metadata = [(("trace_id", f"t{i}"),) if i % 3 == 0 else None for i in range(rows)]
    table = pa.table(
        [
            pa.array([DAY_START + i * 1_000_000 for i in range(rows)], pa.int64()),
            pa.array([i % 3 for i in range(rows)], pa.int64()),
            pa.array([f"line {i} status={200 + i % 7}" for i in range(rows)], pa.string()),
            pa.array(metadata, LABEL_MAP),
        ],
        schema=HEAD_SCHEMA,
    )
    entry, _ = write_day_file(
        LocalLake(tmp_path),
        "t",
        table,
        lambda stream: [("app", f"a{stream}")],
        1_000,
        FlushInfo("f", 1, 0, 0),
    )
    return pq.ParquetFile(tmp_path / entry.path).metadata


def test_lines_are_plain_and_have_no_statistics(tmp_path: Path) -> None:
    footer = _written(tmp_path)
    assert footer.num_row_groups == 3
    for index in range(footer.num_row_groups):
        group = footer.row_group(index)
        columns = {
            group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)
        }
        line = columns["line"]
        assert "RLE_DICTIONARY" not in line.encodings
        assert line.statistics is None
        assert "RLE_DICTIONARY" not in columns["ts"].encodings
        assert "RLE_DICTIONARY" in columns["stream_id"].encodings
        assert "RLE_DICTIONARY" in columns["labels.key_value.value"].encodings
        for pruned in ("ts", "stream_id"):
            assert columns[pruned].statistics.has_min_max
        # null counts tell a file without structured metadata (svc/query/file_metadata.py)
        assert columns["metadata.key_value.key"].statistics.has_null_count

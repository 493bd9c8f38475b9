"""Sources without structured metadata are known as such (their column is not read)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.log_rows import HEAD_SCHEMA
from svc.query.file_metadata import file_has_metadata, table_has_metadata


def _table(metadata: list[object]) -> pa.Table:
    rows = len(metadata)
    return pa.table(
        {
            "ts": pa.array(range(rows), pa.int64()),
            "stream_id": pa.array([1] * rows, pa.int64()),
            "line": pa.array(["x"] * rows),
            "metadata": pa.array(metadata, pa.map_(pa.string(), pa.string())),
        }
    )


def test_files(tmp_path: Path) -> None:
    without, empty, with_ = tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "c.parquet"
    pq.write_table(_table([None, None]), without)
    pq.write_table(_table([[], None]), empty)
    pq.write_table(_table([None, [("trace", "t1")]]), with_, row_group_size=1)
    assert not file_has_metadata(str(without))
    assert not file_has_metadata(str(empty))
    assert file_has_metadata(str(with_))
    assert file_has_metadata(str(tmp_path / "missing.parquet"))  # unknown: read it


def test_tables() -> None:
    assert not table_has_metadata(HEAD_SCHEMA.empty_table())
    assert not table_has_metadata(_table([None, []]))
    assert table_has_metadata(_table([[], [("k", "v")]]))
    assert not table_has_metadata(_table([[("k", "v")], None, []]).slice(1))

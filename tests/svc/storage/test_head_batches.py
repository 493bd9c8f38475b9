"""The head merges the small batches of many pushes (svc/storage/head.py)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from schemas.log_rows import HEAD_SCHEMA, LABEL_MAP
from svc.storage.head import MERGE_FANIN, MERGED_ROWS, Head, consolidated


def _push(first: int, rows: int) -> pa.RecordBatch:
    """One push's rows: ``rows`` entries numbered from ``first``."""
    numbers = range(first, first + rows)
    return pa.record_batch(
        [
            pa.array(numbers, pa.int64()),
            pa.array([n % 4 for n in numbers], pa.int64()),
            pa.array([f"line {n}" for n in numbers], pa.string()),
            pa.array([(("trace", str(n)),) if n % 3 == 0 else None for n in numbers], LABEL_MAP),
        ],
        schema=HEAD_SCHEMA,
    )


def test_many_small_pushes_become_few_chunks_with_the_same_rows_in_order() -> None:
    head = Head()
    for push in range(3000):
        head.append("t", _push(push * 50, 50), 0)
    table = head.table("t")
    assert table is not None
    assert table.column("ts").to_pylist() == list(range(150_000))
    assert table.column("line")[149_999].as_py() == "line 149999"
    assert table.column("metadata")[3].as_py() == [("trace", "3")]
    assert table.column("metadata")[4].as_py() is None
    assert table.column("ts").num_chunks <= 3 * MERGE_FANIN + 150_000 // 4096


def test_rows_appended_after_a_read_are_merged_at_the_next_read() -> None:
    head = Head()
    rows = []
    for push in range(100):
        head.append("t", _push(push * 10, 10), 0)
        table = head.table("t")  # a query after each push
        assert table is not None
        rows.append(table.num_rows)
    assert rows == [(push + 1) * 10 for push in range(100)]
    table = head.table("t")
    assert table is not None
    assert table.column("ts").to_pylist() == list(range(1000))
    assert table.column("ts").num_chunks < 2 * MERGE_FANIN


def test_large_batches_are_kept_as_they_are() -> None:
    large = [_push(n * 5000, 5000) for n in range(10)]
    assert [b is a for a, b in zip(large, consolidated(large), strict=True)] == [True] * 10
    small = [_push(n, 1) for n in range(MERGE_FANIN - 1)]
    assert consolidated(small) == small  # fewer than a merge's worth


def test_each_row_is_copied_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pushes of one line, each read at once (the worst case): merges copy each row at
    most once per tier, four times in all, never again and again."""
    copied = 0
    concat = pa.concat_batches

    def counting(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
        nonlocal copied
        merged = concat(batches)
        copied += merged.num_rows
        return merged

    monkeypatch.setattr(pa, "concat_batches", counting)
    head = Head()
    for n in range(20_000):
        head.append("t", _push(n, 1), 0)
        head.table("t")
    table = head.table("t")
    assert table is not None
    assert table.column("ts").to_pylist() == list(range(20_000))
    assert copied <= 4 * 20_000
    assert table.column("ts").num_chunks <= 4 * MERGE_FANIN + 20_000 // MERGED_ROWS

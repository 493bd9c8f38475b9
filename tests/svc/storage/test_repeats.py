"""A writer finds an entry stored twice (same stream, time and line) and nothing else:
not entries that only share a time, nor a copy in another stream."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from svc.storage.repeats import RepeatWatch, repeated_entries


def _rows(entries: list[tuple[int, int, str]]) -> pa.Table:
    ids, times, lines = zip(*entries, strict=True) if entries else ((), (), ())
    return pa.table({"stream_id": list(ids), "ts": list(times), "line": list(lines)})


@pytest.mark.parametrize(
    ("entries", "repeated"),
    [
        ([], False),
        ([(1, 5, "a")], False),
        ([(1, 5, "a"), (1, 5, "b"), (1, 6, "a"), (2, 5, "a")], False),
        ([(1, 5, "a"), (1, 5, "b"), (1, 5, "a")], True),
        ([(2, 5, "a"), (1, 5, "a"), (2, 5, "a")], True),  # apart until sorted
        ([(2, 5, "a"), (1, 5, "a"), (2, 6, "a")], False),
    ],
)
def test_repeated_entries(entries: list[tuple[int, int, str]], repeated: bool) -> None:
    rows = _rows(entries)
    order = pc.sort_indices(rows, sort_keys=[("stream_id", "ascending"), ("ts", "ascending")])
    assert repeated_entries(rows, order) is repeated
    assert repeated_entries(rows.take(order)) is repeated


def test_a_copy_in_the_next_batch_is_found() -> None:
    watch = RepeatWatch()
    watch.add(_rows([(1, 1, "x"), (1, 2, "y"), (1, 2, "z")]))
    watch.add(_rows([(1, 2, "w"), (1, 3, "y")]))  # time 2 goes on, with other lines
    assert not watch.repeated
    watch.add(_rows([(1, 3, "v")]))
    watch.add(_rows([(1, 3, "y")]))  # time 3's "y", two batches back
    assert watch.repeated

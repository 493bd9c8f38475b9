"""Limited log queries read compacted files in time windows: the windows cover each file
once, in the query's direction, and the answers are those of the flushed files."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from logql_to_sql import Direction, parse
from svc.compactor.rewrite import RewriteJob, Rewriter
from svc.compactor.writer import WriterSettings
from svc.model import PushStream, label_key
from svc.query.engine import QueryEngine
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.query.scan_pieces import Piece, next_group, pieces
from svc.storage.catalog import FileEntry
from svc.storage.store import Store
from tests.timeline import BASE, SECOND


def _entry(name: str, low: int, high: int, rows: int) -> FileEntry:
    return FileEntry(f"tenant=t/day=d/{name}.parquet", "t", "d", low, high, rows, 0, 0, 1)


@pytest.mark.parametrize("backward", [True, False])
def test_a_compacted_file_is_cut_into_growing_windows_covering_it_once(backward: bool) -> None:
    big = _entry("compacted-1", 1000, 1999, 10_000)
    found = pieces([big], backward, window_rows=1000)
    windows = [p.window for p in found]
    assert all(w is not None for w in windows)
    covered = sorted(ts for w in windows if w for ts in range(w[0], w[1] + 1))
    assert covered == list(range(1000, 2000))  # every instant once
    widths = [w[1] - w[0] + 1 for w in windows if w]
    assert widths == [100, 200, 400, 300]  # doubling, the last one what is left
    first = windows[0]
    assert first is not None and (first[1] == 1999 if backward else first[0] == 1000)
    assert [p.first for p in found] == [True, False, False, False]
    assert sum(p.rows for p in found) == 10_000


def test_flushed_and_small_files_are_read_whole_newest_first() -> None:
    flushed = _entry("0a1b", 0, 99, 10_000)
    small = _entry("compacted-2", 100, 199, 2_000)
    older = _entry("compacted-3", -100, -1, 10_000)
    found = pieces([older, flushed, small], backward=True, window_rows=1000)
    assert [(p.entry, p.window) for p in found[:2]] == [(small, None), (flushed, None)]
    assert all(p.entry == older and p.window for p in found[2:])


def test_groups_join_whole_files_and_keep_windows_alone() -> None:
    whole = [Piece(_entry(f"f{i}", i, i, 10)) for i in range(3)]
    window = Piece(_entry("compacted-4", 0, 99, 100), (50, 99))
    assert next_group([*whole, window], 25) == (whole, [window])
    assert next_group([*whole, window], 1000) == (whole, [window])
    assert next_group([window, *whole], 1000) == ([window], whole)
    assert next_group(whole, 15) == (whole[:2], whole[2:])
    assert next_group([], 15) == ([], [])  # only in-memory rows to read


QUERIES = [
    '{app=~".+"}',
    '{app="a"}',
    '{app=~".+"} |= "7"',
    '{app=~".+"} |= "line 1"',
    '{app="b"} |~ "part [12]"',
    '{app=~".+"} |= "absent"',
]


def _push(store: Store, part: int) -> None:
    streams = []
    for app in ("a", "b", "c"):
        labels = (("app", app),)
        times = [BASE + (part * 600 + i * 3 + ord(app) % 3) * SECOND for i in range(200)]
        lines = [f"{app} part {part} line {i}" for i in range(200)]
        streams.append(PushStream(labels, label_key(labels), times, lines, None))
    asyncio.run(store.push("t", streams))


def _answers(engine: QueryEngine) -> list[object]:
    found = []
    for query in QUERIES:
        for direction in (Direction.BACKWARD, Direction.FORWARD):
            for limit in (1, 7, 150, 5000):
                request = LogQueryRequest(
                    parse(query),  # type: ignore[arg-type]
                    BASE - SECOND,
                    BASE + 3600 * SECOND,
                    limit,
                    direction,
                )
                streams, _ = run_log_query(engine, "t", request)
                found.append(repr(streams))
    return found


def test_windowed_reads_of_a_compacted_file_answer_as_the_flushed_files(
    store: Store, tmp_path: Path
) -> None:
    for part in range(4):
        _push(store, part)
        store.flush()
    engine = QueryEngine(store, timeout_seconds=30, window_rows=64)
    before = _answers(engine)
    rewriter = Rewriter(store, engine, WriterSettings(3, 128, 1 << 30), tmp_path / "work")
    try:
        files = store.catalog.all_files()
        rewriter.run(RewriteJob("compaction", "t", files[0].day, tuple(files)))
    finally:
        rewriter.close()
    (compacted,) = store.catalog.all_files()
    assert len(pieces([compacted], backward=True, window_rows=64)) > 3
    assert _answers(engine) == before
    engine.close()

"""Which lake files a catalog rebuild lists, and the WAL watermark it recovers."""

from __future__ import annotations

from svc.storage.lake import FileMetadata
from svc.storage.rebuild import _choose, _File


def _file(name: str, flush_id: str, files: int, first: int, last: int) -> _File:
    metadata = FileMetadata(
        format=1,
        tenant="t",
        day="2023-11-14",
        flush_id=flush_id,
        flush_files=files,
        wal_first_seq=first,
        wal_seq=last,
        rows=1,
        line_bytes=1,
        min_ts=0,
        max_ts=0,
        streams=[],
    )
    return _File(name, 100, metadata, {}, [])


def _names(files: list[_File]) -> list[str]:
    return sorted(f.relative for f in files)


def test_committed_flushes_are_listed_and_an_unretired_newest_one_is_replayed() -> None:
    files = [
        _file("a1", "a", 2, 1, 3),
        _file("a2", "a", 2, 1, 3),
        _file("b1", "b", 1, 4, 6),
        _file("c1", "c", 1, 7, 9),
    ]
    # Segments 1-6 were retired (their flushes committed), 7-9 are still there.
    chosen, left_out = _choose(files, wal_segments={7, 8, 9, 10})
    assert (_names(chosen), left_out) == (["a1", "a2", "b1"], ["c1"])


def test_a_committed_flush_is_listed_even_when_its_segments_were_not_retired() -> None:
    # c is still in the WAL, but b after it is not: c was committed (flushes commit in
    # order), so its rows are listed and the watermark passes them.
    files = [_file("c1", "c", 1, 1, 3), _file("d1", "d", 1, 4, 6)]
    chosen, left_out = _choose(files, wal_segments={1, 2, 3, 7})
    assert (_names(chosen), left_out) == (["c1", "d1"], [])


def test_of_several_attempts_of_one_flush_one_complete_attempt_is_listed() -> None:
    files = [
        _file("failed1", "x", 2, 1, 4),  # an attempt that lost its second file
        _file("retry1", "y", 2, 1, 4),
        _file("retry2", "y", 2, 1, 4),
    ]
    chosen, left_out = _choose(files, wal_segments=set())
    assert (_names(chosen), left_out) == (["retry1", "retry2"], ["failed1"])


def test_an_incomplete_committed_flush_keeps_what_is_left() -> None:
    files = [_file("half", "x", 2, 1, 4)]
    chosen, left_out = _choose(files, wal_segments=set())
    assert (_names(chosen), left_out) == (["half"], [])


def test_files_without_metadata_are_always_listed() -> None:
    old = _File("old", 100, None, {}, [])
    chosen, left_out = _choose([old, _file("new", "n", 1, 1, 2)], wal_segments={1, 2})
    assert (_names(chosen), left_out) == (["old"], ["new"])

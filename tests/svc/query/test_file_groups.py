"""Groups of files for a split query: every file once, bytes balanced, the head once."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from schemas.log_rows import HEAD_SCHEMA
from svc.query.file_groups import file_groups
from svc.query.tenants import MultiView
from svc.storage.catalog import FileEntry
from svc.storage.objects import LocalLake
from svc.storage.store import ReadShare, StoreView


def _file(name: str, size: int) -> FileEntry:
    return FileEntry(f"tenant=t/day=d/{name}.parquet", "t", "d", 0, 1, 10, size, size, 1)


def _view(tmp_path: Path, sizes: list[int], head: bool = False) -> StoreView:
    files = [_file(f"f{i}", size) for i, size in enumerate(sizes)]
    heads = [HEAD_SCHEMA.empty_table()] if head else []
    return StoreView(LocalLake(tmp_path), files, heads, pa.table({"stream_id": [1]}))


def test_groups_balance_bytes_and_hold_every_file_once(tmp_path: Path) -> None:
    view = _view(tmp_path, [50, 40, 30, 20, 10, 10], head=True)
    parts = file_groups(view, 3)
    assert parts is not None and len(parts) == 3
    loads = sorted(sum(f.file_bytes for f in part.files) for part in parts)
    assert loads == [50, 50, 60]  # 50 | 40+10 | 30+20+10
    paths = sorted(f.path for part in parts for f in part.files)
    assert paths == sorted(f.path for f in view.files)
    assert [len(part.head_tables) for part in parts].count(1) == 1
    assert all(part.files == sorted(part.files, key=view.files.index) for part in parts)


def test_narrowed_files_weigh_what_is_read_of_them(tmp_path: Path) -> None:
    view = _view(tmp_path, [100, 60, 50])
    view.shares[view.files[0].path] = ReadShare(1, 5, 5)  # two row groups of a big file
    parts = file_groups(view, 2)
    assert parts is not None
    assert sorted(sorted(f.file_bytes for f in part.files) for part in parts) == [[50, 100], [60]]


def test_nothing_to_split(tmp_path: Path) -> None:
    assert file_groups(_view(tmp_path, [10]), 4) is None
    assert file_groups(_view(tmp_path, [], head=True), 4) is None
    assert file_groups(_view(tmp_path, [10, 20]), 1) is None
    one = _view(tmp_path, [10])
    assert file_groups(MultiView([(one, 3), (_view(tmp_path, []), 5)], one.streams), 2) is None


def test_a_view_of_several_tenants_is_cut_across_them(tmp_path: Path) -> None:
    """Each group is a view of every tenant (its mask, some of its files); the in-memory
    tables of all tenants go to one group."""
    t = _view(tmp_path, [50, 20], head=True)
    u = _view(tmp_path, [40, 15])
    u.files = [_file(f"u{i}", f.file_bytes) for i, f in enumerate(u.files)]
    view = MultiView([(t, 3), (u, 5)], pa.table({"stream_id": [1, 2]}))
    parts = file_groups(view, 2)
    assert parts is not None and len(parts) == 2
    assert all(isinstance(part, MultiView) for part in parts)
    groups = [part.parts for part in parts if isinstance(part, MultiView)]
    assert [[mask for _, mask in tenants] for tenants in groups] == [[3, 5], [3, 5]]
    files = [[[f.file_bytes for f in v.files] for v, _ in tenants] for tenants in groups]
    assert files == [[[50], [15]], [[20], [40]]]  # largest first onto the lightest
    assert [[len(v.head_tables) for v, _ in tenants] for tenants in groups] == [[0, 0], [1, 0]]


def test_more_groups_than_sources(tmp_path: Path) -> None:
    parts = file_groups(_view(tmp_path, [10], head=True), 8)
    assert parts is not None and len(parts) == 2

"""The skipping index's sidecars follow their lake files: built after a flush and a
compaction, removed with the file, swept when orphaned, rebuilt by ``svc catalog rebuild``."""

from __future__ import annotations

import gc
from pathlib import Path

from svc.compactor.rewrite import RewriteJob, Rewriter
from svc.compactor.writer import WriterSettings
from svc.query.engine import QueryEngine
from svc.storage.rebuild_command import rebuild_data_directory
from svc.storage.skip_index import load, needle, sidecar_path
from svc.storage.store import Store
from tests.stores import open_store, push_lines


def _sidecars(store: Store) -> list[str]:
    return sorted(str(p.relative_to(store.lake_root)) for p in store.lake_root.rglob("*.skip"))


def test_flushed_and_compacted_files_get_an_index_and_lose_it_with_the_file(
    store: Store, tmp_path: Path
) -> None:
    for part in range(2):
        push_lines(
            store, [f"part {part} request id=req{part}x{i:05d} done" for i in range(50)], part * 100
        )
        store.flush()
    store.skip_indexer.wait_idle()
    files = store.catalog.all_files()
    assert _sidecars(store) == sorted(f.path.removesuffix(".parquet") + ".skip" for f in files)
    index = load(store.lake_root / files[0].path, files[0].rows)
    assert index is not None and index.may_hold(0, needle("id=req0x00042 "))
    engine = QueryEngine(store, timeout_seconds=30)
    rewriter = Rewriter(store, engine, WriterSettings(level=3), tmp_path / "work")
    try:
        result = rewriter.run(RewriteJob("compaction", "t", files[0].day, tuple(files)))
        gc.collect()
        store.remove_retired()
        store.skip_indexer.wait_idle()
        assert _sidecars(store) == sorted(
            f.path.removesuffix(".parquet") + ".skip" for f in result.outputs
        )
    finally:
        rewriter.close()
        engine.close()


def test_startup_sweeps_orphans_and_rebuild_builds_what_is_missing(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        push_lines(store, ["level=info msg=hello", "level=error msg=boom"], 0)
        store.flush()
        store.skip_indexer.wait_idle()
        entry = store.catalog.all_files()[0]
        listed = sidecar_path(store.lake_root / entry.path)
        orphan = listed.with_name("0123.skip")
        half_written = listed.with_name(listed.name + ".abc.tmp")
        orphan.write_bytes(listed.read_bytes())
        half_written.write_bytes(b"SVCSKIP1")
    with open_store(tmp_path):
        assert listed.exists() and not orphan.exists() and not half_written.exists()
    listed.unlink()
    summary = rebuild_data_directory(tmp_path)
    assert "skipping indexes built: 1 (kept: 0)" in summary
    assert load(tmp_path / "lake" / entry.path, entry.rows) is not None


def test_a_damaged_sidecar_is_not_used(store: Store) -> None:
    push_lines(store, ["a b c"], 0)
    store.flush()
    store.skip_indexer.wait_idle()
    entry = store.catalog.all_files()[0]
    path = sidecar_path(store.lake_root / entry.path)
    path.write_bytes(path.read_bytes()[:-3])
    assert load(store.lake_root / entry.path, entry.rows) is None
    path.write_bytes(b"not an index at all")
    assert load(store.lake_root / entry.path, entry.rows) is None

"""Replaced lake files outlive the queries reading them: leases, retirement, removal."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from svc.compactor.rewrite import RewriteJob, Rewriter
from svc.compactor.writer import WriterSettings
from svc.query.engine import QueryEngine, ScanStats
from svc.storage.leases import FileLeases
from svc.storage.store import Store
from tests.stores import push_lines


def test_a_retired_file_waits_for_its_last_reader() -> None:
    leases = FileLeases()
    first = leases.lease(["a", "b"])
    second = leases.lease(["a"])
    leases.retire(["a", "b"])
    assert leases.readers("a") == 2
    del first
    gc.collect()
    assert leases.removable() == ["b"]
    assert leases.removable() == []  # handed out once
    del second
    gc.collect()
    assert leases.removable() == ["a"]
    assert leases.waiting() == 0


def test_a_retired_file_waits_for_its_delay() -> None:
    leases = FileLeases()
    leases.retire(["a"], delay_seconds=0.2)
    assert leases.removable() == []
    time.sleep(0.25)
    assert leases.removable() == ["a"]


def test_a_query_keeps_reading_the_files_a_compaction_replaced(
    store: Store, tmp_path: Path
) -> None:
    for part in range(3):
        push_lines(store, [f"part {part} line {i}" for i in range(20)], part * 100)
        store.flush()
    engine = QueryEngine(store, timeout_seconds=30)
    rewriter = Rewriter(store, engine, WriterSettings(level=3), tmp_path / "work")
    try:
        view = store.view("t", 0, 1 << 62)  # a query's snapshot, taken before the swap
        old = [store.lake_root / f.path for f in view.files]
        rewriter.run(RewriteJob("compaction", "t", view.files[0].day, tuple(view.files)))
        assert [f.path for f in store.view("t", 0, 1 << 62).files] != [f.path for f in view.files]
        assert store.remove_retired() == []  # the snapshot still reads them
        rows = engine.execute("SELECT count(*) AS n FROM logs", view, ScanStats())
        assert rows["n"].to_pylist() == [60]
        assert all(path.exists() for path in old)
        del view
        gc.collect()
        assert sorted(store.remove_retired()) == sorted(
            str(p.relative_to(store.lake_root)) for p in old
        )
        assert not any(path.exists() for path in old)
    finally:
        rewriter.close()
        engine.close()


@pytest.mark.parametrize("delay", [0.0, 60.0])
def test_swapped_files_are_listed_at_once_and_removed_when_due(
    store: Store, tmp_path: Path, delay: float
) -> None:
    push_lines(store, ["a", "b"], 0)
    store.flush()
    push_lines(store, ["c"], 10)
    store.flush()
    engine = QueryEngine(store, timeout_seconds=30)
    rewriter = Rewriter(store, engine, WriterSettings(level=3), tmp_path / "work")
    try:
        files = store.catalog.all_files()
        result = rewriter.run(
            RewriteJob("compaction", "t", files[0].day, tuple(files)), delay_seconds=delay
        )
        assert [f.path for f in store.catalog.all_files()] == [f.path for f in result.outputs]
        gc.collect()
        removed = store.remove_retired()
        assert len(removed) == (0 if delay else 2)
        assert store.leases.waiting() == (2 if delay else 0)
    finally:
        rewriter.close()
        engine.close()

"""The skipping index's sidecars follow their lake files: built after a flush and a
compaction and listed in the catalog with them, unlisted and removed with the file, swept
when orphaned, found again or rebuilt by ``svc catalog rebuild``; a sidecar that is not
the one listed is never used."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path

from logql_to_sql import Direction, parse
from svc.compactor.rewrite import RewriteJob, Rewriter
from svc.compactor.writer import WriterSettings
from svc.query.engine import QueryEngine
from svc.query.log_queries import LogQueryRequest, run_log_query
from svc.storage.catalog import Catalog, SkipIndexRow
from svc.storage.rebuild_command import rebuild_data_directory
from svc.storage.skip_index import needle, sidecar_path
from svc.storage.store import Store
from tests.stores import listed_index, open_store, push_lines
from tests.svc.storage.conftest import SetFaults
from tests.timeline import BASE, SECOND


def _sidecars(store: Store) -> list[str]:
    return sorted(str(p.relative_to(store.lake_root)) for p in store.lake_root.rglob("*.skip"))


def _listed(store: Store) -> list[str]:
    paths = [f.path for f in store.catalog.all_files()]
    return sorted(p.removesuffix(".parquet") + ".skip" for p in store.catalog.skip_indexes(paths))


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
    expected = sorted(f.path.removesuffix(".parquet") + ".skip" for f in files)
    assert _sidecars(store) == expected == _listed(store)
    index = listed_index(store, files[0])
    assert index is not None and index.may_hold(0, needle("id=req0x00042 "))
    engine = QueryEngine(store, timeout_seconds=30)
    rewriter = Rewriter(store, engine, WriterSettings(level=3), tmp_path / "work")
    try:
        result = rewriter.run(RewriteJob("compaction", "t", files[0].day, tuple(files)))
        assert not store.catalog.skip_indexes(f.path for f in files)  # unlisted in the swap
        gc.collect()
        store.remove_retired()
        store.skip_indexer.wait_idle()
        expected = sorted(f.path.removesuffix(".parquet") + ".skip" for f in result.outputs)
        assert _sidecars(store) == expected == _listed(store)
    finally:
        rewriter.close()
        engine.close()


def test_startup_sweeps_orphans_and_rebuild_finds_or_builds_indexes(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        for part in range(2):
            push_lines(store, ["level=info msg=hello", f"level=error msg=boom{part}"], part * 10)
            store.flush()
        store.skip_indexer.wait_idle()
        kept, lost = store.catalog.all_files()
        listed = sidecar_path(store.lake_root / kept.path)
        orphan = listed.with_name("0123.skip")
        half_written = listed.with_name(listed.name + ".abc.tmp")
        orphan.write_bytes(listed.read_bytes())
        half_written.write_bytes(b"SVCSKIP2")
    with open_store(tmp_path):
        assert listed.exists() and not orphan.exists() and not half_written.exists()
    sidecar_path(tmp_path / "lake" / lost.path).unlink()
    summary = rebuild_data_directory(tmp_path)
    assert "skipping indexes built: 1 (sidecars found and listed: 1)" in summary
    catalog = Catalog(tmp_path / "catalog.sqlite")
    try:
        assert set(catalog.skip_indexes([kept.path, lost.path])) == {kept.path, lost.path}
    finally:
        catalog.close()


def test_a_sidecar_that_is_not_the_listed_one_is_not_used(store: Store) -> None:
    for part in range(4):
        push_lines(store, [f"a b c{part}"], part * 10)
        store.flush()
    store.skip_indexer.wait_idle()
    damaged, foreign, good, unlisted = sorted(store.catalog.all_files(), key=lambda f: f.min_ts)
    raw = sidecar_path(store.lake_root / good.path).read_bytes()
    sidecar_path(store.lake_root / damaged.path).write_bytes(raw[:-3])
    # A well-formed index of another file, as a stale sidecar would be.
    sidecar_path(store.lake_root / foreign.path).write_bytes(raw)
    assert listed_index(store, damaged) is None
    assert listed_index(store, foreign) is None
    assert listed_index(store, good) is not None
    store.catalog.remove_files([unlisted.path])
    assert not store.catalog.skip_indexes([unlisted.path])
    assert not store.catalog.list_skip_index(SkipIndexRow(unlisted.path, len(raw), 1))


def test_a_sidecar_damaged_as_read_falls_back_to_the_scan_and_is_rebuilt(
    store: Store, set_faults: SetFaults
) -> None:
    for part in range(3):
        push_lines(store, [f"req=r{part}x{i:04d} ok" for i in range(20)], part * 100)
        store.flush()
    store.skip_indexer.wait_idle()
    listed = store.catalog.skip_indexes(f.path for f in store.catalog.all_files())
    engine = QueryEngine(store, timeout_seconds=30)
    query = parse('{app="a"} |= "req=r1x0007 "')
    request = LogQueryRequest(query, BASE, BASE + 1000 * SECOND, 100, Direction.BACKWARD)  # type: ignore[arg-type]
    try:
        set_faults("skip.read flip")
        view = engine.view(("t",), BASE, BASE + 1000 * SECOND, query)
        assert len(view.files) == 3  # no sidecar is trusted: every file is read
        streams, stats = run_log_query(engine, "t", request)
        assert [v[1] for s in streams for v in s.values] == ["req=r1x0007 ok"]
        assert stats.file_rows == 60
        store.skip_indexer.wait_idle()  # the query asked for the indexes again
        set_faults()
        assert store.catalog.skip_indexes(listed) == listed  # rebuilt alike
        streams, stats = run_log_query(engine, "t", request)
        assert [v[1] for s in streams for v in s.values] == ["req=r1x0007 ok"]
        assert stats.file_rows == 20  # one file of three
    finally:
        engine.close()


def test_a_catalog_from_before_the_index_listing_gets_its_table_and_indexes(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path) as store:
        push_lines(store, ["level=info msg=hello"], 0)
        store.flush()
        store.skip_indexer.wait_idle()
        (entry,) = store.catalog.all_files()
    with sqlite3.connect(tmp_path / "catalog.sqlite") as old:
        old.execute("DROP TABLE skip_indexes")
    sidecar_path(tmp_path / "lake" / entry.path).write_bytes(b"SVCSKIP1 of an older version")
    with open_store(tmp_path) as store:
        store.skip_indexer.wait_idle()  # the listed files without an index get one
        assert listed_index(store, entry) is not None

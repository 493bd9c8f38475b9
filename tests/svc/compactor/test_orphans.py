"""The orphan sweep over a real store in a test directory: only old files that no commit
listed and that this process does not await are removed."""

from __future__ import annotations

import os
import time
from pathlib import Path

from svc.compactor.orphans import orphans
from svc.storage.store import Store
from tests.stores import open_store, push_lines

HOUR = 3600.0
DAY_DIR = "tenant=t/day=2026-01-01"


def _age(store: Store, relative: str, seconds: float) -> None:
    path = store.lake_root / relative
    then = time.time() - seconds
    os.utime(path, (then, then))


def _publish(store: Store, name: str) -> str:
    """A file published by this process, not listed yet (a flush before its commit)."""
    relative = f"{DAY_DIR}/{name}.parquet"
    temporary = store.lake.staging / f"{relative}.tmp"
    temporary.parent.mkdir(parents=True, exist_ok=True)
    temporary.write_bytes(b"PAR1")
    store.lake.publish(temporary, relative)
    return relative


def _stray(store: Store, name: str) -> str:
    """A file another (dead) process published and never listed."""
    relative = f"{DAY_DIR}/{name}.parquet"
    path = store.lake_root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PAR1")
    return relative


def test_only_old_unlisted_unawaited_files_go(tmp_path: Path) -> None:
    with open_store(tmp_path) as store:
        push_lines(store, ["a", "b"], 0)
        store.flush()
        [listed] = [entry.path for entry in store.catalog.all_files()]
        pending = _publish(store, "pending")
        old_orphan = _stray(store, "old")
        new_orphan = _stray(store, "new")
        retired = _stray(store, "retired")
        store.leases.retire([retired], HOUR)  # replaced, kept for its readers
        for relative in (listed, pending, old_orphan, retired):
            _age(store, relative, 2 * HOUR)
        assert orphans(store, HOUR, time.time()) == [old_orphan]
        assert not (store.lake_root / old_orphan).exists()
        kept = {listed, pending, new_orphan, retired}
        assert set(store.lake.files()) == kept
        # Once its flush gives it up (or the commit lists it), the pending file is settled.
        store.lake.settle([pending])
        assert orphans(store, HOUR, time.time()) == [pending]
        assert orphans(store, 0.0, time.time() + 1) == [new_orphan]
        assert set(store.lake.files()) == {listed, retired}

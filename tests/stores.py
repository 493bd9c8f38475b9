"""A real Store over a test directory, for tests that drive storage or queries directly."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from svc.storage.store import Store, StoreSettings

__all__ = ["open_store"]


@contextlib.contextmanager
def open_store(root: Path) -> Iterator[Store]:
    """An open store under ``root`` that never flushes by itself; closed without flushing."""
    store = Store(
        StoreSettings(
            root=root,
            head_max_bytes=1 << 30,
            max_head_age_seconds=3600,
            flush_check_seconds=3600,
            wal_segment_max_bytes=64 << 20,
            row_group_rows=4096,
        )
    )
    store.open()
    try:
        yield store
    finally:
        store.close(flush=False)

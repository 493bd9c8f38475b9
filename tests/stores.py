"""A real Store over a test directory, for tests that drive storage or queries directly."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

from svc.model import PushStream, label_key
from svc.storage.catalog import FileEntry
from svc.storage.objects import S3Settings
from svc.storage.skip_index import SkipIndex
from svc.storage.skip_indexer import listed_indexes
from svc.storage.store import Store, StoreSettings
from tests.timeline import BASE, SECOND

__all__ = ["listed_index", "open_store", "push_lines"]


@contextlib.contextmanager
def open_store(root: Path, object_store: S3Settings | None = None) -> Iterator[Store]:
    """An open store under ``root`` (its lake in ``object_store`` if given) that never
    flushes by itself; closed without flushing."""
    store = Store(
        StoreSettings(
            root=root,
            head_max_bytes=1 << 30,
            max_head_age_seconds=3600,
            flush_check_seconds=3600,
            wal_segment_max_bytes=64 << 20,
            row_group_rows=4096,
            object_store=object_store,
        )
    )
    store.open()
    try:
        yield store
    finally:
        store.close(flush=False)


def push_lines(store: Store, lines: list[str], offset: int, tenant: str = "t") -> None:
    """Push ``lines`` to the stream ``{app="a"}``, one a second from ``BASE + offset`` s."""
    labels = (("app", "a"),)
    stream = PushStream(
        labels,
        label_key(labels),
        [BASE + (offset + i) * SECOND for i in range(len(lines))],
        lines,
        None,
    )
    asyncio.run(store.push(tenant, [stream]))


def listed_index(store: Store, entry: FileEntry) -> SkipIndex | None:
    """The skipping index the catalog lists for a file, when its sidecar is the listed one."""
    return listed_indexes(store.lake, store.catalog, [entry])[0].get(entry.path)

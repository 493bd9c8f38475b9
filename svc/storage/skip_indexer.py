"""Builds the skipping index (``skip_index.py``) of lake files, off the write path, and
lists it in the catalog.

A flush or a compaction publishes its files and lists them first; their indexes are built
afterwards on one background thread at a lower CPU priority, so neither waits for the
tokenising (about 0.6 s of CPU per 131,072-row row group of the benchmark corpus). A
query that meets a listed file without a listed index (or whose sidecar is not the one
listed) scans it whole and asks for one; so files of a backfill, of a catalog rebuild or
of an older version get theirs on first use. A sidecar already there that fits its file
row group by row group (a catalog rebuilt from the lake) is listed as it is.

An index is listed only while its file is: a file compacted away meanwhile leaves no
listing behind, and its sidecar goes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

from svc.storage.catalog import Catalog, FileEntry, SkipIndexRow
from svc.storage.files import release_free_memory
from svc.storage.lake_urls import parquet_file
from svc.storage.objects import LakeStorage
from svc.storage.skip_index import (
    GroupBuilder,
    SkipIndex,
    checksum,
    load,
    parse,
    publish_sidecar,
    remove_sidecars,
    sidecar_relative,
)

__all__ = ["SkipIndexer", "build_file", "build_missing", "listed_indexes"]

log = logging.getLogger(__name__)

_LOWER_PRIORITY = 10
_SLICE_ROWS = 16_384


def build_file(
    lake: LakeStorage,
    relative: str,
    cancelled: Callable[[], bool] = lambda: False,
    turns: AbstractContextManager[Any] | None = None,
) -> SkipIndexRow | None:
    """Publish the index of the lake file at ``relative``; returns what to list (None:
    ``cancelled`` said so, nothing written). Raises OSError (or Arrow's errors) when the
    file cannot be read.

    Row groups are read ``_SLICE_ROWS`` rows at a time, and each slice is read and
    tokenised, and each group's filters built, while holding ``turns`` (the store's
    flushes hold it while they write): the indexer runs next to pushes and flushes, and
    neither a whole group's lines, decompressed, nor its buffers during a flush then add
    to the process's peak memory.
    """
    turn = turns if turns is not None else contextlib.nullcontext()
    source = parquet_file(lake.url(relative))
    columns = ["line", "metadata"] if "metadata" in source.schema_arrow.names else ["line"]
    groups = []
    for group in range(source.num_row_groups):
        builder = GroupBuilder()
        slices = source.iter_batches(
            batch_size=_SLICE_ROWS, row_groups=[group], columns=columns, use_threads=False
        )
        while True:
            if cancelled():
                return None
            with turn:
                rows = next(slices, None)
                if rows is None:
                    break
                builder.add(rows["line"], rows["metadata"] if "metadata" in columns else None)
                del rows
        with turn:
            groups.append(builder.finish(_compressed_bytes(source.metadata.row_group(group))))
        del builder, slices
        release_free_memory()
    return publish_sidecar(lake, relative, groups)


def _compressed_bytes(group: Any) -> int:
    """The bytes a row group takes in its file (its column chunks, compressed)."""
    return sum(group.column(i).total_compressed_size for i in range(group.num_columns))


def _existing(lake: LakeStorage, relative: str) -> SkipIndexRow | None:
    """The sidecar already next to the file, when it fits it row group by row group."""
    try:
        raw = lake.read(sidecar_relative(relative))
    except OSError:
        return None
    index = parse(raw)
    if index is None:
        return None
    footer = parquet_file(lake.url(relative)).metadata
    groups = [footer.row_group(group).num_rows for group in range(footer.num_row_groups)]
    if list(index.rows) != groups:
        return None
    return SkipIndexRow(relative, len(raw), checksum(raw))


def _index(
    lake: LakeStorage,
    catalog: Catalog,
    relative: str,
    cancelled: Callable[[], bool],
    turns: AbstractContextManager[Any] | None = None,
) -> tuple[SkipIndexRow | None, bool]:
    """Give the file a listed index: (its listing, None when it has none now; whether it
    was built). A sidecar already there is listed as it is only when the catalog lists
    none for the file (a rebuilt catalog): one that differs from its listing is rebuilt."""
    listed = catalog.skip_indexes([relative]).get(relative)
    row = _existing(lake, relative) if listed is None else None
    if listed is not None and row is None:
        try:
            rows = parquet_file(lake.url(relative)).metadata.num_rows
        except OSError:
            rows = -1
        if load(lake, listed, rows) is not None:
            return listed, False
    built = row is None
    if row is None:
        row = build_file(lake, relative, cancelled, turns)
        if row is None:
            return None, False
    if not catalog.list_skip_index(row):  # unlisted (compacted away, quarantined) meanwhile
        remove_sidecars(lake, [relative])
        return None, built
    return row, built


def build_missing(
    lake: LakeStorage, catalog: Catalog, files: Iterable[FileEntry]
) -> tuple[int, int]:
    """Give every listed file a listed index that fits it, at once; returns how many were
    built and how many sidecars already there were kept (``svc catalog rebuild``)."""
    wanted = list(files)
    listed = catalog.skip_indexes(f.path for f in wanted)
    built = kept = 0
    for entry in wanted:
        row = listed.get(entry.path)
        if row is not None and load(lake, row, entry.rows) is not None:
            kept += 1
            continue
        try:
            done, fresh = _index(lake, catalog, entry.path, lambda: False)
        except Exception as exc:  # the file stays usable, scanned whole
            log.warning("could not build the skipping index of %s: %s", entry.path, exc)
            continue
        built += done is not None and fresh
        kept += done is not None and not fresh
    return built, kept


def listed_indexes(
    lake: LakeStorage, catalog: Catalog, files: Iterable[FileEntry]
) -> tuple[dict[str, SkipIndex], list[str]]:
    """The usable listed indexes of ``files`` by path, and the files without one."""
    wanted = list(files)
    listed = catalog.skip_indexes(f.path for f in wanted) if wanted else {}
    found: dict[str, SkipIndex] = {}
    missing = []
    for entry in wanted:
        row = listed.get(entry.path)
        index = None if row is None else load(lake, row, entry.rows)
        if index is None:
            missing.append(entry.path)
        else:
            found[entry.path] = index
    return found, missing


class SkipIndexer:
    """One background thread that indexes the lake files it is asked to, once each."""

    def __init__(
        self,
        lake: LakeStorage,
        catalog: Catalog,
        *,
        enabled: bool = True,
        turns: AbstractContextManager[Any] | None = None,
    ) -> None:
        self.lake = lake
        self.catalog = catalog
        self.enabled = enabled
        self.turns = turns
        """Held while reading and tokenising each slice (see ``build_file``)."""
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._asked: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.built_total = 0
        self.failed_total = 0
        self.built_bytes = 0

    def start(self) -> None:
        """Start the thread (a no-op when disabled or running)."""
        if not self.enabled or self._thread is not None:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="skip-indexer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop between two row groups (files not indexed yet get theirs on next use)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopping.set()
        with contextlib.suppress(queue.Empty):
            while True:
                self._queue.get_nowait()
                self._queue.task_done()
        self._queue.put(None)
        thread.join()

    def request(self, relative_paths: Iterable[str]) -> None:
        """Index these lake files (relative paths) unless they are waiting already."""
        if not self.enabled:
            return
        with self._lock:
            for relative in relative_paths:
                if relative not in self._asked:
                    self._asked.add(relative)
                    self._queue.put(relative)

    def wait_idle(self) -> None:
        """Return once every requested file has been handled (for tests, benchmarks)."""
        if self._thread is not None:
            self._queue.join()

    def _run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _LOWER_PRIORITY)
        while True:
            relative = self._queue.get()
            try:
                if relative is None:
                    return
                self._index(relative)
            finally:
                self._queue.task_done()

    def _index(self, relative: str) -> None:
        try:
            row, built = _index(
                self.lake, self.catalog, relative, self._stopping.is_set, self.turns
            )
            if built and row is not None:
                self.built_total += 1
                self.built_bytes += row.nbytes
        except FileNotFoundError:
            return  # compacted away or quarantined meanwhile: nothing to index
        except Exception as exc:  # the file stays usable, scanned whole
            self.failed_total += 1
            log.warning("could not build the skipping index of %s: %s", relative, exc)
        finally:
            # Asked again if a query finds it without a usable index (a damaged sidecar).
            with self._lock:
                self._asked.discard(relative)

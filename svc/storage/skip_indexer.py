"""Builds the skipping index (``skip_index.py``) of lake files, off the write path.

A flush or a compaction publishes its files and lists them first; their indexes are built
afterwards on one background thread at a lower CPU priority, so neither waits for the
tokenising (about 0.6 s of CPU per 131,072-row row group of the benchmark corpus). A
query that meets a listed file without an index scans it whole and asks for one; so files
of a backfill, of a catalog rebuild or of an older version get theirs on first use.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow.parquet as pq

from svc.storage.skip_index import (
    build_group,
    load,
    remove_sidecars,
    sidecar_path,
    write_sidecar,
)

__all__ = ["SkipIndexer", "build_file", "build_missing"]

log = logging.getLogger(__name__)

_LOWER_PRIORITY = 10


def build_file(parquet: Path, cancelled: Callable[[], bool] = lambda: False) -> int:
    """Write the index of the lake file at ``parquet``; returns its size in bytes (0:
    ``cancelled`` said so between two row groups, nothing written). Raises OSError (or
    Arrow's errors) when the file cannot be read."""
    source = pq.ParquetFile(parquet)
    groups = []
    for group in range(source.num_row_groups):
        if cancelled():
            return 0
        groups.append(build_group(source.read_row_group(group, columns=["line"])["line"]))
    size = write_sidecar(parquet, groups)
    if not parquet.exists():  # removed (compacted away, quarantined) while we read it
        remove_sidecars([parquet])
    return size


def _fits(parquet: Path) -> bool:
    """Whether the lake file at ``parquet`` has an index that fits it."""
    return load(parquet, pq.ParquetFile(parquet).metadata.num_rows) is not None


def build_missing(lake_root: Path, files: Iterable[tuple[str, int]]) -> tuple[int, int]:
    """Give every listed file (relative path, rows) an index that fits it, at once;
    returns how many were built and how many were kept (``svc catalog rebuild``)."""
    built = kept = 0
    for relative, rows in files:
        parquet = lake_root / relative
        if load(parquet, rows) is not None:
            kept += 1
            continue
        try:
            build_file(parquet)
            built += 1
        except Exception as exc:  # the file stays usable, scanned whole
            log.warning("could not build the skipping index of %s: %s", relative, exc)
    return built, kept


class SkipIndexer:
    """One background thread that indexes the lake files it is asked to, once each."""

    def __init__(self, lake_root: Path, *, enabled: bool = True) -> None:
        self.lake_root = lake_root
        self.enabled = enabled
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
        """Index these lake files (relative paths) unless asked already."""
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
        parquet = self.lake_root / relative
        try:
            if sidecar_path(parquet).exists() and _fits(parquet):
                return
            size = build_file(parquet, self._stopping.is_set)
            if not size:
                with self._lock:
                    self._asked.discard(relative)
                return
            self.built_bytes += size
            self.built_total += 1
        except FileNotFoundError:
            return  # compacted away or quarantined meanwhile: nothing to index
        except Exception as exc:  # the file stays usable, scanned whole
            self.failed_total += 1
            with self._lock:
                self._asked.discard(relative)  # a later query asks again
            log.warning("could not build the skipping index of %s: %s", relative, exc)

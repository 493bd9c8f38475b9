"""Writing a backfilled input: staged Parquet files, then one catalog transaction.

Rows are buffered per UTC day up to a memory budget (:class:`Stager`); a full buffer is
written as one staged file per day with the flush's own writer
(:func:`~svc.storage.lake.write_day_file`: sorted by stream then time, the same row
groups, zstd, ``svc.file`` metadata), under
``<data>/backfill-staging/<run>/``, outside the lake. When the input is read, its files
are moved into the lake and listed, its streams registered and its manifest row written,
in one catalog transaction (:meth:`~svc.storage.catalog.Catalog.commit_backfill`), under
the lake's publish lock.

Crash safety: a ``kill -9`` before that transaction leaves staged files only (nothing in
the lake, nothing listed); inside it, files moved into the lake but not listed, which
the catalog does not know (queries never see them) and which the next backfill or
server start removes. Each run holds a lock on its staging directory; the next backfill
removes the directories of runs that are gone.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from svc.backfill.runs import Part, arrange, in_order
from svc.model import Labels, label_key
from svc.storage.catalog import BackfillInput, Catalog, FileEntry, FileStreamRow, StreamRow
from svc.storage.files import DataDirectoryInUseError, DataDirectoryLock, lake_publish_lock
from svc.storage.lake import (
    DAY_NS,
    FILE_METADATA_KEY,
    FlushInfo,
    decode_file_metadata,
    publish_staged,
    write_day_file,
)
from svc.storage.lake_check import lake_files
from svc.storage.objects import LocalLake

__all__ = ["STAGING_DIRECTORY", "Stager", "StagingRun", "remove_leftovers"]

log = logging.getLogger(__name__)

STAGING_DIRECTORY = "backfill-staging"
_encode_labels = msgspec.json.Encoder().encode


@dataclass
class _Stream:
    key: str
    labels: Labels
    first_ts: int
    last_ts: int


class StagingRun:
    """One backfill run's staging directory, locked while the run lives."""

    def __init__(self, root: Path) -> None:
        self.directory = root / STAGING_DIRECTORY / uuid.uuid4().hex
        self.directory.mkdir(parents=True)
        self._lock = DataDirectoryLock(self.directory)
        self._lock.acquire()

    def close(self) -> None:
        """Remove the staging directory and release it."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self._lock.release()


@dataclass
class Stager:
    """Buffers one input's validated rows per day and writes them as staged files.

    Memory: the rows buffered stay under ``budget_bytes`` plus one added chunk; each
    chunk is sorted as it is added and a day's file made of slices of the buffer, with
    copies of the rows out of order only (:mod:`svc.backfill.runs`): at most half the
    buffer more, or, for an input mostly out of time order, the buffer once more (the
    day's rows combined into one table, briefly, and sorted as a flush sorts them).
    The flush's writer copies one row group's labels at a time.
    """

    run: StagingRun
    tenant: str
    key: str
    """The manifest key written in the files' metadata (an input read from stdin is
    hashed as it is read: its files carry a key of the run instead)."""
    row_group_rows: int
    budget_bytes: int
    _days: dict[int, list[Part]] = field(default_factory=dict)
    _buffered: int = 0
    _streams: dict[int, _Stream] = field(default_factory=dict)
    entries: list[FileEntry] = field(default_factory=list)
    summaries: list[FileStreamRow] = field(default_factory=list)
    flush_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    peak_bytes: int = 0
    """The most bytes of Arrow buffers this stager held at once (buffered rows, and the
    copies made to put them in order)."""
    copies: int = 0
    """Files written from a combined copy of their rows (mostly out of order)."""

    def add(self, rows: pa.Table, streams: dict[int, Labels]) -> None:
        """Buffer rows (``HEAD_SCHEMA``) of the given streams; write when the buffer is
        full."""
        if rows.num_rows == 0:
            return
        days = pc.divide(rows["ts"], pa.scalar(DAY_NS, pa.int64()))
        numbers = pc.unique(days).to_pylist()
        for day in numbers:
            part = rows
            if len(numbers) > 1:  # a chunk holds one day almost always: no copy then
                part = rows.filter(pc.equal(days, pa.scalar(day, pa.int64())))
            arranged = arrange(part)
            self._observe(arranged, streams)
            self._days.setdefault(day, []).append(arranged)
            self._buffered += arranged.rows.get_total_buffer_size()
        self.peak_bytes = max(self.peak_bytes, self._buffered)
        if self._buffered >= self.budget_bytes:
            self.write()

    def _observe(self, part: Part, streams: dict[int, Labels]) -> None:
        for stream_id, _, _, first, last in part.runs:
            known = self._streams.get(stream_id)
            if known is None:
                labels = streams[stream_id]
                self._streams[stream_id] = _Stream(label_key(labels), labels, first, last)
            else:
                known.first_ts = min(known.first_ts, first)
                known.last_ts = max(known.last_ts, last)

    def write(self) -> None:
        """Write every buffered day as a staged file and empty the buffer."""
        flush = FlushInfo(self.flush_id, 0, 0, 0, backfill=self.key)
        for day in sorted(self._days):
            rows, presorted, copied = in_order(self._days.pop(day))
            self.copies += not presorted
            self.peak_bytes = max(self.peak_bytes, self._buffered + copied)
            entry, summaries = write_day_file(
                LocalLake(self.run.directory),
                self.tenant,
                rows,
                self._labels_of,
                self.row_group_rows,
                flush,
                stage=self.run.directory,
                release_memory=False,
                presorted=presorted,
            )
            self.entries.append(entry)
            self.summaries += summaries
            del rows
        self._buffered = 0

    def _labels_of(self, stream_id: int) -> list[tuple[str, str]]:
        return list(self._streams[stream_id].labels)

    def stream_rows(self) -> list[StreamRow]:
        """The catalog rows of the streams written."""
        return [
            StreamRow(
                self.tenant,
                stream_id,
                s.key,
                _encode_labels(list(s.labels)).decode(),
                s.first_ts,
                s.last_ts,
            )
            for stream_id, s in self._streams.items()
        ]

    def publish(self, catalog: Catalog, root: Path, key: str, name: str, rows: int) -> bool:
        """Move the staged files into the lake and list them with their streams and the
        manifest row (``key``), atomically; returns False when the manifest already has
        the input."""
        self.write()
        paths = [e.path for e in self.entries]
        imported = BackfillInput(key, self.tenant, name, rows, len(paths), time.time_ns())
        lake = root / "lake"
        moved = False

        def move() -> None:
            nonlocal moved
            moved = True
            publish_staged(self.run.directory, lake, paths)

        with lake_publish_lock(root):
            try:
                done = catalog.commit_backfill(
                    self.entries, self.stream_rows(), self.summaries, imported, move
                )
            except BaseException:
                if moved:
                    for path in paths:
                        with contextlib.suppress(OSError):
                            (lake / path).unlink(missing_ok=True)
                raise
        if not done:
            self.discard()
        return done

    def discard(self) -> None:
        """Remove the staged files."""
        for entry in self.entries:
            with contextlib.suppress(OSError):
                (self.run.directory / entry.path).unlink(missing_ok=True)


def remove_leftovers(root: Path, catalog: Catalog) -> list[str]:
    """Remove what killed backfills left: staging directories of runs that are gone, and
    backfill files in the lake that no transaction listed; returns what went."""
    removed: list[str] = []
    staging = root / STAGING_DIRECTORY
    if staging.is_dir():
        for directory in staging.iterdir():
            lock = DataDirectoryLock(directory)
            try:
                lock.acquire()
            except (DataDirectoryInUseError, OSError):
                continue
            shutil.rmtree(directory, ignore_errors=True)
            lock.release()
            removed.append(str(directory))
    lake = root / "lake"
    with lake_publish_lock(root):
        listed = {entry.path for entry in catalog.all_files()}
        for relative in lake_files(lake):
            if relative in listed or not _is_backfill_file(lake / relative):
                continue
            with contextlib.suppress(OSError):
                (lake / relative).unlink()
                removed.append(relative)
    for item in removed:
        log.warning("removed what an interrupted backfill left: %s", item)
    return removed


def _is_backfill_file(path: Path) -> bool:
    try:
        raw = (pq.read_metadata(path).metadata or {}).get(FILE_METADATA_KEY)
        return raw is not None and bool(decode_file_metadata(raw).backfill)
    except Exception:  # unreadable: not ours to judge; the startup checks handle it
        return False

"""Write-ahead log with group commit.

Records are appended to numbered segment files (format: ``wal_records``). One writer
thread takes every record queued since its last round, writes them, makes them durable
with a single ``fdatasync`` and only then applies them (to the head) and answers the
waiting pushes: concurrent pushes share one sync, and nothing is acknowledged before it is
on disk. Rotation takes the same lock, so a segment never holds a record that was applied
to the head after the segment was closed.

A batch whose write or sync fails (no space, I/O error, short write) is taken back: the
segment is truncated to where the batch began, or, when even that fails, abandoned for a
new segment. Its pushes get a :class:`WalWriteError` (503) and later batches go on once the
fault clears. Replay cuts a torn tail silently, but damage inside a segment is loud: the
records after it are recovered, the damaged segment is moved to ``wal/corrupt/`` for
inspection and replaced by its intact records, and ``corrupt_records_total`` counts it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar

from svc.errors import ServiceError
from svc.storage import faults
from svc.storage.files import fsync_directory
from svc.storage.wal_records import SEGMENT_HEADER, SegmentScan, encode_records, scan_segment

__all__ = ["CORRUPT_DIRECTORY", "WalStoppedError", "WalWriteError", "WriteAheadLog"]

log = logging.getLogger(__name__)

_SUFFIX = ".wal"
CORRUPT_DIRECTORY = "corrupt"


class WalStoppedError(ServiceError):
    """A write arrived after the WAL was closed."""

    status = 500


class WalWriteError(ServiceError):
    """The WAL could not make a batch durable; its pushes were not stored (503: retry)."""

    status = 503


_T = TypeVar("_T")
_Pending = tuple[bytes, Callable[[], None], "Future[None]"]


class WriteAheadLog:
    """Durable, ordered log of accepted pushes, split into segments."""

    def __init__(self, directory: Path, *, segment_max_bytes: int) -> None:
        self.directory = directory
        self.segment_max_bytes = segment_max_bytes
        self.commit_lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._file: int | None = None
        self._segment_seq = 0
        self._segment_bytes = 0
        self._stopped = False
        self.sync_seconds_total = 0.0
        self.syncs_total = 0
        self.write_failures_total = 0
        self.corrupt_records_total = 0
        self.on_sync: Callable[[float], None] | None = None
        self.on_write_failure: Callable[[OSError], None] | None = None
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def corrupt_directory(self) -> Path:
        """Where damaged segments are kept."""
        return self.directory / CORRUPT_DIRECTORY

    @property
    def segment_seq(self) -> int:
        """Sequence number of the segment being written."""
        return self._segment_seq

    def segments(self) -> list[tuple[int, Path]]:
        """Existing segments, oldest first."""
        found = []
        for path in self.directory.glob("*" + _SUFFIX):
            if path.stem.isdigit():
                found.append((int(path.stem), path))
        return sorted(found)

    def replay(self, after_seq: int, decode: Callable[[bytes], _T]) -> Iterator[_T]:
        """Every intact record in segments newer than ``after_seq``, decoded.

        A torn record at the end of a segment (a crash mid-write) is cut off; damage
        inside a segment, and records ``decode`` rejects, are skipped, counted, logged
        and kept aside (module docstring).
        """
        for seq, path in self.segments():
            self._segment_seq = max(self._segment_seq, seq)
            if seq <= after_seq:
                continue
            scan = scan_segment(path.read_bytes())
            undecodable = []
            for index, payload in enumerate(scan.records):
                try:
                    decoded = decode(payload)
                except Exception as exc:  # a checksum collision or a foreign format
                    log.error(
                        "wal segment %s: record %d does not decode: %s", path.name, index, exc
                    )
                    undecodable.append(index)
                    continue
                yield decoded
            if scan.damaged or undecodable:
                self._set_aside(path, scan, undecodable)
            elif scan.torn_at is not None:
                log.warning(
                    "wal segment %s: cutting a torn record at byte %d (a write cut short "
                    "by a crash; it was never acknowledged)",
                    path.name,
                    scan.torn_at,
                )
                _truncate(path, scan.torn_at)

    def _set_aside(self, path: Path, scan: SegmentScan, undecodable: list[int]) -> None:
        """Keep a damaged segment in ``corrupt/`` and put its intact records in its place.

        The original stays reachable at every moment (a hard link, or a copy, is made
        before the segment is replaced), so a crash here loses nothing.
        """
        self.corrupt_records_total += len(scan.damaged) + len(undecodable)
        kept = _free_name(self.corrupt_directory / path.name)
        kept.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, kept)
        except OSError:
            shutil.copy2(path, kept)
        fsync_directory(kept.parent)
        skip = set(undecodable)
        intact = [r for i, r in enumerate(scan.records) if i not in skip]
        _write_segment(path, intact)
        spans = ", ".join(f"bytes {start}-{end}" for start, end in scan.damaged)
        log.error(
            "wal segment %s is damaged: %d damaged span(s) (%s) and %d undecodable "
            "record(s) skipped, %d intact records kept; the entries in the damaged part are "
            "lost. The original segment is kept at %s",
            path.name,
            len(scan.damaged),
            spans or "none",
            len(undecodable),
            len(intact),
            kept,
        )

    def start(self, *, after_seq: int = 0) -> None:
        """Open a fresh segment (numbered past every existing one and past ``after_seq``)
        and start the writer thread."""
        self._segment_seq = max(self._segment_seq, after_seq)
        self._open_segment(self._segment_seq + 1)
        self._thread = threading.Thread(target=self._run, name="wal-writer", daemon=True)
        self._thread.start()

    def submit(self, payload: bytes, apply: Callable[[], None]) -> Future[None]:
        """Queue a record; the future resolves once it is durable and ``apply`` has run."""
        future: Future[None] = Future()
        if self._stopped:
            future.set_exception(WalStoppedError("wal is stopped"))
            return future
        self._queue.put((payload, apply, future))
        return future

    async def append(self, payload: bytes, apply: Callable[[], None]) -> None:
        """Write ``payload`` durably, then run ``apply``; returns when both are done."""
        await asyncio.wrap_future(self.submit(payload, apply))

    def rotate_locked(self) -> int:
        """Close the current segment and open the next; the caller holds ``commit_lock``.

        Returns the sequence number of the closed segment: every record in it (and before)
        has been applied. Raises OSError (nothing changed) when the new segment cannot be
        created.
        """
        closed = self._segment_seq
        self._open_segment(closed + 1)
        return closed

    def retire(self, up_to_seq: int) -> None:
        """Delete the segments whose records are all durable elsewhere."""
        for seq, path in self.segments():
            if seq <= up_to_seq and seq != self._segment_seq:
                try:
                    path.unlink(missing_ok=True)
                except OSError as exc:  # replay skips it anyway: it is below the watermark
                    log.warning("could not remove retired wal segment %s: %s", path.name, exc)

    def stop(self) -> None:
        """Finish queued writes, then close; later writes fail with ``wal is stopped``."""
        if self._stopped:
            return
        self._stopped = True
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join()
        if self._file is not None:
            os.close(self._file)
            self._file = None

    def _open_segment(self, seq: int) -> None:
        """Create segment ``seq`` and switch to it; on failure the current one stays."""
        path = self.directory / f"{seq:016d}{_SUFFIX}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o644)
        try:
            faults.write_all("wal.open", fd, SEGMENT_HEADER)
            fsync_directory(self.directory)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        if self._file is not None:
            os.close(self._file)
        self._file = fd
        self._segment_seq = seq
        self._segment_bytes = len(SEGMENT_HEADER)

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            batch: list[_Pending] = []
            stop = first is None
            if first is not None:
                batch.append(first)
            while not self._queue.empty():
                item = self._queue.get()
                if item is None:
                    stop = True
                else:
                    batch.append(item)
            if batch:
                self._commit(batch)
            if stop:
                return

    def _commit(self, batch: list[_Pending]) -> None:
        try:
            with self.commit_lock:
                self._write_batch(batch)
                for _, apply, _ in batch:
                    apply()
        except Exception as exc:  # every waiter learns of the failure
            if not isinstance(exc, WalWriteError):
                log.exception("wal commit failed")
            for _, _, future in batch:
                future.set_exception(exc)
            return
        for _, _, future in batch:
            future.set_result(None)

    def _write_batch(self, batch: list[_Pending]) -> None:
        data = encode_records(payload for payload, _, _ in batch)
        if self._file is None:
            try:
                self._open_segment(self._segment_seq + 1)
            except OSError as exc:
                raise self._failed(exc, "could not start a new segment") from exc
        elif self._segment_bytes > self.segment_max_bytes:
            try:
                self._open_segment(self._segment_seq + 1)
            except OSError as exc:  # the current segment can still take the batch
                log.warning("wal: could not start a new segment, the current one grows: %s", exc)
        assert self._file is not None
        start = self._segment_bytes
        try:
            faults.write_all("wal.write", self._file, data)
            started = time.perf_counter()
            faults.fdatasync("wal.sync", self._file)
        except OSError as exc:
            self._take_back(start)
            raise self._failed(exc, "the batch was taken back") from exc
        elapsed = time.perf_counter() - started
        self.syncs_total += 1
        self.sync_seconds_total += elapsed
        if self.on_sync is not None:
            self.on_sync(elapsed)
        self._segment_bytes += len(data)

    def _failed(self, exc: OSError, what: str) -> WalWriteError:
        self.write_failures_total += 1
        log.error("wal write failed (%s): %s", what, exc)
        if self.on_write_failure is not None:
            self.on_write_failure(exc)
        reason = exc.strerror or str(exc)
        return WalWriteError(f"wal write failed, the push was not stored: {reason.lower()}")

    def _take_back(self, start: int) -> None:
        """Cut the segment back to ``start``, where the failed batch began.

        When that fails too, the segment is left as it is (its tail is then a torn record
        for replay to cut, or records nobody was told are stored) and the next batch opens
        a new segment.
        """
        assert self._file is not None
        try:
            faults.ftruncate("wal.truncate", self._file, start)
            os.fsync(self._file)
        except OSError as exc:
            log.error(
                "wal segment %d: could not cut a failed batch back (%s); continuing in a "
                "new segment",
                self._segment_seq,
                exc,
            )
            os.close(self._file)
            self._file = None


def _free_name(path: Path) -> Path:
    """``path``, or ``path.1``, ``path.2``, ... whichever does not exist yet."""
    candidate, number = path, 0
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate


def _truncate(path: Path, length: int) -> None:
    with path.open("r+b") as handle:
        handle.truncate(length)
        os.fsync(handle.fileno())


def _write_segment(path: Path, records: list[bytes]) -> None:
    """Write a version 2 segment holding ``records`` durably, replacing ``path``."""
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as handle:
        handle.write(SEGMENT_HEADER)
        handle.write(encode_records(records))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    fsync_directory(path.parent)

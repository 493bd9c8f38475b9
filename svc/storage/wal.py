"""Write-ahead log with group commit.

Records are appended to numbered segment files as ``<u32 length><u32 crc32><payload>``.
One writer thread takes every record queued since its last round, writes them, makes them
durable with a single ``fdatasync`` and only then applies them (to the head) and answers the
waiting pushes: concurrent pushes share one sync, and nothing is acknowledged before it is
on disk. Rotation takes the same lock, so a segment never holds a record that was applied
to the head after the segment was closed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

from svc.errors import ServiceError
from svc.storage.files import fsync_directory

__all__ = ["WalStoppedError", "WriteAheadLog"]

log = logging.getLogger(__name__)

_HEADER = struct.Struct("<II")
_SUFFIX = ".wal"


class WalStoppedError(ServiceError):
    """A write arrived after the WAL was closed."""

    status = 500


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
        self.on_sync: Callable[[float], None] | None = None
        directory.mkdir(parents=True, exist_ok=True)

    def segments(self) -> list[tuple[int, Path]]:
        """Existing segments, oldest first."""
        found = []
        for path in self.directory.glob("*" + _SUFFIX):
            if path.stem.isdigit():
                found.append((int(path.stem), path))
        return sorted(found)

    def replay(self, after_seq: int) -> Iterator[bytes]:
        """Payloads of every intact record in segments newer than ``after_seq``.

        A torn record at the end of a segment (a crash mid-write) is cut off.
        """
        for seq, path in self.segments():
            self._segment_seq = max(self._segment_seq, seq)
            if seq <= after_seq:
                continue
            yield from _read_segment(path)

    def start(self) -> None:
        """Open a fresh segment and start the writer thread."""
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
        has been applied.
        """
        closed = self._segment_seq
        self._open_segment(closed + 1)
        return closed

    def retire(self, up_to_seq: int) -> None:
        """Delete the segments whose records are all durable elsewhere."""
        for seq, path in self.segments():
            if seq <= up_to_seq and seq != self._segment_seq:
                path.unlink(missing_ok=True)

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
        if self._file is not None:
            os.close(self._file)
        path = self.directory / f"{seq:016d}{_SUFFIX}"
        self._file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._segment_seq = seq
        self._segment_bytes = 0
        fsync_directory(self.directory)

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
            log.exception("wal commit failed")
            for _, _, future in batch:
                future.set_exception(exc)
            return
        for _, _, future in batch:
            future.set_result(None)

    def _write_batch(self, batch: list[_Pending]) -> None:
        assert self._file is not None
        if self._segment_bytes > self.segment_max_bytes:
            self._open_segment(self._segment_seq + 1)
        chunks = []
        for payload, _, _ in batch:
            chunks.append(_HEADER.pack(len(payload), zlib.crc32(payload)))
            chunks.append(payload)
        data = b"".join(chunks)
        view = memoryview(data)
        while view:
            written = os.write(self._file, view)
            view = view[written:]
        started = time.perf_counter()
        os.fdatasync(self._file)
        elapsed = time.perf_counter() - started
        self.syncs_total += 1
        self.sync_seconds_total += elapsed
        if self.on_sync is not None:
            self.on_sync(elapsed)
        self._segment_bytes += len(data)


def _read_segment(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    offset = 0
    while offset + _HEADER.size <= len(data):
        length, crc = _HEADER.unpack_from(data, offset)
        start = offset + _HEADER.size
        payload = data[start : start + length]
        if len(payload) != length or zlib.crc32(payload) != crc:
            break
        yield payload
        offset = start + length
    if offset != len(data):
        log.warning("wal segment %s: cutting a torn record at byte %d", path.name, offset)
        with path.open("r+b") as handle:
            handle.truncate(offset)
            os.fsync(handle.fileno())

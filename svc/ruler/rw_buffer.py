"""The remote-write buffer of one tenant: samples on disk until every client has sent them.

Samples are appended as records to numbered segment files under ``<dir>/<tenant>/``;
each record is a serialized ``WriteRequest`` (protobuf messages concatenate, so records
read back to back form one request) behind a header::

    length u32 | crc32 u32 | samples u32 | newest sample ms i64 | WriteRequest bytes

Appends are fsynced before they return: a sample appended is never lost to a restart or a
``kill -9``. Each client keeps its read position (segment, offset) in ``cursor-<id>``,
replaced atomically after each acknowledged send. Segments every client has read are
removed; segments older than ``max_age`` are removed even if unsent. A torn record at the
end of the last segment (a crash mid-append) is cut off when the buffer is opened.
"""

from __future__ import annotations

import json
import logging
import os
import struct
import threading
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from schemas import remote_write_pb2
from svc.ruler.alerting import OutputSample
from svc.storage.files import fsync_directory

__all__ = ["Batch", "Cursor", "TenantBuffer", "encode_samples"]

log = logging.getLogger(__name__)

_HEADER: Final = struct.Struct("<IIIq")
SEGMENT_MAX_BYTES: Final = 8 * 1024 * 1024


def encode_samples(samples: Iterable[OutputSample]) -> tuple[bytes, int, int]:
    """A serialized ``WriteRequest`` of the samples, their count and newest time (ms)."""
    request = remote_write_pb2.WriteRequest()
    count, newest = 0, 0
    for sample in samples:
        series = request.timeseries.add()
        for name, value in sample.labels:
            series.labels.add(name=name, value=value)
        series.samples.add(value=sample.value, timestamp=sample.timestamp_ms)
        count += 1
        newest = max(newest, sample.timestamp_ms)
    return request.SerializeToString(), count, newest


@dataclass(frozen=True, order=True)
class Cursor:
    """A read position: segment number and byte offset in it."""

    segment: int
    offset: int


@dataclass(frozen=True)
class Batch:
    """Records read from a cursor: their bytes (one WriteRequest), samples and end."""

    payload: bytes
    samples: int
    end: Cursor


class TenantBuffer:
    """Append-only segments of one tenant and the read positions of its clients."""

    def __init__(self, directory: Path, clients: Iterable[str], max_age_ms: int) -> None:
        self.directory = directory
        self.max_age_ms = max_age_ms
        self.cond = threading.Condition()
        directory.mkdir(parents=True, exist_ok=True)
        self._segments = self._list_segments()
        if not self._segments:
            self._segments = [0]
        self._repair(self._segments[-1])
        self._cursors = {client: self._load_cursor(client) for client in clients}
        self._file = open(self._segment_path(self._segments[-1]), "ab")  # noqa: SIM115

    def _segment_path(self, number: int) -> Path:
        return self.directory / f"{number:08d}"

    def _list_segments(self) -> list[int]:
        return sorted(int(p.name) for p in self.directory.iterdir() if p.name.isdigit())

    def _repair(self, number: int) -> None:
        path = self._segment_path(number)
        if not path.exists():
            return
        data = path.read_bytes()
        good = 0
        for end, _ in _records(data):
            good = end
        if good < len(data):
            log.warning("remote-write buffer %s: cutting a torn record at %d", path, good)
            with path.open("r+b") as handle:
                handle.truncate(good)
                os.fsync(handle.fileno())

    def _cursor_path(self, client: str) -> Path:
        return self.directory / f"cursor-{client}"

    def _load_cursor(self, client: str) -> Cursor:
        try:
            data = json.loads(self._cursor_path(client).read_text())
            found = Cursor(int(data["segment"]), int(data["offset"]))
        except (OSError, ValueError, KeyError, TypeError):
            return Cursor(self._segments[0], 0)
        return max(found, Cursor(self._segments[0], 0))

    def append(self, samples: list[OutputSample]) -> int:
        """Write the samples durably; wakes the senders. Returns the count written."""
        if not samples:
            return 0
        payload, count, newest = encode_samples(samples)
        record = _HEADER.pack(len(payload), zlib.crc32(payload), count, newest) + payload
        with self.cond:
            if self._file.tell() + len(record) > SEGMENT_MAX_BYTES and self._file.tell() > 0:
                self._rotate()
            self._file.write(record)
            self._file.flush()
            os.fsync(self._file.fileno())
            self.cond.notify_all()
        return count

    def _rotate(self) -> None:
        self._file.close()
        self._segments.append(self._segments[-1] + 1)
        self._file = open(self._segment_path(self._segments[-1]), "ab")  # noqa: SIM115
        fsync_directory(self.directory)

    def read(self, client: str, max_samples: int) -> Batch | None:
        """Records after the client's cursor, up to about ``max_samples``; None when none."""
        with self.cond:
            cursor = self._cursors[client]
            segments = [n for n in self._segments if n >= cursor.segment]
        parts: list[bytes] = []
        samples = 0
        end = cursor
        for number in segments:
            start = cursor.offset if number == cursor.segment else 0
            try:
                handle = self._segment_path(number).open("rb")
            except FileNotFoundError:
                continue
            with handle:
                handle.seek(start)
                for record_end, (count, body) in _read_records(handle, start):
                    if samples and samples + count > max_samples:
                        return Batch(b"".join(parts), samples, end)
                    parts.append(body)
                    samples += count
                    end = Cursor(number, record_end)
            if number != segments[-1]:
                end = max(end, Cursor(number + 1, 0))
        if not parts:
            return None
        return Batch(b"".join(parts), samples, end)

    def pending_samples(self, client: str) -> int:
        """Samples the client has not sent yet (record headers only are read)."""
        with self.cond:
            cursor = self._cursors[client]
            segments = [n for n in self._segments if n >= cursor.segment]
        total = 0
        for number in segments:
            try:
                handle = self._segment_path(number).open("rb")
            except FileNotFoundError:
                continue
            with handle:
                offset = cursor.offset if number == cursor.segment else 0
                while True:
                    handle.seek(offset)
                    header = handle.read(_HEADER.size)
                    if len(header) < _HEADER.size:
                        break
                    length, _, count, _ = _HEADER.unpack(header)
                    total += count
                    offset += _HEADER.size + length
        return total

    def commit(self, client: str, end: Cursor) -> None:
        """Record that the client has sent everything before ``end``."""
        path = self._cursor_path(client)
        temp = path.with_name(f".{path.name}.tmp")
        temp.write_text(json.dumps({"segment": end.segment, "offset": end.offset}))
        os.replace(temp, path)
        with self.cond:
            self._cursors[client] = end

    def truncate(self, now_ms: int) -> None:
        """Remove segments read by every client, and unsent ones older than ``max_age``."""
        with self.cond:
            oldest = min(self._cursors.values(), default=Cursor(self._segments[-1], 0))
            removable = []
            for number in self._segments[:-1]:
                if number < oldest.segment or self._newest_ms(number) < now_ms - self.max_age_ms:
                    removable.append(number)
            for number in removable:
                self._segments.remove(number)
                self._segment_path(number).unlink(missing_ok=True)
            first = Cursor(self._segments[0], 0)
            for client, cursor in self._cursors.items():
                if cursor < first:
                    self._cursors[client] = first

    def _newest_ms(self, number: int) -> int:
        try:
            data = self._segment_path(number).read_bytes()
        except FileNotFoundError:
            return 0
        newest = 0
        offset = 0
        while offset + _HEADER.size <= len(data):
            length, _, _, record_newest = _HEADER.unpack_from(data, offset)
            newest = max(newest, record_newest)
            offset += _HEADER.size + length
        return newest

    def close(self) -> None:
        """Close the open segment."""
        with self.cond:
            self._file.close()


def _read_records(handle: BinaryIO, offset: int) -> Iterator[tuple[int, tuple[int, bytes]]]:
    """:func:`_records` read from a file positioned at ``offset``."""
    while True:
        header = handle.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        length, crc, count, _ = _HEADER.unpack(header)
        body = handle.read(length)
        if len(body) < length or zlib.crc32(body) != crc:
            return
        offset += _HEADER.size + length
        yield offset, (count, body)


def _records(data: bytes, offset: int = 0) -> Iterator[tuple[int, tuple[int, bytes]]]:
    """``(end offset, (samples, WriteRequest bytes))`` of each intact record."""
    while offset + _HEADER.size <= len(data):
        length, crc, count, _ = _HEADER.unpack_from(data, offset)
        body_start = offset + _HEADER.size
        body = data[body_start : body_start + length]
        if len(body) < length or zlib.crc32(body) != crc:
            return
        offset = body_start + length
        yield offset, (count, body)

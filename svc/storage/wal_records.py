"""The on-disk format of WAL segments, and the scan that reads one back.

Version 2 (written since the storage-faults work): a segment starts with the 8-byte
header ``SVCWAL\\0\\2``; each record is ``<magic "\\xc1WAL"><u32 length><u32 crc><payload>``,
little-endian, the CRC-32 covering the length and the payload. The magic makes a damaged
segment readable past the damage: the scan looks for the next magic whose record checks
out. ``\\xc1`` is a byte that neither msgpack (the payload encoding) nor UTF-8 ever emits.

Version 1 (earlier releases): no header, records ``<u32 length><u32 crc><payload>``.
Those segments still replay; they cannot be resynchronised, so a scan stops at the first
bad record.

A scan tells apart a *torn tail*, the normal trace of a crash mid-write (the last record is
a prefix of a record: its header or payload runs past the end of the file, or the tail is
zeros), from *damage*: bytes inside the segment that are not a valid record although more
data follows, or a complete record with a wrong checksum.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["SEGMENT_HEADER", "SegmentScan", "encode_records", "scan_segment"]

SEGMENT_HEADER = b"SVCWAL\x00\x02"
_MAGIC = b"\xc1WAL"
_RECORD = struct.Struct("<4sII")
_LENGTH = struct.Struct("<I")
_V1_RECORD = struct.Struct("<II")


def _crc(length: int, payload: bytes | memoryview) -> int:
    return zlib.crc32(payload, zlib.crc32(_LENGTH.pack(length)))


def encode_records(payloads: Iterable[bytes]) -> bytes:
    """The records of ``payloads``, ready to append to a version 2 segment."""
    chunks = []
    for payload in payloads:
        length = len(payload)
        chunks.append(_RECORD.pack(_MAGIC, length, _crc(length, payload)))
        chunks.append(payload)
    return b"".join(chunks)


@dataclass
class SegmentScan:
    """What a segment holds: its intact records, and where it is torn or damaged."""

    version: int
    records: list[bytes] = field(default_factory=list)
    damaged: list[tuple[int, int]] = field(default_factory=list)
    """Byte ranges ``[start, end)`` skipped because they hold no valid record."""
    torn_at: int | None = None
    """Offset of a torn tail: the segment should end here."""

    @property
    def clean(self) -> bool:
        """Neither torn nor damaged."""
        return not self.damaged and self.torn_at is None


def scan_segment(data: bytes) -> SegmentScan:
    """Read a segment's records, resynchronising past damage where the format allows."""
    if data.startswith(SEGMENT_HEADER):
        return _scan_v2(data, len(SEGMENT_HEADER))
    if len(data) < len(SEGMENT_HEADER) and SEGMENT_HEADER.startswith(data):
        # Empty, or a crash while the header was written.
        return SegmentScan(2, torn_at=0 if data else None)
    old = _scan_v1(data)
    if old.clean:
        return old
    # A version 2 segment whose header is damaged reads as garbage in version 1.
    recovered = _scan_v2(data, 0)
    return recovered if len(recovered.records) > len(old.records) else old


def _header(data: bytes, offset: int) -> tuple[bytes, int, int]:
    """Magic, length and CRC of the version 2 record header at ``offset``."""
    magic, length, crc = _RECORD.unpack_from(data, offset)
    return bytes(magic), int(length), int(crc)


def _v1_length(data: bytes, offset: int) -> int:
    return int(_V1_RECORD.unpack_from(data, offset)[0])


def _record_end(data: bytes, offset: int) -> int | None:
    """End of the valid version 2 record at ``offset``, or None."""
    if offset + _RECORD.size > len(data):
        return None
    magic, length, crc = _header(data, offset)
    start = offset + _RECORD.size
    end = start + length
    if magic != _MAGIC or end > len(data):
        return None
    if _crc(length, memoryview(data)[start:end]) != crc:
        return None
    return end


def _next_record(data: bytes, offset: int) -> int | None:
    """Offset of the next valid version 2 record at or after ``offset``."""
    found = data.find(_MAGIC, offset)
    while found != -1:
        if _record_end(data, found) is not None:
            return found
        found = data.find(_MAGIC, found + 1)
    return None


def _torn_v2(data: bytes, offset: int) -> bool:
    """Whether the bytes from ``offset`` are what a write cut short leaves."""
    rest = data[offset:]
    if not rest.strip(b"\x00"):
        return True
    if len(rest) < _RECORD.size:
        return _MAGIC.startswith(rest[: len(_MAGIC)])
    magic, length, _ = _header(data, offset)
    return magic == _MAGIC and offset + _RECORD.size + length > len(data)


def _scan_v2(data: bytes, offset: int) -> SegmentScan:
    scan = SegmentScan(2)
    while offset < len(data):
        end = _record_end(data, offset)
        if end is not None:
            scan.records.append(data[offset + _RECORD.size : end])
            offset = end
            continue
        resume = _next_record(data, offset + 1)
        if resume is None:
            if _torn_v2(data, offset):
                scan.torn_at = offset
            else:
                scan.damaged.append((offset, len(data)))
            break
        scan.damaged.append((offset, resume))
        offset = resume
    return scan


def _scan_v1(data: bytes) -> SegmentScan:
    scan = SegmentScan(1)
    offset = 0
    while offset + _V1_RECORD.size <= len(data):
        length, crc = _V1_RECORD.unpack_from(data, offset)
        start = offset + _V1_RECORD.size
        payload = data[start : start + length]
        # Version 1 never wrote an empty record: eight zero bytes are not one.
        if not length or len(payload) != length or zlib.crc32(payload) != crc:
            break
        scan.records.append(payload)
        offset = start + length
    if offset == len(data):
        return scan
    if _torn_v1(data, offset):
        scan.torn_at = offset
    else:
        scan.damaged.append((offset, len(data)))
    return scan


def _torn_v1(data: bytes, offset: int) -> bool:
    if offset + _V1_RECORD.size > len(data) or not data[offset:].strip(b"\x00"):
        return True
    return offset + _V1_RECORD.size + _v1_length(data, offset) > len(data)

"""The WAL segment format: torn tails, damage and resynchronisation, version 1 segments."""

from __future__ import annotations

import struct
import zlib

import pytest

from svc.storage.wal_records import SEGMENT_HEADER, encode_records, scan_segment

RECORDS = [f"record {i} ".encode() * (i + 1) for i in range(6)]


def _segment(records: list[bytes] = RECORDS) -> bytes:
    return SEGMENT_HEADER + encode_records(records)


def _offsets(records: list[bytes] = RECORDS) -> list[int]:
    """Where each record starts in ``_segment(records)``."""
    offsets, at = [], len(SEGMENT_HEADER)
    for record in records:
        offsets.append(at)
        at += 12 + len(record)
    return offsets


def _v1(records: list[bytes]) -> bytes:
    return b"".join(struct.pack("<II", len(r), zlib.crc32(r)) + r for r in records)


def _flip(data: bytes, at: int) -> bytes:
    damaged = bytearray(data)
    damaged[at] ^= 0x5A
    return bytes(damaged)


def test_clean_segment_reads_every_record() -> None:
    scan = scan_segment(_segment())
    assert (scan.version, scan.records, scan.clean) == (2, RECORDS, True)


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(1, id="one byte of a header"),
        pytest.param(7, id="most of a header"),
        pytest.param(12, id="a header without payload"),
        pytest.param(20, id="part of a payload"),
    ],
)
def test_a_write_cut_short_is_a_torn_tail(cut: int) -> None:
    data = _segment() + _segment([b"x" * 40])[len(SEGMENT_HEADER) :][:cut]
    scan = scan_segment(data)
    assert scan.records == RECORDS
    assert (scan.torn_at, scan.damaged) == (len(_segment()), [])


def test_zeros_after_the_last_record_are_a_torn_tail() -> None:
    scan = scan_segment(_segment() + bytes(64))
    assert (scan.records, scan.torn_at, scan.damaged) == (RECORDS, len(_segment()), [])


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(0, id="magic"),
        pytest.param(5, id="length"),
        pytest.param(9, id="crc"),
        pytest.param(15, id="payload"),
    ],
)
def test_damage_inside_a_segment_skips_one_record_and_keeps_the_rest(where: int) -> None:
    second = _offsets()[1]
    scan = scan_segment(_flip(_segment(), second + where))
    assert scan.records == [RECORDS[0], *RECORDS[2:]]
    assert scan.damaged == [(second, _offsets()[2])]
    assert scan.torn_at is None


def test_damage_in_the_last_complete_record_is_damage_not_a_torn_tail() -> None:
    last = _offsets()[-1]
    scan = scan_segment(_flip(_segment(), last + 14))
    assert scan.records == RECORDS[:-1]
    assert (scan.damaged, scan.torn_at) == ([(last, len(_segment()))], None)


def test_several_damaged_spans_are_each_skipped() -> None:
    offsets = _offsets()
    data = _flip(_flip(_segment(), offsets[1] + 13), offsets[4] + 13)
    scan = scan_segment(data)
    assert scan.records == [RECORDS[0], RECORDS[2], RECORDS[3], RECORDS[5]]
    assert scan.damaged == [(offsets[1], offsets[2]), (offsets[4], offsets[5])]


def test_a_damaged_header_still_resynchronises() -> None:
    scan = scan_segment(_flip(_segment(), 2))
    assert scan.records == RECORDS
    assert scan.damaged == [(0, len(SEGMENT_HEADER))]


def test_empty_and_half_written_headers_are_empty_segments() -> None:
    assert scan_segment(b"").clean
    half = scan_segment(SEGMENT_HEADER[:5])
    assert (half.records, half.torn_at) == ([], 0)


def test_version_1_segments_still_replay() -> None:
    scan = scan_segment(_v1(RECORDS))
    assert (scan.version, scan.records, scan.clean) == (1, RECORDS, True)


def test_version_1_torn_tail_and_damage() -> None:
    whole = _v1(RECORDS)
    torn = scan_segment(whole + _v1([b"partial record"])[:10])
    assert (torn.records, torn.torn_at) == (RECORDS, len(whole))
    first = len(_v1(RECORDS[:1]))
    damaged = scan_segment(_flip(whole, first + 9))
    assert damaged.records == RECORDS[:1]
    assert damaged.damaged == [(first, len(whole))]

"""The write-ahead log: durability order, torn tails, damage, group commit, rotation, and
what a failed write leaves behind."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from pathlib import Path

import pytest

from svc.storage.wal import WalStoppedError, WalWriteError, WriteAheadLog
from svc.storage.wal_records import SEGMENT_HEADER, encode_records
from tests.svc.storage.conftest import SetFaults


def _wal(tmp_path: Path) -> WriteAheadLog:
    return WriteAheadLog(tmp_path / "wal", segment_max_bytes=1 << 20)


def _replayed(tmp_path: Path) -> list[bytes]:
    return list(_wal(tmp_path).replay(0, bytes))


def _write(wal: WriteAheadLog, *payloads: bytes) -> None:
    for payload in payloads:
        wal.submit(payload, lambda: None).result(5)


def _wal_files(tmp_path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((tmp_path / "wal").glob("*.wal"))}


def test_records_replay_in_order_after_restart(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    applied: list[bytes] = []
    futures = [
        wal.submit(f"r{i}".encode(), lambda i=i: applied.append(f"r{i}".encode()))
        for i in range(20)
    ]
    for future in futures:
        future.result(5)
    wal.stop()
    assert applied == [f"r{i}".encode() for i in range(20)]
    assert _replayed(tmp_path) == applied


def test_torn_tail_is_cut_quietly_and_earlier_records_survive(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    _write(wal, b"complete")
    wal.stop()
    ((_, segment),) = wal.segments()
    intact = segment.read_bytes()
    with segment.open("ab") as handle:
        handle.write(encode_records([b"a record cut short"])[:20])
    replaying = _wal(tmp_path)
    assert list(replaying.replay(0, bytes)) == [b"complete"]
    assert segment.read_bytes() == intact
    assert replaying.corrupt_records_total == 0
    assert not replaying.corrupt_directory.exists()


def test_damage_inside_a_segment_is_skipped_kept_aside_and_counted(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    _write(wal, *[f"record {i}".encode() for i in range(10)])
    wal.stop()
    ((_, segment),) = wal.segments()
    original = segment.read_bytes()
    damaged = bytearray(original)
    damaged[len(original) // 4] ^= 0xFF  # inside the third record
    segment.write_bytes(bytes(damaged))

    replaying = _wal(tmp_path)
    records = list(replaying.replay(0, bytes))
    assert records == [f"record {i}".encode() for i in range(10) if i != 2]
    assert replaying.corrupt_records_total == 1
    (kept,) = replaying.corrupt_directory.iterdir()
    assert kept.read_bytes() == bytes(damaged)  # the evidence, untouched
    # The segment now holds its intact records only: a second replay finds no damage.
    again = _wal(tmp_path)
    assert list(again.replay(0, bytes)) == records
    assert again.corrupt_records_total == 0


def test_undecodable_records_are_skipped_and_kept_aside(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    _write(wal, b"1", b"oops", b"3")
    wal.stop()
    replaying = _wal(tmp_path)
    assert list(replaying.replay(0, int)) == [1, 3]
    assert replaying.corrupt_records_total == 1
    assert len(list(replaying.corrupt_directory.iterdir())) == 1


def test_version_1_segments_replay(tmp_path: Path) -> None:
    legacy = bytes.fromhex("0500000086a61036") + b"hello"  # <len><crc32> "hello"
    (tmp_path / "wal").mkdir()
    (tmp_path / "wal" / f"{3:016d}.wal").write_bytes(legacy)
    wal = _wal(tmp_path)
    assert list(wal.replay(0, bytes)) == [b"hello"]
    wal.start()  # a new segment after the old ones, in the current format
    _write(wal, b"world")
    wal.stop()
    assert [seq for seq, _ in wal.segments()] == [3, 4]
    assert _replayed(tmp_path) == [b"hello", b"world"]


def test_concurrent_records_share_syncs(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    gate = threading.Event()
    # Hold the writer inside the first commit so the others queue up behind it.
    first = wal.submit(b"x", gate.wait)
    futures: list[Future[None]] = [wal.submit(b"y", lambda: None) for _ in range(50)]
    gate.set()
    for future in [first, *futures]:
        future.result(5)
    wal.stop()
    assert wal.syncs_total < 10


def test_rotation_and_retirement(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    _write(wal, b"old")
    with wal.commit_lock:
        closed = wal.rotate_locked()
    _write(wal, b"new")
    wal.retire(closed)
    wal.stop()
    assert _replayed(tmp_path) == [b"new"]
    assert list(_wal(tmp_path).replay(closed + 1, bytes)) == []


def test_segments_are_numbered_past_the_watermark(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start(after_seq=41)
    _write(wal, b"x")
    wal.stop()
    assert [seq for seq, _ in wal.segments()] == [42]


def test_writes_after_stop_fail(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    wal.stop()
    with pytest.raises(WalStoppedError, match="wal is stopped"):
        wal.submit(b"late", lambda: None).result(5)


def test_failed_apply_fails_the_waiters(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()

    def boom() -> None:
        raise OSError("disk on fire")

    with pytest.raises(OSError, match="disk on fire"):
        wal.submit(b"x", boom).result(5)
    wal.stop()


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        pytest.param("wal.write enospc", "no space left on device", id="ENOSPC"),
        pytest.param("wal.write eio", "input/output error", id="EIO"),
        pytest.param("wal.write short", "no space left on device", id="short write"),
        pytest.param("wal.sync eio", "input/output error", id="fsync failure"),
    ],
)
def test_a_failed_write_leaves_the_wal_as_it_was(
    tmp_path: Path, set_faults: SetFaults, fault: str, message: str
) -> None:
    wal = _wal(tmp_path)
    wal.start()
    _write(wal, b"before")
    before = _wal_files(tmp_path)
    set_faults(fault)
    applied: list[bytes] = []
    with pytest.raises(
        WalWriteError, match=f"wal write failed, the push was not stored: {message}"
    ):
        wal.submit(b"lost", lambda: applied.append(b"lost")).result(5)
    assert WalWriteError.status == 503
    assert (applied, _wal_files(tmp_path), wal.write_failures_total) == ([], before, 1)
    set_faults()
    _write(wal, b"after")
    wal.stop()
    assert _replayed(tmp_path) == [b"before", b"after"]


def test_when_the_batch_cannot_be_cut_back_the_wal_moves_to_a_new_segment(
    tmp_path: Path, set_faults: SetFaults
) -> None:
    wal = _wal(tmp_path)
    wal.start()
    _write(wal, b"before")
    set_faults("wal.write short", "wal.truncate eio")
    with pytest.raises(WalWriteError):
        wal.submit(b"a record that is long enough to be cut in half", lambda: None).result(5)
    set_faults()
    _write(wal, b"after")
    wal.stop()
    assert len(wal.segments()) == 2
    replaying = _wal(tmp_path)
    assert list(replaying.replay(0, bytes)) == [b"before", b"after"]
    assert replaying.corrupt_records_total == 0  # the half record is a torn tail


def test_a_new_segment_that_cannot_be_created_changes_nothing(
    tmp_path: Path, set_faults: SetFaults
) -> None:
    wal = _wal(tmp_path)
    wal.start()
    _write(wal, b"before")
    set_faults("wal.open enospc")
    with wal.commit_lock, pytest.raises(OSError, match="No space left"):
        wal.rotate_locked()
    assert [seq for seq, _ in wal.segments()] == [1]
    set_faults()
    _write(wal, b"after")
    wal.stop()
    assert _replayed(tmp_path) == [b"before", b"after"]


def test_segment_header_is_written_first(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    wal.stop()
    ((_, segment),) = wal.segments()
    assert segment.read_bytes() == SEGMENT_HEADER
    assert os.stat(segment).st_size == len(SEGMENT_HEADER)

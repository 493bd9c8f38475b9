"""The write-ahead log: durability order, torn tails, group commit, rotation."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path

import pytest

from svc.storage.wal import WalStoppedError, WriteAheadLog


def _wal(tmp_path: Path) -> WriteAheadLog:
    return WriteAheadLog(tmp_path / "wal", segment_max_bytes=1 << 20)


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
    assert list(_wal(tmp_path).replay(after_seq=0)) == applied


def test_torn_tail_is_cut_and_earlier_records_survive(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    wal.submit(b"complete", lambda: None).result(5)
    wal.stop()
    ((_, segment),) = wal.segments()
    with segment.open("ab") as handle:
        handle.write(b"\x10\x00\x00\x00\x00\x00\x00\x00part")  # header of a 16-byte record, 4 bytes
    assert list(_wal(tmp_path).replay(after_seq=0)) == [b"complete"]
    assert segment.read_bytes().endswith(b"complete")


def test_corrupt_record_is_not_replayed(tmp_path: Path) -> None:
    wal = _wal(tmp_path)
    wal.start()
    wal.submit(b"first", lambda: None).result(5)
    wal.submit(b"second", lambda: None).result(5)
    wal.stop()
    ((_, segment),) = wal.segments()
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0xFF
    segment.write_bytes(bytes(data))
    assert list(_wal(tmp_path).replay(after_seq=0)) == [b"first"]


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
    wal.submit(b"old", lambda: None).result(5)
    with wal.commit_lock:
        closed = wal.rotate_locked()
    wal.submit(b"new", lambda: None).result(5)
    wal.retire(closed)
    wal.stop()
    assert list(_wal(tmp_path).replay(after_seq=0)) == [b"new"]
    assert list(_wal(tmp_path).replay(after_seq=closed + 1)) == []


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

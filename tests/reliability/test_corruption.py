"""Damage found at restart: WAL byte flips and torn tails, damaged, truncated or missing
Parquet files, garbage left by crashes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from tests.e2e.server import Server
from tests.reliability.helpers import (
    BASE,
    WINDOW,
    assert_once,
    line_counts,
    metric,
    push_lines,
)


def _services(srv: Server) -> dict[str, str]:
    text = httpx.get(srv.url + "/services").text
    return dict(line.split(" => ", 1) for line in text.splitlines())


def _pushed_batches(srv: Server, batches: int, size: int = 50) -> list[list[str]]:
    """Push ``batches`` requests (one WAL record each); returns their lines."""
    pushed = []
    with srv.client("t") as client:
        for batch in range(batches):
            lines = [f"b{batch:03d} l{i:03d}" for i in range(size)]
            assert push_lines(client, lines, offset=batch * size).status_code == 204
            pushed.append(lines)
    return pushed


def _segment_with_records(srv: Server) -> Path:
    return max((srv.data_dir / "wal").glob("*.wal"), key=lambda p: p.stat().st_size)


def test_a_flipped_byte_mid_segment_loses_one_record_not_the_rest(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server({"ingester": {"flush_on_shutdown": False}})
    batches = _pushed_batches(srv, 40)
    srv.kill()
    segment = _segment_with_records(srv)
    data = bytearray(segment.read_bytes())
    data[len(data) // 4] ^= 0x01
    damaged = bytes(data)
    segment.write_bytes(damaged)

    srv.start()
    with srv.client("t") as client:
        found = line_counts(client)
    lost = [lines for lines in batches if not any(found[line] for line in lines)]
    assert len(lost) == 1  # the record holding the flipped byte, and only it
    assert_once(found, [line for lines in batches if lines not in lost for line in lines])
    assert metric(srv, "svc_wal_corrupt_records_total") == 1
    (kept,) = (srv.data_dir / "wal" / "corrupt").iterdir()
    assert kept.read_bytes() == damaged
    assert _services(srv)["wal"].startswith("Running (degraded: 1 damaged WAL segment(s) kept in ")
    assert "is damaged" in srv.log_path.read_text()

    srv.kill()
    srv.start()  # the damage was dealt with: not counted again, the evidence stays
    assert metric(srv, "svc_wal_corrupt_records_total") == 0
    assert _services(srv)["wal"].startswith("Running (degraded:")


def test_a_torn_tail_is_cut_quietly(faulty_server: Callable[..., Server]) -> None:
    srv = faulty_server({"ingester": {"flush_on_shutdown": False}})
    batches = _pushed_batches(srv, 5)
    srv.kill()
    segment = _segment_with_records(srv)
    with segment.open("ab") as handle:
        handle.write(b"\xc1WAL\x00\x10\x00\x00")  # a record header whose payload never came
    srv.start()
    with srv.client("t") as client:
        assert_once(line_counts(client), [line for lines in batches for line in lines])
    assert metric(srv, "svc_wal_corrupt_records_total") == 0
    assert _services(srv)["wal"] == "Running"
    assert "cutting a torn record" in srv.log_path.read_text()


def _flushed_files(srv: Server, count: int = 3) -> tuple[list[list[str]], list[Path]]:
    """Flushes of 100 lines each; returns the lines and files, oldest first."""
    pushed, files = [], []
    with srv.client("t") as client:
        for flush in range(count):
            lines = [f"f{flush} l{i:03d}" for i in range(100)]
            assert push_lines(client, lines, offset=flush * 1000).status_code == 204
            assert client.post("/flush").status_code == 204
            pushed.append(lines)
            new = set((srv.data_dir / "lake").rglob("*.parquet")) - set(files)
            files += sorted(new)
    return pushed, files


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _zero_footer(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-200:-8] = bytes(192)
    path.write_bytes(bytes(data))


def test_bad_parquet_files_are_quarantined_at_startup(faulty_server: Callable[..., Server]) -> None:
    srv = faulty_server()
    pushed, files = _flushed_files(srv, 4)
    srv.stop()
    lake = srv.data_dir / "lake"
    relative = [f.relative_to(lake) for f in files]
    _truncate(files[0])
    files[1].unlink()
    _zero_footer(files[2])
    srv.start()
    with srv.client("t") as client:
        assert_once(line_counts(client), pushed[3])
        metric_query = {"query": 'count_over_time({app="r"}[1h])', "step": "1h", **WINDOW}
        assert client.get("/svc/api/v1/query_range", params=metric_query).status_code == 200
    assert metric(srv, "svc_lake_quarantined_files_total") == 3
    kept = srv.data_dir / "quarantine"
    assert sorted(p.relative_to(kept) for p in kept.rglob("*.parquet")) == sorted(
        [relative[0], relative[2]]  # the deleted one has nothing to keep
    )
    assert _services(srv)["store"] == f"Running (degraded: 2 damaged lake file(s) kept in {kept})"
    log = srv.log_path.read_text()
    assert all(f"lake file {path} is unusable" in log for path in relative[:3])


def _damage_data_pages(path: Path) -> None:
    """Garbage over the data pages; size, magic bytes and footer intact: the startup check
    passes, the first read of the rows trips over it."""
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    data[4 : len(data) - footer] = b"\xff" * (len(data) - footer - 4)
    path.write_bytes(bytes(data))


def test_files_found_damaged_by_queries_are_quarantined_and_the_queries_answer(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server()
    pushed, files = _flushed_files(srv, 4)
    srv.stop()
    _damage_data_pages(files[1])
    _damage_data_pages(files[2])
    srv.start()
    assert metric(srv, "svc_lake_quarantined_files_total") == 0
    query = {"query": '{app="r"}', "limit": "1000", **WINDOW}
    # index/stats reads a file only when the range cuts a stream's span in it.
    cut = {"query": '{app="r"}', "start": str(BASE + 1050), "end": str(BASE + 1080)}
    with srv.client("t") as client:
        stats = client.get("/svc/api/v1/index/stats", params=cut)
        first = client.get("/svc/api/v1/query_range", params=query)
        second = client.get("/svc/api/v1/query_range", params=query)
    assert stats.status_code == 200, stats.text
    assert stats.json()["entries"] == 0  # the only file holding them is set aside
    assert first.status_code == 200, first.text
    body = first.json()
    assert list(body) == ["status", "warnings", "data"]
    assert body["warnings"] == [
        "some stored data could not be read and was set aside; the result may be incomplete"
    ]
    lines = sorted(line for s in body["data"]["result"] for _, line in s["values"])
    assert lines == sorted(pushed[0] + pushed[3])
    assert "warnings" not in second.json()  # the files are out of the way now
    assert metric(srv, "svc_lake_quarantined_files_total") == 2
    lake, kept = srv.data_dir / "lake", srv.data_dir / "quarantine"
    assert all((kept / f.relative_to(lake)).exists() for f in files[1:3])


def test_garbage_left_by_crashes_is_swept_at_startup(faulty_server: Callable[..., Server]) -> None:
    srv = faulty_server()
    pushed, files = _flushed_files(srv)
    srv.stop()
    # An unlisted copy of a listed file (a flush that never committed) and a temporary
    # file of a write that never finished: globbing the lake would count both.
    unlisted = files[0].with_name("0" * 32 + ".parquet")
    unlisted.write_bytes(files[0].read_bytes())
    temporary = files[0].with_name("1" * 32 + ".parquet.tmp")
    temporary.write_bytes(b"PAR1 half a file")
    srv.start()
    assert not unlisted.exists() and not temporary.exists()
    assert sorted((srv.data_dir / "lake").rglob("*.parquet*")) == sorted(files)
    with srv.client("t") as client:
        assert_once(line_counts(client), [line for lines in pushed for line in lines])
    log = srv.log_path.read_text()
    assert f"removed lake file {unlisted.relative_to(srv.data_dir / 'lake')}" in log
    assert f"removed lake file {temporary.relative_to(srv.data_dir / 'lake')}" in log

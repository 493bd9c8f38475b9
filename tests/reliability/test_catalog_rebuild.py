"""A lost catalog is rebuilt from the lake, at startup or with ``svc catalog rebuild``, and
the WAL watermark is recovered so that no entry is replayed on top of its file."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from typing import Any

import httpx
import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from schemas.log_rows import LOG_ROW_SCHEMA
from svc.ingest.labels import label_key
from svc.model import PushStream
from svc.storage.store import WalRecord
from svc.storage.streams import stream_id_of
from tests.e2e.clients import push
from tests.e2e.server import Server
from tests.reliability.helpers import BASE, WINDOW, assert_once, line_counts, push_lines

DAY = 86_400 * 10**9


def _delete_catalog(srv: Server) -> None:
    for path in srv.data_dir.glob("catalog.sqlite*"):
        path.unlink()


def _answers(srv: Server, tenant: str) -> dict[str, Any]:
    """What the index and label endpoints say about a tenant."""
    selector = '{app=~".+"}'
    params = {**WINDOW, "query": selector, "match[]": selector}
    with srv.client(tenant) as client:
        answers = {}
        for path in ("labels", "series", "index/stats", "index/volume"):
            response = client.get(f"/svc/api/v1/{path}", params=params)
            assert response.status_code == 200, response.text
            answers[path] = response.json()
        # Volume: the figures, not the timings of its stats.
        answers["index/volume"] = [
            (s["metric"], s["value"][1]) for s in answers["index/volume"]["data"]["result"]
        ]
        return answers


def _push_two_tenants(srv: Server, round_: int) -> list[str]:
    lines = []
    for tenant in ("a", "b"):
        with srv.client(tenant) as client:
            for day in range(2):  # one file per tenant and day
                batch = [f"{tenant} r{round_} d{day} {i}" for i in range(30)]
                entries = [
                    (BASE + day * DAY + round_ * 1000 + i, line) for i, line in enumerate(batch)
                ]
                # a stream per day: a day-old entry would be outside a stream's
                # out-of-order window (max_chunk_age / 2)
                streams = [({"app": "web", "tier": tenant, "day": str(day)}, entries)]
                assert push(client, streams).status_code == 204  # type: ignore[arg-type]
                lines += batch
    return lines


def _all_lines(srv: Server) -> dict[str, int]:
    found: dict[str, int] = {}
    for tenant in ("a", "b"):
        with srv.client(tenant) as client:
            found.update(line_counts(client))
    return found


def test_a_deleted_catalog_is_rebuilt_at_startup(faulty_server: Callable[..., Server]) -> None:
    srv = faulty_server({"ingester": {"flush_on_shutdown": False}})
    lines = []
    for round_ in range(2):
        lines += _push_two_tenants(srv, round_)
        with srv.client("a") as client:
            assert client.post("/flush").status_code == 204
    lines += _push_two_tenants(srv, 2)  # only in the WAL
    before = {tenant: _answers(srv, tenant) for tenant in ("a", "b")}
    srv.kill()
    _delete_catalog(srv)
    srv.start()
    assert_once(_all_lines(srv), lines)  # type: ignore[arg-type]
    assert {tenant: _answers(srv, tenant) for tenant in ("a", "b")} == before
    assert "rebuilt it from the lake: files=8" in srv.log_path.read_text()
    with srv.client("a") as client:
        assert client.post("/flush").status_code == 204  # flushes go on from the watermark
    srv.kill()
    srv.start()
    assert_once(_all_lines(srv), lines)  # type: ignore[arg-type]


def test_a_flush_whose_wal_was_not_retired_yet_is_replayed_not_listed(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server({"ingester": {"flush_on_shutdown": False}})
    wal = srv.data_dir / "wal"
    with srv.client("t") as client:
        first = [f"first {i}" for i in range(50)]
        assert push_lines(client, first).status_code == 204
        snapshot = {p.name: p.read_bytes() for p in wal.glob("*.wal")}
        assert client.post("/flush").status_code == 204  # lists the file, retires the WAL
        second = [f"second {i}" for i in range(50)]
        assert push_lines(client, second, offset=100).status_code == 204
    srv.kill()
    # As if the process had died between the catalog commit and the WAL retirement.
    for name, data in snapshot.items():
        (wal / name).write_bytes(data)
    _delete_catalog(srv)
    srv.start()
    with srv.client("t") as client:
        assert_once(line_counts(client), first + second)
    srv.kill()
    srv.start()  # and once more, now from the rebuilt catalog
    with srv.client("t") as client:
        assert_once(line_counts(client), first + second)


def _rebuild(srv: Server) -> subprocess.CompletedProcess[str]:
    return srv.command("catalog", "rebuild", text=True, timeout=60)


def test_svc_catalog_rebuild(faulty_server: Callable[..., Server]) -> None:
    srv = faulty_server()
    lines = _push_two_tenants(srv, 0)
    with srv.client("a") as client:
        assert client.post("/flush").status_code == 204
    running = _rebuild(srv)
    assert running.returncode == 1
    assert "is in use by another svc process" in running.stderr
    srv.stop()
    done = _rebuild(srv)
    assert done.returncode == 0, done.stderr
    assert "files listed: 4" in done.stdout
    assert "previous catalog kept as: " in done.stdout
    assert len(list(srv.data_dir.glob("catalog.sqlite.replaced-*"))) == 1
    srv.start()
    assert_once(_all_lines(srv), lines)


def test_a_data_directory_of_the_previous_version_still_loads(
    faulty_server: Callable[..., Server],
) -> None:
    """Version 1 WAL segments replay; Parquet files without ``svc.file`` metadata are
    listed again from their rows when the catalog is gone."""
    srv = faulty_server(start=False)
    labels = (("app", "old"),)
    key = label_key(labels)
    day = srv.data_dir / "lake" / "tenant=t" / "day=2023-11-14"
    day.mkdir(parents=True)
    rows = [(BASE + i, f"in parquet {i}") for i in range(10)]
    table = pa.table(
        {
            "ts": [ts for ts, _ in rows],
            "stream_id": [stream_id_of(key)] * len(rows),
            "labels": [list(labels)] * len(rows),
            "line": [line for _, line in rows],
            "metadata": [None] * len(rows),
        },
        schema=LOG_ROW_SCHEMA,
    )
    pq.write_table(table, day / ("a" * 32 + ".parquet"))
    record = msgspec.msgpack.encode(
        WalRecord("t", [PushStream(labels, key, [BASE + 100], ["in the wal"], None)])
    )
    (srv.data_dir / "wal").mkdir(parents=True)
    segment = struct.pack("<II", len(record), zlib.crc32(record)) + record
    (srv.data_dir / "wal" / f"{1:016d}.wal").write_bytes(segment)
    srv.start()
    with srv.client("t") as client:
        found = line_counts(client)
        labels_answer = client.get("/svc/api/v1/labels", params=WINDOW).json()
    assert found == dict.fromkeys([*(line for _, line in rows), "in the wal"], 1)
    assert labels_answer["data"] == ["app"]


def test_rebuild_skips_nothing_it_can_read(faulty_server: Callable[..., Server]) -> None:
    srv = faulty_server()
    lines = _push_two_tenants(srv, 0)
    srv.stop()  # flushes
    files = sorted((srv.data_dir / "lake").rglob("*.parquet"))
    files[0].write_bytes(b"not parquet at all")
    _delete_catalog(srv)
    srv.start()
    with httpx.Client(base_url=srv.url) as client:
        assert "store => Running (degraded: 1 damaged lake file(s)" in client.get("/services").text
    found = _all_lines(srv)
    assert sum(found.values()) == len(lines) - 30  # the 30 entries of the damaged file
    assert_once(found, [line for line in lines if line in found])
    shutil.rmtree(srv.data_dir / "quarantine")
    with httpx.Client(base_url=srv.url) as client:
        assert "store => Running\n" in client.get("/services").text


def _serve_once(srv: Server) -> subprocess.CompletedProcess[str]:
    """Start a second process on the server's config; it should refuse and exit."""
    return subprocess.run(
        [sys.executable, "-m", "svc", f"-config.file={srv.root / 'config.yaml'}"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_an_unreadable_catalog_stops_startup_and_says_how_to_rebuild(
    faulty_server: Callable[..., Server],
) -> None:
    srv = faulty_server()
    lines = _push_two_tenants(srv, 0)
    second = _serve_once(srv)  # while the first one runs
    assert second.returncode == 1
    assert "is in use by another svc process" in second.stderr
    srv.stop()
    _delete_catalog(srv)
    (srv.data_dir / "catalog.sqlite").write_bytes(b"not a database " * 1000)
    refused = _serve_once(srv)
    assert refused.returncode == 1
    assert "is unreadable" in refused.stderr
    assert "run `svc catalog rebuild`" in refused.stderr
    assert _rebuild(srv).returncode == 0
    srv.start()
    assert_once(_all_lines(srv), lines)

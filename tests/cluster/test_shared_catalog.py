"""Several writers and a reader over one PostgreSQL catalog and one S3 bucket: concurrent
flushes never corrupt the catalog, and a writer killed with ``kill -9`` loses no
acknowledged entry: its WAL replays into the shared catalog under its own watermark."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

from examples.cluster.services import PostgresServer, S3Server
from svc.storage.catalog import Catalog, FileEntry, SkipIndexRow
from tests.e2e.clients import now_ns, push, query_range
from tests.e2e.server import Server, merge

SECOND = 1_000_000_000


def _deployment(s3: S3Server, postgres: PostgresServer) -> dict[str, Any]:
    name = f"svc_{uuid.uuid4().hex[:12]}"
    return merge(
        s3.storage_config(s3.bucket(name.replace("_", "-"))),
        {"catalog": {"postgres": {"dsn": postgres.database(name)}}},
    )


def _writer(root: Path, shared: dict[str, Any], name: str) -> Server:
    return Server(root / name, merge(shared, {"ingester": {"lifecycler": {"id": name}}}))


def _lines(server: Server, tenant: str, start: int) -> list[str]:
    data = query_range(
        server.client(tenant), '{app="web"}', start=str(start), end=str(now_ns()), limit="5000"
    )
    return sorted(line for s in data["result"] for _, line in s["values"])


def test_two_writers_flush_at_once_and_a_reader_sees_both(
    s3: S3Server, postgres: PostgresServer, tmp_path: Path
) -> None:
    shared = _deployment(s3, postgres)
    writers = [_writer(tmp_path, shared, f"writer-{n}").start() for n in range(2)]
    reader = Server(tmp_path / "reader", shared).start()
    try:
        start = now_ns() - 600 * SECOND
        rounds = 12

        def work(number: int, server: Server) -> None:
            client = server.client("team-a")
            for batch in range(rounds):
                values = [
                    [str(start + (batch * 20 + i) * 1000 + number), f"w{number} b{batch} i{i}"]
                    for i in range(20)
                ]
                # The same stream from both writers: their flushes upsert the same row.
                assert push(client, [({"app": "web"}, values)]).status_code == 204
                assert client.post("/flush").status_code == 204

        seen: list[list[str]] = []
        done = threading.Event()

        def read() -> None:  # meanwhile: flushes never make an entry show twice or vanish
            while not done.is_set():
                seen.append(_lines(reader, "team-a", start))

        threads = [threading.Thread(target=work, args=(n, w)) for n, w in enumerate(writers)]
        for thread in threads:
            thread.start()
        watcher = threading.Thread(target=read)
        watcher.start()
        for thread in threads:
            thread.join()
        done.set()
        watcher.join()
        assert len(seen) >= 2  # (few under load: each query waits for both writers)
        for earlier, later in itertools.pairwise(seen):
            assert len(later) == len(set(later))
            assert set(earlier) <= set(later)
        assert "members => Running" in writers[0].client().get("/services").text
        ring = reader.client().get("/ring").text  # every live writer, from the catalog
        assert "writer-0" in ring and "writer-1" in ring
        expected = sorted(
            f"w{n} b{b} i{i}" for n in range(2) for b in range(rounds) for i in range(20)
        )
        assert _lines(reader, "team-a", start) == expected
        with psycopg.connect(shared["catalog"]["postgres"]["dsn"]) as db:
            files = db.execute("SELECT count(*), sum(rows) FROM files").fetchone()
            marks = dict(
                db.execute(
                    "SELECT name, value FROM state WHERE name LIKE 'flushed_wal_seq:%'"
                ).fetchall()
            )
            streams = db.execute("SELECT count(*) FROM streams").fetchone()
        assert files == (2 * rounds, 2 * rounds * 20)
        assert set(marks) == {"flushed_wal_seq:writer-0", "flushed_wal_seq:writer-1"}
        assert streams == (1,)
    finally:
        for server in [*writers, reader]:
            server.stop()


def test_a_killed_writer_replays_its_wal_into_the_shared_catalog(
    s3: S3Server, postgres: PostgresServer, tmp_path: Path
) -> None:
    shared = _deployment(s3, postgres)
    writer = _writer(tmp_path, shared, "writer-a").start()
    other = _writer(tmp_path, shared, "writer-b").start()
    reader = Server(tmp_path / "reader", shared).start()
    try:
        start = now_ns() - 600 * SECOND
        client = writer.client("team-a")
        flushed = [[str(start + i * SECOND), f"flushed {i}"] for i in range(10)]
        assert push(client, [({"app": "web"}, flushed)]).status_code == 204
        assert client.post("/flush").status_code == 204
        # The other writer flushes too: its watermark must not stand for writer-a's.
        theirs = [[str(start + i * SECOND + 1), f"other {i}"] for i in range(5)]
        assert push(other.client("team-a"), [({"app": "web"}, theirs)]).status_code == 204
        assert other.client().post("/flush").status_code == 204
        pending = [[str(start + (100 + i) * SECOND), f"pending {i}"] for i in range(10)]
        assert push(client, [({"app": "web"}, pending)]).status_code == 204
        everything = sorted(
            [f"flushed {i}" for i in range(10)]
            + [f"other {i}" for i in range(5)]
            + [f"pending {i}" for i in range(10)]
        )
        # The reader asks the live writers for their unflushed entries.
        assert _lines(reader, "team-a", start) == everything
        writer.kill()  # acknowledged, never flushed: only in writer-a's WAL
        # A writer that is gone is left out (its entries come back with it).
        assert len(_lines(reader, "team-a", start)) == 15
        writer.start()  # replays its WAL above its own watermark
        assert _lines(reader, "team-a", start) == everything
        assert writer.client().post("/flush").status_code == 204
        assert _lines(reader, "team-a", start) == everything
        with psycopg.connect(shared["catalog"]["postgres"]["dsn"]) as db:
            rows = db.execute("SELECT sum(rows) FROM files").fetchone()
        assert rows == (25,)
    finally:
        for server in (writer, other, reader):
            if server.process is not None:
                server.stop()


def _wait_for_log(server: Server, text: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while text not in server.log_path.read_text():
        assert time.monotonic() < deadline, f"{text!r} not logged:\n{server.log_path.read_text()}"
        time.sleep(0.1)


def test_one_compactor_runs_at_a_time(
    s3: S3Server, postgres: PostgresServer, tmp_path: Path
) -> None:
    shared = merge(
        _deployment(s3, postgres),
        {"target": "compactor", "compactor": {"compaction_interval": "200ms"}},
    )
    first = _writer(tmp_path, shared, "compactor-a").start()
    second = _writer(tmp_path, shared, "compactor-b").start()
    waiting = "another instance's compactor holds the compactor lock: waiting"
    try:
        deadline = time.monotonic() + 30
        while not any(waiting in s.log_path.read_text() for s in (first, second)):
            assert time.monotonic() < deadline, "no compactor waited for the lock"
            time.sleep(0.1)
        time.sleep(1)  # several more rounds: still one of them waiting, the other working
        logs = [s.log_path.read_text() for s in (first, second)]
        assert sum(waiting in log for log in logs) == 1
        holder, waiter = (first, second) if waiting in logs[1] else (second, first)
        holder.stop()  # its session ends: PostgreSQL releases the lock
        _wait_for_log(waiter, "took the compactor lock")
    finally:
        for server in (first, second):
            if server.process is not None:
                server.stop()


def test_skipping_indexes_are_listed_with_their_files_in_postgresql(
    postgres: PostgresServer,
) -> None:
    catalog = Catalog.postgres(postgres.database(f"svc_{uuid.uuid4().hex[:12]}"), "w")
    try:
        entry = FileEntry("tenant=t/day=2026-01-01/a.parquet", "t", "2026-01-01", 1, 2, 3, 4, 5, 1)
        assert not catalog.list_skip_index(SkipIndexRow(entry.path, 10, 1 << 31))  # unlisted
        catalog.commit_flush([entry], [], 1)
        assert catalog.list_skip_index(SkipIndexRow(entry.path, 10, 1 << 31))
        assert catalog.list_skip_index(SkipIndexRow(entry.path, 12, 7))  # rebuilt: replaced
        assert catalog.skip_indexes([entry.path, "other"]) == {
            entry.path: SkipIndexRow(entry.path, 12, 7)
        }
        catalog.replace_files([entry.path], [])
        assert catalog.skip_indexes([entry.path]) == {}
    finally:
        catalog.close()

"""Orphaned lake files (published, never listed) are removed by the compactor once older
than ``compactor.orphan_grace_period``, in a bucket and in a local lake alike; files a
commit listed and replaced files still kept for their readers stay. Faults are injected
with ``SVC_FAULT_INJECTION``: a writer killed between its upload and its catalog commit,
a compactor killed after writing its output."""

from __future__ import annotations

import contextlib
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import psycopg

from examples.cluster.services import PostgresServer, S3Server
from svc.storage.faults import ENV_VAR
from svc.storage.objects import S3Lake
from tests.e2e.clients import now_ns, push, query_range, stream_values
from tests.e2e.server import Server, merge

SECOND = 1_000_000_000
REMOVED = "removed orphaned lake file"
SWEEP = {"compaction_interval": "200ms", "orphan_grace_period": "1s"}


def _faulty(root: Path, overrides: dict[str, Any]) -> Server:
    server = Server(root, overrides)
    server.env[ENV_VAR] = str(root / "faults.txt")
    return server


def _faults(server: Server, *lines: str) -> None:
    server.root.mkdir(parents=True, exist_ok=True)
    (server.root / "faults.txt").write_text("".join(f"{line}\n" for line in lines))


def _wait(check: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _died(server: Server) -> None:
    assert server.process is not None
    server.process.wait(20)
    server.process = None


def _push(server: Server, start: int, label: str, count: int = 10) -> None:
    values = [[str(start + i * SECOND), f"{label} {i}"] for i in range(count)]
    with server.client("team-a") as client:
        assert push(client, [({"app": "web"}, values)]).status_code == 204


def _lines(server: Server, start: int) -> list[str]:
    with server.client("team-a") as client:
        data = query_range(client, '{app="web"}', start=str(start), end=str(now_ns()), limit="1000")
    return sorted(line for _, rows in stream_values(data) for _, line in rows)


def test_an_upload_whose_writer_died_before_the_commit_is_swept_from_the_bucket(
    s3: S3Server, tmp_path: Path
) -> None:
    bucket = s3.bucket(f"svc-{uuid.uuid4().hex[:12]}")
    config = merge(s3.storage_config(bucket), {"compactor": {**SWEEP, "compaction_min_files": 100}})
    server = _faulty(tmp_path / "svc", config).start()
    lake = S3Lake(
        s3.lake_settings(bucket),
        tmp_path / "unused",
    )
    start = now_ns() - 600 * SECOND
    try:
        _push(server, start, "first")
        with server.client() as client:
            assert client.post("/flush").status_code == 204
        [listed] = lake.files()
        _push(server, start + 100 * SECOND, "second")
        _faults(server, "catalog.commit kill 1")  # uploaded, then killed inside the commit
        # (the connection dies with the process)
        with server.client() as client, contextlib.suppress(httpx.HTTPError):
            client.post("/flush")
        _died(server)
        [orphan] = [path for path in lake.files() if path != listed]
        _faults(server)
        server.start()  # the second batch replays from the WAL
        _wait(lambda: lake.files() == [listed], "the sweep of the orphaned object")
        assert f"{REMOVED} {orphan}" in server.log_path.read_text()
        with server.client() as client:
            assert client.post("/flush").status_code == 204
        assert _lines(server, start) == sorted(
            [f"first {i}" for i in range(10)] + [f"second {i}" for i in range(10)]
        )
    finally:
        if server.process is not None:
            server.stop()


def test_a_compaction_output_orphaned_by_a_crash_is_swept_from_a_local_lake(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    # A local lake with a shared catalog: no startup sweep there (another writer's files
    # may be about to be listed), only the compactor's.
    dsn = postgres.database(f"svc_{uuid.uuid4().hex[:12]}")
    config = {
        "catalog": {"postgres": {"dsn": dsn}},
        "compactor": {**SWEEP, "compaction_min_files": 2},
    }
    server = _faulty(tmp_path / "svc", config)
    _faults(server, "compactor.written kill 1")  # the output is written, never swapped in
    server.start()
    lake = server.data_dir / "lake"
    start = now_ns() - 600 * SECOND
    try:
        for batch in ("a", "b"):
            _push(server, start, batch)
            with server.client() as client:
                assert client.post("/flush").status_code == 204
        _died(server)
        [orphan] = [p.relative_to(lake) for p in lake.rglob("compacted-*.parquet")]
        _faults(server)
        server.start()

        def listed() -> set[str]:
            with psycopg.connect(dsn) as db:
                return {row[0] for row in db.execute("SELECT path FROM files")}

        _wait(lambda: not (lake / orphan).exists(), "the sweep of the orphaned output")
        assert f"{REMOVED} {orphan}" in server.log_path.read_text()
        [compacted] = listed()
        assert compacted != str(orphan) and compacted.split("/")[-1].startswith("compacted-")
        # The two replaced inputs are unlisted, but kept for readers: never taken for orphans.
        on_disk = {str(p.relative_to(lake)) for p in lake.rglob("*.parquet")}
        assert len(on_disk) == 3 and compacted in on_disk
        assert _lines(server, start) == sorted(f"{b} {i}" for b in "ab" for i in range(10))
    finally:
        if server.process is not None:
            server.stop()

"""The lake in an S3 bucket: publication is atomic, DuckDB and pyarrow read the objects,
and a server flushes, queries, restarts and compacts over it."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import duckdb
import hypothesis
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import strategies as st

from examples.cluster.services import ACCESS_KEY, SECRET_KEY, S3Server
from logql_to_sql import parse
from svc.__main__ import load_config
from svc.config import LOCAL_STORAGE_ONLY, ConfigError
from svc.query.engine import QueryEngine
from svc.storage.lake_check import check_file
from svc.storage.lake_urls import read_metadata
from svc.storage.objects import S3Lake, S3Settings
from svc.storage.skip_index import sidecar_relative
from svc.storage.store import StoreView
from tests.e2e.clients import now_ns, push, query_range, stream_values
from tests.e2e.server import Server
from tests.stores import open_store
from tests.svc.query.test_skip_index import (
    START,
    TENANT,
    both_answers,
    fill_lake,
    needle_queries,
)

SECOND = 1_000_000_000


def _lake(s3: S3Server, tmp_path: Path, *, create: bool = True) -> S3Lake:
    bucket = f"lake-{uuid.uuid4().hex[:12]}"
    if create:
        s3.bucket(bucket)
    settings = S3Settings(
        bucket=bucket,
        endpoint=f"http://{s3.endpoint}",
        region="us-east-1",
        access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY,
        force_path_style=True,
    )
    return S3Lake(settings, tmp_path / "staging")


def _parquet(path: Path, rows: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"n": pa.array(range(rows), pa.int64())}), path)
    return path


def test_published_objects_are_listed_read_and_removed(s3: S3Server, tmp_path: Path) -> None:
    lake = _lake(s3, tmp_path)
    relative = "tenant=a/day=2026-01-01/one.parquet"
    temporary = _parquet(lake.staging / (relative + ".tmp"), 1000)
    size = lake.publish(temporary, relative)
    assert not temporary.exists()
    assert lake.files() == [relative]
    assert lake.size(relative) == size
    assert check_file(lake.url(relative), size) is None
    assert check_file(lake.url(relative), size + 1) is not None
    assert read_metadata(lake.url(relative)).num_rows == 1000
    db = duckdb.connect()
    lake.register(db)
    url = lake.url(relative)
    assert db.execute(f"SELECT sum(n) FROM read_parquet(['{url}'])").fetchone() == (499500,)
    moved = lake.set_aside(relative, tmp_path / "quarantine")
    assert moved is not None and moved.endswith("/quarantine/" + relative)
    assert lake.files() == []
    assert check_file(lake.url(relative), None) == "missing"
    lake.remove(relative)  # a missing object is no error


def test_an_upload_appears_whole_or_not_at_all(s3: S3Server, tmp_path: Path) -> None:
    """A reader polling during a multipart upload never sees a partial object."""
    lake = _lake(s3, tmp_path)
    relative = "tenant=a/day=2026-01-01/big.parquet"
    temporary = _parquet(lake.staging / "big.tmp", 3_000_000)  # ~12 MB: a multipart upload
    expected = temporary.stat().st_size
    seen: list[int | None] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            seen.append(lake.size(relative))

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        lake.publish(temporary, relative)
    finally:
        done.set()
        poller.join()
    assert None in seen
    assert set(seen) <= {None, expected}
    assert lake.size(relative) == expected


def test_a_failed_upload_leaves_nothing(s3: S3Server, tmp_path: Path) -> None:
    lake = _lake(s3, tmp_path, create=False)  # no such bucket: the PUT fails
    temporary = _parquet(lake.staging / "x.tmp", 10)
    with pytest.raises(OSError):
        lake.publish(temporary, "tenant=a/day=2026-01-01/x.parquet")
    assert not temporary.exists()
    s3.bucket(lake.settings.bucket)
    assert lake.files() == []


def _objects(s3: S3Server, bucket: str) -> list[str]:
    lake = S3Lake(
        s3.lake_settings(bucket),
        Path("/nonexistent"),
    )
    return lake.files()


def test_a_server_flushes_queries_and_compacts_over_the_bucket(
    s3: S3Server, tmp_path: Path
) -> None:
    bucket = s3.bucket(f"svc-{uuid.uuid4().hex[:12]}")
    overrides = s3.storage_config(bucket) | {
        "compactor": {"compaction_interval": "200ms", "compaction_min_files": 2},
    }
    server = Server(tmp_path / "svc", overrides).start()
    try:
        client = server.client("team-a")
        start = now_ns() - 60 * SECOND
        for batch in range(3):
            values = [
                [str(start + (batch * 10 + i) * SECOND), f"line {batch}-{i}"] for i in range(10)
            ]
            assert push(client, [({"app": "web"}, values)]).status_code == 204
            if batch < 2:
                assert client.post("/flush").status_code == 204
        # The third batch stays in memory: a query merges the bucket's files and the head.
        data = query_range(client, '{app="web"}', start=str(start), end=str(now_ns()), limit="100")
        [(labels, rows)] = stream_values(data)
        assert labels == {"app": "web"} and len(rows) == 30
        assert not list((server.data_dir / "lake").rglob("*.parquet"))  # nothing local
        sql = client.get("/svc/api/v1/sql", params={"query": "SELECT count(*) FROM logs"})
        assert sql.status_code == 400
        assert sql.text.startswith("ad hoc SQL reads a local lake only")
        # The compactor merges the two flushed objects into one, and the answer stays.
        deadline = time.monotonic() + 30
        while len(_objects(s3, bucket)) != 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        [only] = _objects(s3, bucket)
        assert only.split("/")[-1].startswith("compacted-")
        server.restart()
        again = query_range(client, '{app="web"}', start=str(start), end=str(now_ns()), limit="100")
        assert stream_values(again) == stream_values(data)
        metric = client.get(
            "/svc/api/v1/query", params={"query": 'sum(count_over_time({app="web"}[1h]))'}
        ).json()
        assert metric["data"]["result"][0]["value"][1] == "30"
    finally:
        server.stop()


def test_an_s3_period_without_a_bucket_does_not_start(s3: S3Server, tmp_path: Path) -> None:
    overrides = s3.storage_config("")
    server = Server(tmp_path / "svc", overrides)
    with pytest.raises(RuntimeError, match="error: at least one bucket name must be specified"):
        server.start()


def test_backfills_refuse_shared_storage(s3: S3Server, tmp_path: Path) -> None:
    document = s3.storage_config("lake") | {"backfill": {"enabled": True}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(ConfigError) as raised:
        load_config({"config.file": str(path)})
    assert raised.value.errors == [f"backfill.enabled: {LOCAL_STORAGE_ONLY}"]
    path.write_text(yaml.safe_dump(s3.storage_config("lake")))  # the command, not the API
    done = subprocess.run(
        [sys.executable, "-m", "svc", "backfill", f"-config.file={path}", "-tenant=t",
         str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (1, f"error: {LOCAL_STORAGE_ONLY}\n")


def test_the_skipping_index_serves_a_lake_in_the_bucket(s3: S3Server, tmp_path: Path) -> None:
    """Sidecars are objects next to their files, listed in the catalog, read through the
    lake, removed with their file; indexed answers equal full scans."""
    settings = _lake(s3, tmp_path).settings
    with open_store(tmp_path / "data", object_store=settings) as store:
        stored, end = fill_lake(store, 1)
        files = store.catalog.all_files()
        listed = store.catalog.skip_indexes(f.path for f in files)
        assert len(files) >= 2 and set(listed) == {f.path for f in files}
        for entry in files:
            assert store.lake.size(sidecar_relative(entry.path)) == listed[entry.path].nbytes
        assert not [p for p in (tmp_path / "data").rglob("*.skip*") if p.is_file()]
        engine = QueryEngine(store, timeout_seconds=60)
        try:
            trace = next(x for x in reversed(stored) if "trace_id" in x).split('"trace_id": "')[1]
            narrowed = engine.view((TENANT,), START, end, parse(f'{{app=~".+"}} |= "{trace[:16]}"'))
            assert isinstance(narrowed, StoreView)
            assert narrowed.row_ranges or len(narrowed.files) < len(files)
            del narrowed  # its lease would keep the files

            @hypothesis.settings(max_examples=12, deadline=None, derandomize=True)
            @hypothesis.given(data=st.data())
            def indexed_equal_scanned(data: st.DataObject) -> None:
                query = data.draw(needle_queries(stored))
                indexed, scanned = both_answers(engine, query, end)
                assert indexed == scanned, query

            indexed_equal_scanned()
        finally:
            engine.close()
        gone = files[0]
        store.swap_files([gone], [], [])
        gc.collect()
        assert gone.path in store.remove_retired()
        assert store.lake.size(sidecar_relative(gone.path)) is None
        assert not store.catalog.skip_indexes([gone.path])

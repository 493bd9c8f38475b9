"""Rule groups, delete requests and ``svc catalog rebuild`` with the lake in S3 (moto on
loopback, a real server over HTTP): rules are objects in the bucket, delete requests are
copied there, and a catalog lost with its data directory comes back from the bucket."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import pyarrow.fs as pafs
import yaml

from examples.cluster.services import S3Server
from svc.storage.objects import s3_filesystem
from tests.e2e.clients import now_ns, push, query_range, stream_values
from tests.e2e.server import Server, merge

SECOND = 1_000_000_000

GROUP = """
name: errors
interval: 1m
rules:
  - record: app:errors:rate1m
    expr: sum by (app) (rate({app="web"} |= "error" [1m]))
"""


def _keys(s3: S3Server, bucket: str, under: str) -> list[str]:
    filesystem = s3_filesystem(s3.lake_settings(bucket))
    selector = pafs.FileSelector(f"{bucket}/{under}", recursive=True, allow_not_found=True)
    return sorted(
        info.path[len(bucket) + 1 :]
        for info in filesystem.get_file_info(selector)
        if info.type == pafs.FileType.File
    )


def _b64(name: str) -> str:
    return base64.urlsafe_b64encode(name.encode()).decode()


def _lines(server: Server, start: int) -> list[str]:
    with server.client("team-a") as client:
        data = query_range(client, '{app="web"}', start=str(start), end=str(now_ns()))
    return sorted(line for _, rows in stream_values(data) for _, line in rows)


def test_rules_deletes_and_the_catalog_live_in_the_bucket(s3: S3Server, tmp_path: Path) -> None:
    bucket = s3.bucket(f"svc-{uuid.uuid4().hex[:12]}")
    config = merge(
        s3.storage_config(bucket),
        {"compactor": {"retention_enabled": True, "delete_request_store": "s3"}},
    )
    server = Server(tmp_path / "first", config).start()
    start = now_ns() - 3600 * SECOND
    try:
        with server.client("team-a") as client:
            # Rules: one object per group under rules/<tenant>/<b64 namespace>/<b64 group>.
            posted = client.post("/loki/api/v1/rules/my%20ns", content=GROUP)
            assert posted.status_code == 202, posted.text
            assert _keys(s3, bucket, "rules") == [f"rules/team-a/{_b64('my ns')}/{_b64('errors')}"]
            listed = client.get("/loki/api/v1/rules")
            assert listed.status_code == 200
            assert yaml.safe_load(listed.text)["my ns"][0]["name"] == "errors"
            missing = client.get("/loki/api/v1/rules/my%20ns/nope")
            assert (missing.status_code, missing.text.strip()) == (
                404,
                'get rule group user="", namespace="", name="": group does not exist',
            )
            gone = client.delete("/loki/api/v1/rules/unknown")
            assert (gone.status_code, gone.text.strip()) == (404, "group namespace does not exist")
            assert client.post("/loki/api/v1/rules/other", content=GROUP).status_code == 202
            assert client.delete("/loki/api/v1/rules/other").status_code == 202
            assert len(_keys(s3, bucket, "rules")) == 1
            # Entries in the bucket, and a delete request copied there.
            values = [
                [str(start + i * SECOND), f"line {i} {'secret' if i % 2 else 'kept'}"]
                for i in range(6)
            ]
            assert push(client, [({"app": "web"}, values)]).status_code == 204
            assert client.post("/flush").status_code == 204
            deleted = client.post(
                "/loki/api/v1/delete",
                params={"query": '{app="web"} |= "secret"', "start": str(start // SECOND - 1)},
            )
            assert deleted.status_code == 204, deleted.text
            requests = client.get("/loki/api/v1/delete").json()
        assert _keys(s3, bucket, "index") == ["index/delete_requests/delete_requests.json"]
        kept = ["line 0 kept", "line 2 kept", "line 4 kept"]
        assert _lines(server, start) == kept
    finally:
        server.stop()
    # The data directory's catalog is lost: `svc catalog rebuild` lists the bucket's files.
    for path in server.data_dir.glob("catalog.sqlite*"):
        path.unlink()
    done = server.command("catalog", "rebuild", text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"lake: s3://{bucket}/" in done.stdout
    assert "files listed: 1" in done.stdout
    server.start()
    try:
        with server.client("team-a") as client:
            # The delete requests come back from their copy: deleted entries stay deleted.
            assert client.get("/loki/api/v1/delete").json() == requests
            assert _lines(server, start) == kept
    finally:
        server.stop()
    # Another data directory over the same bucket: its empty catalog is rebuilt at start,
    # and the rule groups are the bucket's.
    second = Server(tmp_path / "second", config).start()
    try:
        assert _lines(second, start) == kept
        with second.client("team-a") as client:
            listed = client.get("/loki/api/v1/rules/my%20ns/errors")
        assert listed.status_code == 200, listed.text
        assert yaml.safe_load(listed.text)["rules"][0]["record"] == "app:errors:rate1m"
    finally:
        second.stop()


def test_a_shared_catalog_is_not_rebuilt_from_the_lake(s3: S3Server, tmp_path: Path) -> None:
    config = merge(
        s3.storage_config("unused"), {"catalog": {"postgres": {"dsn": "host=127.0.0.1"}}}
    )
    server = Server(tmp_path / "svc", config)
    server.root.mkdir(parents=True)
    (server.root / "config.yaml").write_text(yaml.safe_dump(server.config()))
    done = server.command("catalog", "rebuild", text=True, timeout=60)
    assert done.returncode == 1
    assert "a shared catalog (catalog.postgres.dsn)" in done.stderr

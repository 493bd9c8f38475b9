"""``svc backfill`` next to a running server: old entries become visible without a
restart, tenants stay apart, and a kill -9 mid-backfill lists nothing."""

from __future__ import annotations

import gzip
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from svc.storage.catalog import CATALOG_FILENAME, Catalog
from svc.storage.faults import ENV_VAR
from tests.e2e.clients import push, query_range, stream_values
from tests.e2e.server import Server

NS = 1_000_000_000
DAY = 86_400 * NS


def run_backfill(
    srv: Server, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``svc backfill`` on the server's data directory (its config file)."""
    return srv.command("backfill", args=args, stdin=stdin, env=env)


def year_old_lines(count: int, start: int) -> str:
    return "".join(
        json.dumps({"ts": start + i * NS, "app": f"app{i % 2}", "msg": f"old entry {i}"}) + "\n"
        for i in range(count)
    )


def window(start: int) -> dict[str, str]:
    return {"start": str(start - DAY), "end": str(start + DAY), "limit": "5000"}


def listed_rows(srv: Server, tenant: str) -> int:
    catalog = Catalog(srv.data_dir / CATALOG_FILENAME)
    try:
        return sum(f.rows for f in catalog.all_files() if f.tenant == tenant)
    finally:
        catalog.close()


def test_year_old_backfill_is_visible_to_a_running_server(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    srv = make_server()
    start = time.time_ns() - 365 * DAY
    source = tmp_path / "old.jsonl"
    source.write_text(year_old_lines(100, start))
    with srv.client("team-a") as client:
        # The server knows the tenant already (a fresh push), so its stream index is warm.
        assert push(client, [({"app": "new"}, [(time.time_ns(), "fresh")])]).status_code == 204
        done = run_backfill(
            srv, "-tenant=team-a", '-labels={job="migrated"}', "-label-fields=app", str(source)
        )
        assert done.returncode == 0, done.stderr.decode()
        assert b"entries: 100" in done.stdout

        data = query_range(client, '{job="migrated", app="app1"} |= "old entry"', **window(start))
        ((labels, values),) = stream_values(data)
        assert labels == {"app": "app1", "job": "migrated"}
        assert len(values) == 50
        first = json.dumps({"ts": start + NS, "app": "app1", "msg": "old entry 1"})
        assert values[-1] == [str(start + NS), first]  # the JSON line is kept whole
        params = {**window(start), "query": '{job="migrated"}'}
        names = client.get("/svc/api/v1/labels", params=window(start)).json()["data"]
        assert "job" in names
        values_job = client.get("/svc/api/v1/label/job/values", params=window(start)).json()
        assert values_job["data"] == ["migrated"]
        series = client.get(
            "/svc/api/v1/series", params={**window(start), "match[]": '{job="migrated"}'}
        ).json()["data"]
        assert sorted(s["app"] for s in series) == ["app0", "app1"]
        stats = client.get("/svc/api/v1/index/stats", params=params).json()
        assert (stats["streams"], stats["entries"]) == (2, 100)
        volume = client.get(
            "/svc/api/v1/index/volume", params={**params, "query": '{job="migrated"}'}
        ).json()["data"]["result"]
        line_bytes = sum(len(line) for line in source.read_text().splitlines())
        assert [v["metric"] for v in volume] == [{"job": "migrated"}]
        assert int(volume[0]["value"][1]) == line_bytes

    with srv.client("team-b") as other:
        data = query_range(other, '{job="migrated"}', **window(start))
        assert data["result"] == []

    rerun = run_backfill(
        srv, "-tenant=team-a", '-labels={job="migrated"}', "-label-fields=app", str(source)
    )
    assert rerun.returncode == 0 and b"already imported 1" in rerun.stdout
    assert listed_rows(srv, "team-a") == 100  # the fresh push is still in the head


@pytest.mark.parametrize(
    "fault",
    [
        "lake.sync kill 1",  # while writing the first staged file
        "catalog.commit kill 1",  # files moved into the lake, transaction not committed
    ],
)
def test_kill_9_mid_backfill_lists_nothing_and_a_rerun_completes(
    make_server: Callable[..., Server], tmp_path: Path, fault: str
) -> None:
    srv = make_server()
    start = time.time_ns() - 30 * DAY
    source = tmp_path / "old.jsonl"
    source.write_text(year_old_lines(500, start) + year_old_lines(500, start + DAY))
    faults = tmp_path / "faults"
    faults.write_text(fault + "\n")
    killed = run_backfill(
        srv, "-tenant=t", "-label-fields=app", str(source), env={ENV_VAR: str(faults)}
    )
    assert killed.returncode == -9, killed.stderr.decode()
    assert listed_rows(srv, "t") == 0
    with srv.client("t") as client:
        assert query_range(client, '{app=~".+"}', **window(start))["result"] == []

    done = run_backfill(srv, "-tenant=t", "-label-fields=app", str(source))
    assert done.returncode == 0, done.stderr.decode()
    assert listed_rows(srv, "t") == 1000
    lake = srv.data_dir / "lake"
    catalog = Catalog(srv.data_dir / CATALOG_FILENAME)
    try:
        listed = {f.path for f in catalog.all_files()}
    finally:
        catalog.close()
    assert {str(p.relative_to(lake)) for p in lake.rglob("*.parquet")} == listed
    assert not any((srv.data_dir / "backfill-staging").iterdir())
    with srv.client("t") as client:
        data = query_range(client, '{app=~".+"}', **window(start))
        assert sum(len(v) for _, v in stream_values(data)) == 500


def listed_paths(srv: Server) -> list[str]:
    catalog = Catalog(srv.data_dir / CATALOG_FILENAME)
    try:
        return sorted(f.path for f in catalog.all_files())
    finally:
        catalog.close()


def test_a_rebuilt_catalog_remembers_inputs_whose_files_were_compacted(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    srv = make_server({"compactor": {"compaction_interval": "300ms"}})
    start = time.time_ns() - 30 * DAY
    sources = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    sources[0].write_text(year_old_lines(50, start))
    sources[1].write_text(year_old_lines(50, start + 100 * NS))
    paths = [str(p) for p in sources]
    done = run_backfill(srv, "-tenant=t", "-label-fields=app", *paths)
    assert done.returncode == 0, done.stderr.decode()
    deadline = time.monotonic() + 30
    while not all("compacted-" in p for p in listed_paths(srv)):
        assert time.monotonic() < deadline, listed_paths(srv)
        time.sleep(0.1)
    assert len(listed_paths(srv)) == 1  # both inputs' files are one compacted file now
    srv.stop()
    (srv.data_dir / CATALOG_FILENAME).unlink()
    rebuilt = srv.command("catalog", "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr.decode()
    again = run_backfill(srv, "-tenant=t", "-label-fields=app", *paths)
    assert again.returncode == 0 and b"already imported 2" in again.stdout, again.stdout
    assert listed_rows(srv, "t") == 100


def test_stdin_and_bad_lines(make_server: Callable[..., Server]) -> None:
    srv = make_server(start=False)
    srv.root.mkdir(parents=True)
    (srv.root / "config.yaml").write_text(json.dumps(srv.config()))
    text = b"2023-11-14T10:00:00Z one\nnot timed\n2023-11-14T10:00:01Z two\n"
    done = run_backfill(srv, "-tenant=t", '-labels={job="x"}', "-", stdin=text)
    assert done.returncode == 0, done.stderr.decode()
    assert b"rejected: -:2: no timestamp" in done.stderr
    assert b"entries: 2" in done.stdout and b"no timestamp: 1" in done.stdout
    again = run_backfill(srv, "-tenant=t", '-labels={job="x"}', "-", stdin=text)
    assert b"already imported 1" in again.stdout
    strict = run_backfill(srv, "-tenant=u", '-labels={job="x"}', "-strict", "-", stdin=text)
    assert strict.returncode == 1 and b"-:2: no timestamp" in strict.stderr
    srv.start()
    with srv.client("t") as client:
        data = query_range(
            client, '{job="x"}', start="1699920000000000000", end="1700006400000000000"
        )
        lines = [v[1] for _, values in stream_values(data) for v in values]
        assert lines == ["2023-11-14T10:00:01Z two", "2023-11-14T10:00:00Z one"]


def test_upload_backfill_through_the_api(make_server: Callable[..., Server]) -> None:
    off = make_server()
    with off.client("t") as client:
        response = client.post("/svc/api/v1/backfill", content=b"x\n")
        assert (response.status_code, response.text) == (
            404,
            "backfill is disabled (backfill.enabled: false)",
        )
    srv = make_server({"backfill": {"enabled": True}})
    start = time.time_ns() - 400 * DAY
    body = gzip.compress((year_old_lines(40, start) + "not json\n").encode())
    params = {"label_fields": "app", "labels": '{source="upload"}'}
    headers = {"Content-Encoding": "gzip"}
    with srv.client("up") as client:
        response = client.post("/svc/api/v1/backfill", content=body, params=params, headers=headers)
        assert response.status_code == 200, response.text
        summary = response.json()["data"]
        assert (summary["entries"], summary["imported"], summary["files"]) == (40, 1, 1)
        assert summary["rejected"] == {"line is not a JSON object": 1}
        assert summary["rejects"] == ["body:41: line is not a JSON object"]
        data = query_range(client, '{source="upload"}', **window(start))
        assert sum(len(v) for _, v in stream_values(data)) == 40
        again = client.post("/svc/api/v1/backfill", content=body, params=params, headers=headers)
        assert again.json()["data"]["alreadyImported"] is True
        strict = client.post(
            "/svc/api/v1/backfill",
            content=b"no time here\n",
            params={"labels": '{a="b"}', "strict": "true"},
        )
        assert (strict.status_code, strict.text) == (
            400,
            "body:1: no timestamp (-strict: stopped, nothing of it imported)",
        )
        bad = client.post("/svc/api/v1/backfill", content=b"", params={"format": "xml"})
        assert bad.status_code == 400
    assert not any((srv.data_dir / "backfill-uploads").iterdir())
    with srv.client("other") as client:
        assert query_range(client, '{source="upload"}', **window(start))["result"] == []

"""``GET /svc/api/v1/export``: every entry of a log query, as Parquet a notebook reads or as
JSON lines; equal to the paged ``query_range`` result; one tenant; a client that goes away
stops the scan."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pyarrow.parquet as pq

from tests.e2e.clients import push, query_range, stream_values
from tests.e2e.server import Server
from tests.timeline import BASE, SECOND

DAY = 86_400 * SECOND
PARQUET = {"Accept": "application/vnd.columnar.parquet"}
RANGE = {"start": str(BASE - SECOND), "end": str(BASE + 3 * DAY)}

Row = tuple[int, tuple[tuple[str, str], ...], str]


def _entries() -> list[tuple[dict[str, str], list[Any]]]:
    """Three streams over three days, some entries with structured metadata."""
    streams: list[tuple[dict[str, str], list[Any]]] = []
    for offset, app in enumerate(("api", "web", "db")):
        entries: list[Any] = []
        for i in range(700):
            ts = BASE + i * (3 * DAY // 700) + offset
            line = f"level={'error' if i % 7 == 0 else 'info'} app={app} n={i}"
            entries.append((ts, line, {"trace": f"t{i}"}) if i % 50 == 0 else (ts, line))
        streams.append(({"app": app, "env": "prod"}, entries))
    return streams


def _paged(client: httpx.Client, query: str) -> list[Row]:
    """Every entry of ``query`` through ``query_range``, paging forward 500 at a time."""
    rows: list[Row] = []
    start = int(RANGE["start"])
    while True:
        params = {"start": str(start), "end": RANGE["end"], "limit": "500"}
        data = query_range(client, query, direction="forward", **params)
        page = [
            (int(ts), tuple(sorted(labels.items())), line)
            for labels, values in stream_values(data)
            for ts, line in values
        ]
        rows += page
        if len(page) < 500:
            return sorted(rows)
        start = max(ts for ts, _, _ in page) + 1


def _parquet_rows(body: bytes) -> list[Row]:
    table = pq.read_table(io.BytesIO(body))
    assert table.column_names == ["timestamp", "labels", "line"]
    return sorted(
        (int(ts.value), tuple(sorted(labels)), line)
        for ts, labels, line in zip(
            table["timestamp"], table["labels"].to_pylist(), table["line"].to_pylist(), strict=True
        )
    )


def test_export_equals_paged_query_range_and_notebooks_read_it(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server()
    with srv.client("nb") as client:
        assert push(client, _entries()).status_code == 204
        assert client.post("/flush").status_code < 300  # most in files, the rest in the head
        assert (
            push(client, [({"app": "late"}, [(BASE + DAY, "level=info in the head")])]).status_code
            == 204
        )
        for query in ('{env="prod"}', '{app=~".+"} | logfmt | level="error"'):
            response = client.get(
                "/svc/api/v1/export", params={"query": query, **RANGE}, headers=PARQUET
            )
            assert response.status_code == 200, response.text
            assert response.headers["content-type"] == PARQUET["Accept"]
            # Parquet pages are compressed already: not gzipped again for a client that
            # accepts gzip (as httpx's does), unlike JSON lines below.
            assert "gzip" in response.request.headers["accept-encoding"]
            assert "content-encoding" not in response.headers
            exported = _parquet_rows(response.content)
            assert exported == _paged(client, query)
            assert len(exported) >= 300  # more than one page
        body = client.get("/svc/api/v1/export", params={"query": '{app=~".+"}', **RANGE})
        assert body.headers["content-type"].startswith("application/x-ndjson")
        assert body.headers["content-encoding"] == "gzip"
        lines = [json.loads(line) for line in body.text.splitlines()]
        assert len(lines) == 2101
        assert [int(x["timestamp"]) for x in lines] == sorted(int(x["timestamp"]) for x in lines)
        assert lines[0].keys() == {"timestamp", "labels", "line"}
        parsed = client.get(
            "/svc/api/v1/export",
            params={"query": '{app="api"} | logfmt | n="0"', **RANGE},
        ).text
        (only,) = [json.loads(line) for line in parsed.splitlines()]
        assert only["labels"] == {
            "app": "api",
            "app_extracted": "api",
            "env": "prod",
            "level": "error",
            "n": "0",
            "trace": "t0",
        }

        path = srv.root / "export.parquet"
        path.write_bytes(
            client.get(
                "/svc/api/v1/export", params={"query": '{env="prod"}', **RANGE}, headers=PARQUET
            ).content
        )
    # What a notebook does with the file: DuckDB and pyarrow read it as it is.
    ((count, first),) = duckdb.sql(
        f"SELECT count(*), min(timestamp) FROM read_parquet('{path}')"
    ).fetchall()
    assert count == 2100 and first is not None
    assert pq.read_table(path).num_rows == 2100


def test_entries_pushed_twice_are_exported_once(make_server: Callable[..., Server]) -> None:
    """As ``query_range`` counts them: the same time, stream, line and metadata once; a
    different stream or different metadata is another entry."""
    srv = make_server()
    first = [(BASE + i * SECOND, f"line {i % 3}") for i in range(200)]
    with srv.client("dup") as client:
        assert push(client, [({"app": "a"}, first)]).status_code == 204
        assert client.post("/flush").status_code < 300
        again = [
            ({"app": "a"}, first[:150]),  # once in a file, once in the head
            ({"app": "b"}, first[:10]),  # the same lines in another stream
            ({"app": "a"}, [(BASE, "line 0", {"trace": "t1"})]),  # other metadata
        ]
        assert push(client, again).status_code == 204
        assert push(client, again).status_code == 204  # twice in the head too
        response = client.get(
            "/svc/api/v1/export", params={"query": '{app=~"a|b"}', **RANGE}, headers=PARQUET
        )
        exported = _parquet_rows(response.content)
        assert exported == _paged(client, '{app=~"a|b"}')
        assert len(exported) == 200 + 10 + 1


def test_export_is_scoped_to_one_tenant(make_server: Callable[..., Server]) -> None:
    srv = make_server({"querier": {"multi_tenant_queries_enabled": True}})
    with srv.client("a") as client:
        assert push(client, [({"app": "x"}, [(BASE, "secret of a")])]).status_code == 204
    with srv.client("b") as client:
        response = client.get("/svc/api/v1/export", params={"query": '{app="x"}', **RANGE})
        assert response.status_code == 200 and response.text == ""
    with srv.client("a|b") as client:
        response = client.get("/svc/api/v1/export", params={"query": '{app="x"}', **RANGE})
        assert (response.status_code, response.text) == (400, "multiple org IDs present")
    with srv.client() as client:
        response = client.get("/svc/api/v1/export", params={"query": '{app="x"}', **RANGE})
        assert response.status_code == 401
    with srv.client("a") as client:
        metric = client.get(
            "/svc/api/v1/export", params={"query": 'count_over_time({app="x"}[1m])', **RANGE}
        )
        assert (metric.status_code, metric.text) == (
            400,
            "export takes a log query, not a metric query",
        )


def test_a_client_that_goes_away_stops_the_export(make_server: Callable[..., Server]) -> None:
    srv = make_server()
    days = 300
    with srv.client("t") as client:
        entries = [(BASE + d * DAY, f"day {d}") for d in range(days)]
        assert push(client, [({"app": "x"}, entries)]).status_code == 204
        params = {"query": '{app="x"}', "start": str(BASE), "end": str(BASE + days * DAY)}
        with client.stream("GET", "/svc/api/v1/export", params=params) as response:
            first = next(response.iter_lines())
            assert json.loads(first)["line"] == "day 0"
        # The stream is closed after one line: the server stops at the slice in progress.
    deadline = time.monotonic() + 20
    while "export stopped" not in srv.log_path.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    # the export's own summary line (the request log line also names the path)
    (line,) = [x for x in srv.log_path.read_text().splitlines() if " slices=" in x]
    assert "export stopped" in line, line
    done = int(line.split("slices=")[1].split("/")[0])
    assert done < days, line


def test_svc_export_writes_files_and_day_partitions(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    srv = make_server()
    with srv.client("nb") as client:
        assert push(client, _entries()).status_code == 204
        expected = _paged(client, '{env="prod"}')

    def svc_export(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "svc", "export", f"-url={srv.url}", "-tenant=nb", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    window = (f"-from={RANGE['start']}", "-to=2023-11-17T22:13:20Z", '-query={env="prod"}')
    done = svc_export(*window, f"-o={tmp_path / 'all.parquet'}")
    assert done.returncode == 0, done.stderr
    assert _parquet_rows((tmp_path / "all.parquet").read_bytes()) == expected

    done = svc_export(*window, f"-o={tmp_path / 'all.jsonl'}")
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "all.jsonl").read_text().splitlines()
    assert len(lines) == len(expected)

    done = svc_export(*window, "-split-by=day", "-format=csv", f"-o={tmp_path / 'days'}")
    assert done.returncode == 0, done.stderr
    days = sorted(p.parent.name for p in (tmp_path / "days").rglob("part-0.csv"))
    assert days == ["day=2023-11-14", "day=2023-11-15", "day=2023-11-16", "day=2023-11-17"]
    ((count,),) = duckdb.execute(
        "SELECT count(*) FROM read_csv(?, hive_partitioning = true)",
        [str(tmp_path / "days" / "*" / "*.csv")],
    ).fetchall()
    assert count == len(expected)

    refused = svc_export('-query=count_over_time({a="b"}[1m])', "-from=0", "-to=1", "-o=x")
    assert refused.returncode == 1
    assert "export takes a log query" in refused.stderr

"""Needle queries through a running server (LogQL, ``logql()`` in SQL, detected fields)
read only the lake files that may hold the needle, once the background indexer has indexed
them and listed the indexes in the catalog, and answer as a full scan does."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.e2e.clients import push, query_range, stream_values
from tests.e2e.server import Server
from tests.timeline import BASE, SECOND

RANGE = {"start": str(BASE - SECOND), "end": str(BASE + 3_600 * SECOND)}


def _listed_indexes(srv: Server) -> int:
    with contextlib.closing(
        sqlite3.connect(f"file:{srv.data_dir / 'catalog.sqlite'}?mode=ro", uri=True)
    ) as catalog:
        return int(catalog.execute("SELECT count(*) FROM skip_indexes").fetchone()[0])


def _wait_for_indexes(srv: Server, files: int) -> None:
    deadline = time.monotonic() + 30
    while _listed_indexes(srv) < files:
        assert time.monotonic() < deadline, "the lake files were not indexed"
        time.sleep(0.05)


def _lines_processed(data: dict[str, Any]) -> int:
    return int(data["stats"]["summary"]["totalLinesProcessed"])


def _count(client: httpx.Client, query: str) -> list[Any]:
    response = client.get("/loki/api/v1/query", params={"query": query, "time": RANGE["end"]})
    assert response.status_code == 200, response.text
    return [sample["value"][1] for sample in response.json()["data"]["result"]]


def test_needle_queries_read_only_the_files_that_may_hold_the_needle(
    make_server: Callable[..., Server],
) -> None:
    srv = make_server()
    with srv.client("needles") as client:
        for part in range(3):
            entries = [
                (
                    BASE + (part * 1000 + i) * SECOND,
                    f"GET /orders/{part}-{i:04d} trace={part}f{i:05x}a9 ok",
                )
                for i in range(300)
            ]
            assert push(client, [({"app": "shop"}, entries)]).status_code == 204
            assert client.post("/flush").status_code < 300
        _wait_for_indexes(srv, 3)

        data = query_range(client, '{app="shop"} |= "trace=1f0002aa9 "', limit="100", **RANGE)
        lines = [line for _, values in stream_values(data) for _, line in values]
        assert lines == ["GET /orders/1-0042 trace=1f0002aa9 ok"]
        assert _lines_processed(data) == 300  # one file of three
        absent = query_range(client, '{app="shop"} |= "trace=9f0002aa9 "', **RANGE)
        assert stream_values(absent) == [] and _lines_processed(absent) == 0
        regex = query_range(client, '{app="shop"} |~ "orders/2-00[0-9]9 trace"', **RANGE)
        assert len(stream_values(regex)[0][1]) == 10 and _lines_processed(regex) == 300
        everywhere = query_range(client, '{app="shop"} |= "GET"', limit="1000", **RANGE)
        assert _lines_processed(everywhere) == 900
        negative = query_range(client, '{app="shop"} != "trace=1f0002aa9 "', limit="1000", **RANGE)
        assert sum(len(v) for _, v in stream_values(negative)) == 899

        assert _count(client, 'sum(count_over_time({app="shop"} |= "f0002aa9" [2h]))') == ["3"]
        assert _count(client, 'sum(count_over_time({app="shop"} |= "qqqqqqq" [2h]))') == []

        found = client.get(
            "/svc/api/v1/sql",
            params={
                "query": 'SELECT line FROM logql(\'{app="shop"} |= "trace=1f0002aa9 "\')',
                **RANGE,
            },
        )
        assert found.status_code == 200, found.text
        assert found.json()["data"]["rows"] == [["GET /orders/1-0042 trace=1f0002aa9 ok"]]
        assert found.json()["stats"]["fileRows"] == 300  # one file of three
        both = client.get(
            "/svc/api/v1/sql",
            params={"query": "SELECT count(*) FROM logs WHERE contains(line, 'f0002aa9')", **RANGE},
        )
        assert both.json()["data"]["rows"] == [[3]] and both.json()["stats"]["fileRows"] == 900
        fields = client.get(
            "/loki/api/v1/detected_fields",
            params={"query": '{app="shop"} |= "trace=2f0002aa9 " | logfmt', **RANGE},
        )
        assert fields.status_code == 200, fields.text
        assert {f["label"] for f in fields.json()["fields"]} == {"trace"}

"""Needle queries through a running server read only the lake files that may hold the
needle, once the background indexer has indexed them, and answer as a full scan does."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.e2e.clients import push, query_range, stream_values
from tests.e2e.server import Server
from tests.timeline import BASE, SECOND

RANGE = {"start": str(BASE - SECOND), "end": str(BASE + 3_600 * SECOND)}


def _wait_for_indexes(srv: Server, files: int) -> None:
    deadline = time.monotonic() + 30
    while len(list((srv.data_dir / "lake").rglob("*.skip"))) < files:
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

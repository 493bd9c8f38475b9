"""A reader over two writers' unflushed heads (real processes on one PostgreSQL catalog
and one S3 bucket): label and series lookups, index stats, volume and detected labels see
the streams that exist only in a writer's head, merged with the lake's; a writer that does
not answer fails the query as the reference's querier does, until it leaves the ring."""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from websockets.sync.client import connect

from examples.cluster.services import PostgresServer, S3Server
from tests.e2e.clients import now_ns, push, query_range
from tests.e2e.server import Server, merge

SECOND = 1_000_000_000
TENANT = "team-a"


@dataclass
class Deployment:
    """Two writers and a reader; ``start_ns`` precedes every pushed entry."""

    writers: list[Server]
    reader: Server
    start_ns: int

    def get(self, path: str, **params: Any) -> httpx.Response:
        """A GET at the reader over the whole test window."""
        window = {"start": str(self.start_ns), "end": str(now_ns() + SECOND)}
        with self.reader.client(TENANT) as client:
            return client.get(path, params={**window, **params})


@pytest.fixture(scope="module")
def deployment(
    s3: S3Server, postgres: PostgresServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("heads")
    name = f"svc_{uuid.uuid4().hex[:12]}"
    shared = merge(
        s3.storage_config(s3.bucket(name.replace("_", "-"))),
        {
            "catalog": {"postgres": {"dsn": postgres.database(name)}},
            # A killed writer leaves the ring within 5 s (long enough for the queries that
            # must fail first on a loaded machine; the test then waits for it).
            "ingester": {
                "lifecycler": {"heartbeat_period": "200ms", "ring": {"heartbeat_timeout": "5s"}}
            },
        },
    )
    writers = [
        Server(
            root / name,
            merge(shared, {"target": "write", "ingester": {"lifecycler": {"id": name}}}),
        ).start()
        for name in ("writer-a", "writer-b")
    ]
    reader = Server(root / "reader", merge(shared, {"target": "read"})).start()
    start = now_ns() - 600 * SECOND
    a, b = (w.client(TENANT) for w in writers)
    # Flushed by writer-a: in the lake and the catalog.
    flushed = [[str(start + i * SECOND), f"level=info flushed {i}"] for i in range(5)]
    assert push(a, [({"app": "lake", "env": "prod"}, flushed)]).status_code == 204
    assert a.post("/flush").status_code == 204
    # Pushed, never flushed: only in each writer's head. The same stream in both heads.
    for number, client in enumerate((a, b)):
        values = [
            [str(start + (50 + i) * SECOND + number), f"level=warn head {i}"] for i in range(3)
        ]
        streams = [
            ({"app": f"head-{number}", "env": f"dev-{number}"}, values),
            ({"app": "shared", "env": "prod"}, values),
        ]
        assert push(client, streams).status_code == 204
    yield Deployment(writers, reader, start)
    for server in (*writers, reader):
        if server.process is not None:
            server.stop()


EVERY_STREAM = [
    {"app": "head-0", "env": "dev-0"},
    {"app": "head-1", "env": "dev-1"},
    {"app": "lake", "env": "prod"},
    {"app": "shared", "env": "prod"},
]


def test_label_lookups_see_the_writers_heads(deployment: Deployment) -> None:
    names = deployment.get("/loki/api/v1/labels")
    assert names.status_code == 200, names.text
    assert names.json()["data"] == ["app", "env"]
    values = deployment.get("/loki/api/v1/label/app/values")
    assert values.json()["data"] == ["head-0", "head-1", "lake", "shared"]
    narrowed = deployment.get("/loki/api/v1/label/env/values", query='{app=~"head.*"}')
    assert narrowed.json()["data"] == ["dev-0", "dev-1"]
    series = deployment.get("/loki/api/v1/series", **{"match[]": '{app=~".+"}'})
    assert series.status_code == 200, series.text
    assert sorted(series.json()["data"], key=lambda s: s["app"]) == EVERY_STREAM


def test_index_stats_volume_and_detected_labels_see_the_heads(deployment: Deployment) -> None:
    stats = deployment.get("/loki/api/v1/index/stats", query='{env=~".+"}')
    assert stats.status_code == 200, stats.text
    # Each head's shared stream has its own entries (timestamps differ by writer).
    assert stats.json() | {"chunks": 0} == {
        "streams": 4,
        "chunks": 0,
        "entries": 5 + 3 + 3 + 6,
        "bytes": sum(len(f"level=info flushed {i}") for i in range(5))
        + 4 * sum(len(f"level=warn head {i}") for i in range(3)),
    }
    volume = deployment.get("/loki/api/v1/index/volume", query='{app=~"head.*|shared"}')
    assert volume.status_code == 200, volume.text
    found = {s["metric"]["app"]: s["value"][1] for s in volume.json()["data"]["result"]}
    head_bytes = sum(len(f"level=warn head {i}") for i in range(3))
    assert found == {
        "head-0": str(head_bytes),
        "head-1": str(head_bytes),
        "shared": str(2 * head_bytes),
    }
    detected = deployment.get("/loki/api/v1/detected_labels", query='{app=~"head.*"}')
    assert detected.status_code == 200, detected.text
    assert {d["label"]: d["cardinality"] for d in detected.json()["detectedLabels"]} == {
        "app": 2,
        "env": 2,
    }


def test_log_queries_label_the_streams_of_the_heads(deployment: Deployment) -> None:
    with deployment.reader.client(TENANT) as client:
        data = query_range(
            client, '{app=~"head.*"}', start=str(deployment.start_ns), end=str(now_ns())
        )
    got = sorted((s["stream"]["app"], len(s["values"])) for s in data["result"])
    assert got == [("head-0", 3), ("head-1", 3)]


def test_a_tail_at_the_reader_gets_the_pushes_to_every_writer(deployment: Deployment) -> None:
    """Live tail on a read target: entries pushed to either writer after the tail began
    (still in their heads) reach the reader's client, each once."""
    url = (
        deployment.reader.url.replace("http://", "ws://")
        + "/loki/api/v1/tail?"
        + urlencode({"query": '{app="tailed"}', "start": str(now_ns())})
    )
    with connect(url, additional_headers={"X-Scope-OrgID": TENANT}) as ws:
        # Twice, a second apart: the second pushes reach the open feeds for sure.
        for round_ in range(2):
            for number, writer in enumerate(deployment.writers):
                with writer.client(TENANT) as client:
                    line = f"level=info tailed {round_} via {number}"
                    stream = {"app": "tailed", "writer": f"w{number}"}
                    assert push(client, [(stream, [(now_ns(), line)])]).status_code == 204
            time.sleep(1)
        got: list[tuple[str, str]] = []
        deadline = time.monotonic() + 15
        while len(got) < 4 and time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                message = json.loads(ws.recv(timeout=1))
                got += [
                    (s["stream"]["writer"], v[1])
                    for s in message.get("streams", [])
                    for v in s["values"]
                ]
    assert sorted(got) == [
        (f"w{number}", f"level=info tailed {round_} via {number}")
        for number in range(2)
        for round_ in range(2)
    ]


def test_a_writer_that_does_not_answer_fails_queries_until_it_leaves_the_ring(
    deployment: Deployment,
) -> None:
    """Runs last: it kills writer-b."""
    gone = deployment.writers[1]
    gone.kill()
    refused = (
        "rpc error: code = Unavailable desc = connection error: desc = "
        f'"transport: Error while dialing: dial tcp 127.0.0.1:{gone.port}: connect: '
        'connection refused"'
    )
    # In the ring and not answering: the query fails, as the reference's querier does
    # when an ingester's call fails (replication factor 1).
    query = {"query": '{app=~".+"}', "limit": "100"}
    failed = deployment.get("/loki/api/v1/query_range", **query)
    assert (failed.status_code, failed.text.strip()) == (500, refused)
    labels = deployment.get("/loki/api/v1/labels")
    assert (labels.status_code, labels.text.strip()) == (500, refused)
    # A range that ended before querier.query_ingesters_within (3h) asks no writer.
    old = {"start": str(now_ns() - 10 * 3600 * SECOND), "end": str(now_ns() - 4 * 3600 * SECOND)}
    with deployment.reader.client(TENANT) as client:
        assert client.get("/loki/api/v1/query_range", params={**query, **old}).status_code == 200
    # Once its heartbeat expired it has left the ring: queries answer without its head.
    deadline = time.monotonic() + 20
    while (answer := deployment.get("/loki/api/v1/query_range", **query)).status_code != 200:
        assert answer.status_code == 500, answer.text
        assert time.monotonic() < deadline, "the killed writer never left the ring"
        time.sleep(0.2)
    got = sorted((s["stream"]["app"], len(s["values"])) for s in answer.json()["data"]["result"])
    # (writer-a's two entries of the tail test are in its head too)
    assert got == [("head-0", 3), ("lake", 5), ("shared", 3), ("tailed", 2)]

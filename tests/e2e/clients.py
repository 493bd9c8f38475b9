"""Request bodies as existing push clients build them, and small query helpers."""

from __future__ import annotations

import gzip
import json
import time
from typing import Any, Protocol

import httpx
import snappy

from schemas import push_pb2

__all__ = [
    "Entry",
    "Service",
    "json_body",
    "now_ns",
    "protobuf_body",
    "push",
    "query_range",
    "stream_values",
]

Entry = tuple[int, str] | tuple[int, str, dict[str, str]]


class Service(Protocol):
    """A running service a test talks to: a real process or the app in this process."""

    def client(self, tenant: str | None = None) -> httpx.Client:
        """A client whose requests name ``tenant`` (none when it is None)."""
        ...


Streams = list[tuple[dict[str, str], list[Entry]]]


def now_ns() -> int:
    return time.time_ns()


def json_body(streams: Streams) -> bytes:
    """The JSON push body (``values`` entries with optional metadata objects)."""
    payload = {
        "streams": [
            {"stream": labels, "values": [[str(e[0]), *e[1:]] for e in entries]}
            for labels, entries in streams
        ]
    }
    return json.dumps(payload).encode()


def _label_string(labels: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(labels.items())) + "}"


def protobuf_body(streams: Streams) -> bytes:
    """A snappy-compressed ``logproto.PushRequest``, as Promtail sends it."""
    request = push_pb2.PushRequest()
    for labels, entries in streams:
        stream = request.streams.add()
        stream.labels = _label_string(labels)
        for entry in entries:
            item = stream.entries.add()
            item.timestamp.FromNanoseconds(entry[0])
            item.line = entry[1]
            if len(entry) == 3:
                for name, value in entry[2].items():  # type: ignore[misc]
                    pair = item.structuredMetadata.add()
                    pair.name = name
                    pair.value = value
    return bytes(snappy.compress(request.SerializeToString()))


def push(
    client: httpx.Client,
    streams: Streams,
    *,
    encoding: str = "json",
    path: str = "/svc/api/v1/push",
) -> httpx.Response:
    """Push ``streams`` as JSON, gzip JSON or protobuf+snappy."""
    if encoding == "json":
        return client.post(
            path, content=json_body(streams), headers={"Content-Type": "application/json"}
        )
    if encoding == "gzip":
        return client.post(
            path,
            content=gzip.compress(json_body(streams)),
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )
    assert encoding == "protobuf"
    return client.post(
        path, content=protobuf_body(streams), headers={"Content-Type": "application/x-protobuf"}
    )


def query_range(client: httpx.Client, query: str, **params: Any) -> dict[str, Any]:
    """GET query_range; asserts success and returns ``data``."""
    response = client.get("/svc/api/v1/query_range", params={"query": query, **params})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "success"
    data: dict[str, Any] = body["data"]
    return data


def stream_values(data: dict[str, Any]) -> list[tuple[dict[str, str], list[list[str]]]]:
    """(labels, values) of a streams result, in response order."""
    return [(s["stream"], s["values"]) for s in data["result"]]

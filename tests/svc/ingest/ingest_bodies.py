"""Builders of push bodies shared by the ingest tests."""

from __future__ import annotations

from typing import Any

import msgspec
import snappy

from schemas import push_pb2
from svc.ingest import PushLimits

NOW = 1_700_000_000_000_000_000
# Decoding as such: service_name and detected_level discovery have their own tests
# (test_discovery.py), and the OTLP mapping turns service name discovery back on.
LIMITS = PushLimits(discover_service_name=(), discover_log_levels=False)

Entry = tuple[int, str] | tuple[int, str, dict[str, str]]


def json_body(streams: list[tuple[dict[str, str], list[Entry]]]) -> bytes:
    """A JSON push body; timestamps become strings as clients send them."""
    document: dict[str, Any] = {
        "streams": [
            {"stream": labels, "values": [[str(e[0]), *e[1:]] for e in entries]}
            for labels, entries in streams
        ]
    }
    return msgspec.json.encode(document)


def proto_request(streams: list[tuple[str, list[Entry]]]) -> push_pb2.PushRequest:
    """A PushRequest with label strings as given."""
    request = push_pb2.PushRequest()
    for labels, entries in streams:
        stream = request.streams.add(labels=labels)
        for entry in entries:
            added = stream.entries.add(line=entry[1])
            added.timestamp.seconds, added.timestamp.nanos = divmod(entry[0], 1_000_000_000)
            for name, value in (entry[2] if len(entry) == 3 else {}).items():  # type: ignore[misc]
                added.structuredMetadata.add(name=name, value=value)
    return request


def proto_body(streams: list[tuple[str, list[Entry]]]) -> bytes:
    """A snappy-compressed protobuf push body."""
    return bytes(snappy.compress(proto_request(streams).SerializeToString()))

"""decode_otlp: OTLP/HTTP logs in protobuf and JSON map to streams as the reference does."""

from __future__ import annotations

import dataclasses
import gzip

import pytest
from google.protobuf import json_format
from ingest_bodies import LIMITS as DECODING_LIMITS
from ingest_bodies import NOW
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    InstrumentationScope,
    KeyValue,
    KeyValueList,
)
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from svc.errors import BadRequestError
from svc.ingest import PushStream, decode_otlp, encode_otlp_response
from svc.ingest.model import DEFAULT_DISCOVER_SERVICE_NAME
from svc.ingest.validate import validate_push

T0 = NOW - 1_000
TRACE = bytes(range(16))
SPAN = bytes(range(8))
# OTLP resources without service.name get one through discovery, so it stays on here.
LIMITS = dataclasses.replace(DECODING_LIMITS, discover_service_name=DEFAULT_DISCOVER_SERVICE_NAME)


def kv(key: str, value: AnyValue) -> KeyValue:
    return KeyValue(key=key, value=value)


def s(text: str) -> AnyValue:
    return AnyValue(string_value=text)


def request() -> ExportLogsServiceRequest:
    resource = Resource(
        attributes=[
            kv("service.name", s("checkout")),
            kv("k8s.namespace.name", s("shop")),
            kv("host.name", s("node-1")),
            kv("process.pid", AnyValue(int_value=42)),
        ]
    )
    scope = InstrumentationScope(name="app.logger", version="1.2", attributes=[kv("lib", s("x"))])
    first = LogRecord(
        time_unix_nano=T0,
        observed_time_unix_nano=T0 + 5,
        severity_number=9,
        severity_text="INFO",
        body=s("hello"),
        attributes=[
            kv("http.method", s("GET")),
            kv("ctx", AnyValue(kvlist_value=KeyValueList(values=[kv("user.id", s("u1"))]))),
            kv("empty", s("")),
        ],
        trace_id=TRACE,
        span_id=SPAN,
        flags=1,
    )
    second = LogRecord(
        observed_time_unix_nano=T0 + 7,
        body=AnyValue(
            kvlist_value=KeyValueList(
                values=[
                    kv(
                        "b",
                        AnyValue(
                            array_value=ArrayValue(values=[s("<x>"), AnyValue(double_value=1.0)])
                        ),
                    ),
                    kv("a", AnyValue(bool_value=True)),
                ]
            )
        ),
    )
    third = LogRecord(body=AnyValue(double_value=2.5))
    other = ResourceLogs(
        scope_logs=[ScopeLogs(log_records=[LogRecord(time_unix_nano=T0, body=s("x"))])]
    )
    main = ResourceLogs(
        resource=resource, scope_logs=[ScopeLogs(scope=scope, log_records=[first, second, third])]
    )
    return ExportLogsServiceRequest(resource_logs=[main, other])


SHARED = (
    ("host_name", "node-1"),
    ("process_pid", "42"),
    ("lib", "x"),
    ("scope_name", "app.logger"),
    ("scope_version", "1.2"),
)
EXPECTED = [
    PushStream(
        labels=(("k8s_namespace_name", "shop"), ("service_name", "checkout")),
        key='{k8s_namespace_name="shop", service_name="checkout"}',
        timestamps=[T0, T0 + 7, NOW],
        lines=["hello", '{"a":true,"b":["\\u003cx\\u003e",1]}', "2.5"],
        metadata=[
            (
                ("http_method", "GET"),
                ("ctx_user_id", "u1"),
                ("observed_timestamp", str(T0 + 5)),
                ("severity_number", "9"),
                ("severity_text", "INFO"),
                ("flags", "1"),
                ("trace_id", TRACE.hex()),
                ("span_id", SPAN.hex()),
                *SHARED,
            ),
            SHARED,
            SHARED,
        ],
    ),
    PushStream(
        (("service_name", "unknown_service"),),
        '{service_name="unknown_service"}',
        [T0],
        ["x"],
        None,
    ),
]


def otlp(body: bytes, content_type: str | None, encoding: str | None = None) -> list[PushStream]:
    return decode_otlp(
        body,
        content_type=content_type,
        content_encoding=encoding,
        limits=LIMITS,
        now_ns=NOW,
        promoted_resource_attributes=frozenset({"service.name", "k8s.namespace.name"}),
    ).streams


def _otlp_json(message: ExportLogsServiceRequest) -> bytes:
    document = json_format.MessageToDict(message)
    for resource in document["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for record in scope["logRecords"]:
                for field, raw in (("traceId", TRACE), ("spanId", SPAN)):
                    if field in record:
                        record[field] = raw.hex().upper()
    import msgspec

    return msgspec.json.encode(document)


@pytest.mark.parametrize(
    ("content_type", "encoding", "body"),
    [
        pytest.param("application/x-protobuf", None, request().SerializeToString(), id="protobuf"),
        pytest.param(
            "application/x-protobuf",
            "gzip",
            gzip.compress(request().SerializeToString()),
            id="protobuf-gzip",
        ),
        pytest.param("application/json", None, _otlp_json(request()), id="json-hex-ids"),
    ],
)
def test_mapping(content_type: str, encoding: str | None, body: bytes) -> None:
    assert otlp(body, content_type, encoding) == EXPECTED


@pytest.mark.parametrize(
    ("body", "content_type", "encoding", "message"),
    [
        pytest.param(b"", "text/plain", None, "content type: text/plain is not supported",
                     id="type"),
        pytest.param(b"", "application/json", "br",
                     "unsupported content encoding br: only gzip is supported", id="enc"),
        pytest.param(b"\x0a\x05\x0a", "application/x-protobuf", None,
                     "failed to parse OTLP logs protobuf: Error parsing message", id="protobuf"),
        pytest.param(b'{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "zz"}]}]}]}',
                     "application/json", None, "invalid traceId 'zz': expected hex", id="hex"),
        pytest.param(b'{"resourceLogs": 1}', "application/json", None,
                     "failed to parse OTLP logs JSON: Failed to parse resourceLogs field: "
                     "repeated field resourceLogs must be in [] which is 1", id="json-shape"),
    ],
)  # fmt: skip
def test_rejections(body: bytes, content_type: str, encoding: str | None, message: str) -> None:
    with pytest.raises(BadRequestError) as caught:
        otlp(body, content_type, encoding)
    assert caught.value.message.startswith(message)


def test_default_promoted_attributes_and_limits_apply() -> None:
    long_line = LogRecord(time_unix_nano=T0, body=s("x" * 11))
    resource = Resource(attributes=[kv("k8s.pod.name", s("p-1")), kv("service.name", s("svc"))])
    body = ExportLogsServiceRequest(
        resource_logs=[
            ResourceLogs(resource=resource, scope_logs=[ScopeLogs(log_records=[long_line])])
        ]
    ).SerializeToString()
    decoded = decode_otlp(
        body,
        content_type="application/x-protobuf",
        content_encoding=None,
        limits=LIMITS,
        now_ns=NOW,
    )
    assert decoded.streams[0].labels == (("k8s_pod_name", "p-1"), ("service_name", "svc"))
    validated = validate_push(decoded, LIMITS.__class__(max_line_size=10), "t", NOW)
    assert validated.streams == []
    assert validated.errors == [
        "max entry size '10' bytes exceeded for stream "
        '\'{k8s_pod_name="p-1", service_name="svc"}\' '
        "while adding an entry with length '11' bytes"
    ]


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/x-protobuf", (b"", "application/x-protobuf")),
        ("application/json", (b"{}", "application/json")),
    ],
)
def test_encode_response(content_type: str, expected: tuple[bytes, str]) -> None:
    assert encode_otlp_response(content_type) == expected

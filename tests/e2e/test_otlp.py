"""OTLP/HTTP logs at ``/otlp/v1/logs``: the real OpenTelemetry SDK exporter, JSON, gzip, errors."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from google.rpc import status_pb2
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.version import __version__ as sdk_version
from opentelemetry.trace import TraceFlags

from tests.e2e.app import InProcessApp
from tests.e2e.clients import Service, query_range, stream_values
from tests.e2e.server import DISCOVERY, Server
from tests.timeline import BASE, WINDOW

TRACE_ID = 0x5B8EFFF798038103D269B633813FC60C
SPAN_ID = 0xEEE19B7EC3C1B174
SDK_METADATA = {
    "telemetry_sdk_language": "python",
    "telemetry_sdk_name": "opentelemetry",
    "telemetry_sdk_version": sdk_version,
}

_PROTOBUF = {"Content-Type": "application/x-protobuf"}
_JSON = {"Content-Type": "application/json"}

Streams = list[tuple[dict[str, str], list[list[str]]]]


@pytest.fixture(autouse=True)
def _otel_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_SERVICE_NAME",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_COMPRESSION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


def _streams(app: Service, tenant: str, query: str = '{service_name=~".+"}') -> Streams:
    with app.client(tenant) as client:
        return sorted(stream_values(query_range(client, query, **WINDOW)), key=lambda s: s[1])


def _status_message(response: httpx.Response) -> str:
    status = status_pb2.Status()
    status.ParseFromString(response.content)
    message: str = status.message
    return message


@pytest.fixture
def provider() -> Iterator[Callable[..., LoggerProvider]]:
    """LoggerProviders exporting with a real OTLPLogExporter; shut down after the test."""
    made: list[LoggerProvider] = []

    def make(resource: dict[str, Any], exporter: OTLPLogExporter, *, batch: bool) -> LoggerProvider:
        logger_provider = LoggerProvider(resource=Resource.create(resource))
        processor = (
            BatchLogRecordProcessor(exporter) if batch else SimpleLogRecordProcessor(exporter)
        )
        logger_provider.add_log_record_processor(processor)
        made.append(logger_provider)
        return logger_provider

    yield make
    for logger_provider in made:
        logger_provider.shutdown()


# The SDK ----------------------------------------------------------------------------


def test_sdk_protobuf_export_is_found_with_labels_and_metadata(
    server: Server,
    tenant: str,
    provider: Callable[..., LoggerProvider],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Configured as users do: the base endpoint only, the exporter appends /v1/logs.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.url + "/otlp")
    exporter = OTLPLogExporter(headers={"X-Scope-OrgID": tenant})
    resource = {
        "service.name": "checkout",
        "service.instance.id": "checkout-1",
        "k8s.namespace.name": "shop",
        "k8s.pod.name": "checkout-7d9f",
        "deployment.environment": "prod",
        "host.name": "node-1",
    }
    logger_provider = provider(resource, exporter, batch=True)
    logger = logger_provider.get_logger("checkout.cart", "1.2.3")
    logger.emit(
        LogRecord(
            timestamp=BASE + 1,
            observed_timestamp=BASE + 5,
            trace_id=TRACE_ID,
            span_id=SPAN_ID,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
            severity_text="WARN",
            severity_number=SeverityNumber.WARN,
            body="cart total mismatch",
            attributes={"http.method": "POST", "user.id": 42, "retry": True},
        )
    )
    logger.emit(
        LogRecord(
            timestamp=BASE + 2,
            observed_timestamp=BASE + 2,
            severity_text="INFO",
            severity_number=SeverityNumber.INFO,
            body={"event": "paid", "amount": 12.5},
        )
    )
    assert logger_provider.force_flush()

    labels = {
        "service_name": "checkout",
        "service_instance_id": "checkout-1",
        "k8s_namespace_name": "shop",
        "k8s_pod_name": "checkout-7d9f",
        "deployment_environment": "prod",
    }
    shared = {**labels, **SDK_METADATA, "host_name": "node-1", "scope_name": "checkout.cart"}
    shared["scope_version"] = "1.2.3"
    assert _streams(server, tenant, '{service_name="checkout", k8s_namespace_name="shop"}') == [
        (
            {
                **shared,
                "severity_text": "WARN",
                "severity_number": "13",
                "observed_timestamp": str(BASE + 5),
                "trace_id": f"{TRACE_ID:032x}",
                "span_id": f"{SPAN_ID:016x}",
                "flags": "1",
                "http_method": "POST",
                "user_id": "42",
                "retry": "true",
            },
            [[str(BASE + 1), "cart total mismatch"]],
        ),
        (
            {
                **shared,
                "severity_text": "INFO",
                "severity_number": "9",
                "observed_timestamp": str(BASE + 2),
            },
            [[str(BASE + 2), '{"amount":12.5,"event":"paid"}']],
        ),
    ]
    with server.client(tenant) as client:
        response = client.get("/svc/api/v1/labels", params=WINDOW)
    assert set(response.json()["data"]) >= set(labels)
    assert "host_name" not in response.json()["data"]


def test_sdk_gzip_export_without_service_name(
    server: Server, tenant: str, provider: Callable[..., LoggerProvider]
) -> None:
    exporter = OTLPLogExporter(
        endpoint=server.url + "/otlp/v1/logs",
        headers={"X-Scope-OrgID": tenant},
        compression=Compression.Gzip,
    )
    logger_provider = provider({"k8s.namespace.name": "batch"}, exporter, batch=False)
    logger_provider.get_logger("job").emit(LogRecord(timestamp=BASE + 7, body="x" * 5000))
    assert logger_provider.force_flush()
    # The SDK names a service-less resource "unknown_service:<executable>"; keep it as is.
    [(labels, values)] = _streams(server, tenant)
    assert labels["service_name"].startswith("unknown_service")
    assert labels["k8s_namespace_name"] == "batch"
    assert labels["scope_name"] == "job"
    assert values == [[str(BASE + 7), "x" * 5000]]


# Hand-built requests -----------------------------------------------------------------


def _json_export(service: dict[str, Any] | None = None) -> dict[str, Any]:
    attributes = [{"key": "k8s.pod.name", "value": {"stringValue": "api-1"}}]
    if service is not None:
        attributes.append(service)
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": attributes},
                "scopeLogs": [
                    {
                        "scope": {"name": "api"},
                        "logRecords": [
                            {
                                "timeUnixNano": str(BASE + 3),
                                "severityText": "ERROR",
                                "body": {"stringValue": "boom"},
                                "traceId": f"{TRACE_ID:032x}",
                                "spanId": f"{SPAN_ID:016x}",
                                "attributes": [
                                    {"key": "retry.count", "value": {"intValue": "3"}},
                                    {"key": "ok", "value": {"boolValue": False}},
                                ],
                            },
                            {
                                "observedTimeUnixNano": str(BASE + 4),
                                "body": {"stringValue": "no event time"},
                            },
                        ],
                    }
                ],
            }
        ]
    }


@pytest.mark.parametrize("compressed", [False, True], ids=["json", "json-gzip"])
def test_json_export(make_app: Callable[..., InProcessApp], tenant: str, compressed: bool) -> None:
    # A resource without service.name is named unknown_service by service name discovery.
    app = make_app({"limits_config": {"discover_service_name": DISCOVERY["discover_service_name"]}})
    body = json.dumps(_json_export()).encode()
    headers = {"Content-Type": "application/json"}
    if compressed:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    with app.client(tenant) as client:
        response = client.post("/otlp/v1/logs", content=body, headers=headers)
    assert response.status_code == 200, response.content
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {}
    labels = {"service_name": "unknown_service", "k8s_pod_name": "api-1", "scope_name": "api"}
    assert _streams(app, tenant) == [
        (
            {
                **labels,
                "severity_text": "ERROR",
                "trace_id": f"{TRACE_ID:032x}",
                "span_id": f"{SPAN_ID:016x}",
                "retry_count": "3",
                "ok": "false",
            },
            [[str(BASE + 3), "boom"]],
        ),
        (labels, [[str(BASE + 4), "no event time"]]),
    ]


def _protobuf_export(line: str = "hello", **resource: str) -> bytes:
    request = ExportLogsServiceRequest()
    resource_logs = request.resource_logs.add()
    for key, value in {"service.name": "api", **resource}.items():
        attribute = resource_logs.resource.attributes.add()
        attribute.key = key
        attribute.value.string_value = value
    record = resource_logs.scope_logs.add().log_records.add()
    record.time_unix_nano = BASE + 9
    record.body.string_value = line
    return request.SerializeToString()


def test_protobuf_answer_is_an_export_logs_service_response(app: InProcessApp, tenant: str) -> None:
    with app.client(tenant) as client:
        response = client.post(
            "/otlp/v1/logs",
            content=_protobuf_export(),
            headers={"Content-Type": "application/x-protobuf"},
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-protobuf"
    answer = ExportLogsServiceResponse()
    answer.ParseFromString(response.content)
    assert answer == ExportLogsServiceResponse()
    assert _streams(app, tenant) == [({"service_name": "api"}, [[str(BASE + 9), "hello"]])]


def test_structured_metadata_is_filterable(app: InProcessApp, tenant: str) -> None:
    request = ExportLogsServiceRequest()
    request.ParseFromString(_protobuf_export("traced"))
    request.resource_logs[0].scope_logs[0].log_records[0].trace_id = TRACE_ID.to_bytes(16, "big")
    request.resource_logs[0].scope_logs[0].log_records.add(
        time_unix_nano=BASE + 10
    ).body.string_value = "untraced"
    with app.client(tenant) as client:
        response = client.post(
            "/otlp/v1/logs", content=request.SerializeToString(), headers=_PROTOBUF
        )
    assert response.status_code == 200
    found = _streams(app, tenant, f'{{service_name="api"}} | trace_id="{TRACE_ID:032x}"')
    assert [values for _, values in found] == [[[str(BASE + 9), "traced"]]]


# Errors ------------------------------------------------------------------------------


def _assert_nothing_stored(app: Service, tenant: str) -> None:
    assert _streams(app, tenant) == []


def _post(app: Service, tenant: str | None, body: bytes, **headers: str) -> httpx.Response:
    with app.client(tenant) as client:
        return client.post("/otlp/v1/logs", content=body, headers=headers)


@pytest.mark.parametrize(
    ("body", "headers", "message"),
    [
        pytest.param(b"\xff\xff\xff", _PROTOBUF, "failed to parse OTLP logs protobuf", id="pb"),
        pytest.param(b'{"resourceLogs": [', _JSON, "failed to parse OTLP logs JSON", id="json"),
        pytest.param(
            b'{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "xyz"}]}]}]}',
            _JSON,
            "invalid traceId 'xyz': expected hex",
            id="json-trace-id",
        ),
        pytest.param(
            _protobuf_export(),
            {"Content-Type": "text/plain"},
            "content type: text/plain is not supported",
            id="content-type",
        ),
        pytest.param(
            _protobuf_export(),
            {**_PROTOBUF, "Content-Encoding": "gzip"},
            "gzip: invalid header",
            id="not-gzip",
        ),
        pytest.param(
            gzip.compress(_protobuf_export())[:-12],
            {**_PROTOBUF, "Content-Encoding": "gzip"},
            "gzip",
            id="truncated-gzip",
        ),
        pytest.param(
            _protobuf_export(),
            {**_PROTOBUF, "Content-Encoding": "br"},
            "unsupported content encoding br: only gzip is supported",
            id="brotli",
        ),
        pytest.param(
            _protobuf_export("x" * (256 * 1024 + 1)),
            _PROTOBUF,
            "max entry size '262144' bytes exceeded for stream '{service_name=\"api\"}'",
            id="line-too-long",
        ),
    ],
)
def test_malformed_export_is_400_and_writes_nothing(
    app: InProcessApp, tenant: str, body: bytes, headers: dict[str, str], message: str
) -> None:
    response = _post(app, tenant, body, **headers)
    assert response.status_code == 400
    if headers is _JSON:
        # The OTLP specification's JSON Status for JSON requests (the reference: protobuf).
        assert response.headers["content-type"] == "application/json"
        assert list(response.json()) == ["message"]
        assert message in response.json()["message"]
    else:
        assert response.headers["content-type"] == "application/octet-stream"
        assert message in _status_message(response)
    _assert_nothing_stored(app, tenant)


def test_a_bad_resource_is_refused_and_the_rest_written(app: InProcessApp, tenant: str) -> None:
    request = ExportLogsServiceRequest()
    request.ParseFromString(_protobuf_export(**{"k8s.pod.name": "ok"}))
    bad = ExportLogsServiceRequest()
    bad.ParseFromString(_protobuf_export(**{"k8s.pod.name": "p" * 3000}))
    request.resource_logs.extend(bad.resource_logs)
    response = _post(app, tenant, request.SerializeToString(), **_PROTOBUF)
    assert response.status_code == 400
    long_value = "p" * 3000
    assert _status_message(response) == (
        f'stream \'{{k8s_pod_name="{long_value}", service_name="api"}}\' '
        f"has label value too long: '{long_value}'"
    )
    assert [labels["k8s_pod_name"] for labels, _ in _streams(app, tenant)] == ["ok"]


def test_oversized_exports(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app({"distributor": {"max_recv_msg_size": 2000, "max_decompressed_size": 4000}})
    body = _protobuf_export("y" * 3000)
    response = _post(srv, "t", body, **_PROTOBUF)
    assert response.status_code == 413
    assert _status_message(response) == f"message size too large than max ({len(body)} vs 2000)"

    bomb = gzip.compress(_protobuf_export("z" * 10_000))
    assert len(bomb) < 2000
    response = _post(srv, "t", bomb, **_PROTOBUF, **{"Content-Encoding": "gzip"})
    assert response.status_code == 400
    assert _status_message(response).startswith("decompressed message size too large than max (")
    _assert_nothing_stored(srv, "t")


# Tenancy and limits --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("org_id", "status", "message"),
    [
        pytest.param(None, 401, "no org id", id="missing"),
        pytest.param("a|b", 400, "multiple org IDs present", id="several"),
        pytest.param("..", 400, "tenant ID is '.' or '..'", id="dots"),
    ],
)
def test_tenant_errors(app: InProcessApp, org_id: str | None, status: int, message: str) -> None:
    response = _post(app, org_id, _protobuf_export(), **_PROTOBUF)
    assert response.status_code == status
    assert message in _status_message(response)


def test_tenants_are_isolated(app: InProcessApp, tenant: str) -> None:
    assert _post(app, tenant, _protobuf_export("mine"), **_PROTOBUF).status_code == 200
    assert _streams(app, tenant + "-other") == []
    assert _streams(app, tenant)[0][1] == [[str(BASE + 9), "mine"]]


def test_promoted_attributes_per_tenant(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app(
        {
            "limits_config": {"otlp_promoted_resource_attributes": ["service.name", "host.name"]},
            "overrides": {"team-a": {"otlp_promoted_resource_attributes": ["team.name"]}},
        }
    )
    body = _protobuf_export(**{"team.name": "pay", "host.name": "h1", "k8s.pod.name": "p1"})
    for tenant in ("team-a", "team-b"):
        assert _post(srv, tenant, body, **_PROTOBUF).status_code == 200
    everything = {
        "service_name": "api",
        "team_name": "pay",
        "host_name": "h1",
        "k8s_pod_name": "p1",
    }
    # team-a promotes only team.name: service.name is present, so no unknown_service label.
    assert _streams(srv, "team-a", '{team_name="pay"}') == [
        (everything, [[str(BASE + 9), "hello"]])
    ]
    assert _streams(srv, "team-a", '{service_name="api"}') == []
    # team-b uses limits_config's list.
    assert _streams(srv, "team-b", '{host_name="h1", service_name="api"}') == [
        (everything, [[str(BASE + 9), "hello"]])
    ]
    assert _streams(srv, "team-b", '{team_name="pay"}') == []


def test_blocked_ingestion_answers_the_configured_status(
    make_app: Callable[..., InProcessApp],
) -> None:
    srv = make_app({"limits_config": {"block_ingestion_until": "2999-01-01T00:00:00Z"}})
    response = _post(srv, "t", _protobuf_export(), **_PROTOBUF)
    assert response.status_code == 260
    assert _status_message(response) == (
        "ingestion blocked for user 't' until '2999-01-01T00:00:00Z' with status code '260'"
    )
    _assert_nothing_stored(srv, "t")

"""Decode an OTLP/HTTP logs export (protobuf or JSON) into PushStreams.

The mapping follows the reference's defaults:

- resource attributes named in ``promoted_resource_attributes`` become stream labels
  (names sanitised, ``service.name`` -> ``service_name``); a resource without
  ``service.name`` gets the value of the first promoted label of ``discover_service_name``
  as ``service_name``, else ``unknown_service`` (no discovery with an empty list);
- every other resource attribute, the scope's attributes, name and version, and each
  record's attributes, ``observed_timestamp``, ``severity_number``, ``severity_text``,
  ``dropped_attributes_count``, ``flags``, ``trace_id`` and ``span_id`` (hex) become
  structured metadata (record first, then resource, then scope);
- the body is the line; the timestamp is ``time_unix_nano``, else
  ``observed_time_unix_nano``, else the time of the request.

Records of resources with the same label set are merged into one stream.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import msgspec
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

from svc.errors import BadRequestError
from svc.ingest.body import decode_content_encoding, media_type
from svc.ingest.discovery import with_service_name
from svc.ingest.labels import label_key
from svc.ingest.model import DecodedPush
from svc.ingest.otlp_values import any_value_text, attribute_pairs
from svc.model import PushStream

if TYPE_CHECKING:
    from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope
    from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs

    from svc.ingest.model import PushLimits

__all__ = ["DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES", "decode_otlp", "encode_otlp_response"]

DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "service.name",
        "service.namespace",
        "service.instance.id",
        "deployment.environment",
        "deployment.environment.name",
        "cloud.region",
        "cloud.availability_zone",
        "k8s.cluster.name",
        "k8s.namespace.name",
        "k8s.pod.name",
        "k8s.container.name",
        "container.name",
        "k8s.replicaset.name",
        "k8s.deployment.name",
        "k8s.statefulset.name",
        "k8s.daemonset.name",
        "k8s.cronjob.name",
        "k8s.job.name",
    }
)
"""Resource attributes that become stream labels unless configured otherwise."""

_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_ENCODINGS = frozenset({"gzip"})
_ID_FIELDS = ("traceId", "spanId", "trace_id", "span_id")

Pairs = tuple[tuple[str, str], ...]


class _Stream:
    """Entries of one label set, gathered across resources and scopes."""

    __slots__ = ("labels", "lines", "metadata", "timestamps")

    def __init__(self, labels: Pairs) -> None:
        self.labels = labels
        self.timestamps: list[int] = []
        self.lines: list[str] = []
        self.metadata: list[Pairs] = []


def decode_otlp(
    body: bytes,
    *,
    content_type: str | None,
    content_encoding: str | None,
    limits: PushLimits,
    now_ns: int,
    promoted_resource_attributes: frozenset[str] = DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES,
) -> DecodedPush:
    """Decode an OTLP logs export; raise a ServiceError (400/413) when it cannot be read.

    Limits are checked afterwards (``svc/ingest/validate.py``), entry by entry.
    """
    kind = media_type(content_type)
    encoding = (content_encoding or "").strip().lower()
    if encoding not in {"", "identity", *_ENCODINGS}:
        raise BadRequestError(
            f"unsupported content encoding {content_encoding}: only gzip is supported"
        )
    if kind not in (_PROTOBUF, _JSON):
        raise BadRequestError(f"content type: {content_type or ''} is not supported")
    data = decode_content_encoding(body, content_encoding, limits, allowed=_ENCODINGS)
    request = _parse_json(data) if kind == _JSON else _parse_protobuf(data)
    streams: dict[str, _Stream] = {}
    try:
        for resource_logs in request.resource_logs:
            _add_resource(streams, resource_logs, promoted_resource_attributes, limits, now_ns)
    except RecursionError:
        raise BadRequestError(_TOO_DEEP) from None
    finished = [_finish(key, stream) for key, stream in streams.items()]
    kept = [stream for stream in finished if stream.timestamps]
    return DecodedPush(kept, [stream.key for stream in kept], [], len(finished))


def encode_otlp_response(content_type: str | None) -> tuple[bytes, str]:
    """The (empty) ExportLogsServiceResponse body and media type for a request's type."""
    response = ExportLogsServiceResponse()
    if media_type(content_type) == _JSON:
        return json_format.MessageToJson(response, indent=None).encode(), _JSON
    return response.SerializeToString(), _PROTOBUF


def _parse_protobuf(data: bytes) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(data)
    except DecodeError as exc:
        raise BadRequestError(f"failed to parse OTLP logs protobuf: {exc}") from exc
    return request


def _hex_ids_to_base64(document: Any) -> None:
    # OTLP/JSON writes trace and span ids as hex, the protobuf JSON mapping as base64.
    for resource_logs in _list(document, "resourceLogs", "resource_logs"):
        for scope_logs in _list(resource_logs, "scopeLogs", "scope_logs"):
            for record in _list(scope_logs, "logRecords", "log_records"):
                for field in _ID_FIELDS:
                    if isinstance(record, dict) and isinstance(record.get(field), str):
                        record[field] = _hex_to_base64(field, record[field])


def _list(parent: Any, *names: str) -> list[Any]:
    if isinstance(parent, dict):
        for name in names:
            value = parent.get(name)
            if isinstance(value, list):
                return value
    return []


def _hex_to_base64(field: str, text: str) -> str:
    try:
        return base64.b64encode(bytes.fromhex(text)).decode("ascii")
    except ValueError as exc:
        raise BadRequestError(f"invalid {field} {text!r}: expected hex") from exc


_TOO_DEEP = "failed to parse OTLP logs: values nested too deeply"


def _parse_json(data: bytes) -> ExportLogsServiceRequest:
    try:
        document = msgspec.json.decode(data.decode("utf-8", "replace"))
    except msgspec.DecodeError as exc:
        raise BadRequestError(f"failed to parse OTLP logs JSON: {exc}") from exc
    except RecursionError:
        raise BadRequestError(_TOO_DEEP) from None
    if document is None:
        document = {}  # Go's OTLP JSON reader takes `null` for an empty request
    if not isinstance(document, dict):
        raise BadRequestError(
            f"failed to parse OTLP logs JSON: expected an object, got {type(document).__name__}"
        )
    try:
        _hex_ids_to_base64(document)
        request = ExportLogsServiceRequest()
        json_format.ParseDict(document, request, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise BadRequestError(f"failed to parse OTLP logs JSON: {exc}") from exc
    except RecursionError:
        raise BadRequestError(_TOO_DEEP) from None
    return request


def _resource_split(
    resource_logs: ResourceLogs, promoted: frozenset[str]
) -> tuple[Pairs, list[tuple[str, str]]]:
    labels: dict[str, str] = {}
    metadata: list[tuple[str, str]] = []
    for attribute in resource_logs.resource.attributes:
        pairs = attribute_pairs([attribute])
        if attribute.key in promoted:
            labels.update(pairs)
        else:
            metadata.extend(pairs)
    return tuple(sorted((n, v) for n, v in labels.items() if v)), metadata


def _scope_pairs(scope: InstrumentationScope) -> list[tuple[str, str]]:
    pairs = attribute_pairs(scope.attributes)
    if scope.name:
        pairs.append(("scope_name", scope.name))
    if scope.version:
        pairs.append(("scope_version", scope.version))
    if scope.dropped_attributes_count:
        pairs.append(("scope_dropped_attributes_count", str(scope.dropped_attributes_count)))
    return pairs


def _record_pairs(record: LogRecord) -> list[tuple[str, str]]:
    pairs = attribute_pairs(record.attributes)
    if record.time_unix_nano and record.observed_time_unix_nano:
        pairs.append(("observed_timestamp", str(record.observed_time_unix_nano)))
    if record.severity_number:
        pairs.append(("severity_number", str(record.severity_number)))
    if record.severity_text:
        pairs.append(("severity_text", record.severity_text))
    if record.dropped_attributes_count:
        pairs.append(("dropped_attributes_count", str(record.dropped_attributes_count)))
    if record.flags:
        pairs.append(("flags", str(record.flags)))
    if any(record.trace_id):
        pairs.append(("trace_id", record.trace_id.hex()))
    if any(record.span_id):
        pairs.append(("span_id", record.span_id.hex()))
    return pairs


def _add_resource(
    streams: dict[str, _Stream],
    resource_logs: ResourceLogs,
    promoted: frozenset[str],
    limits: PushLimits,
    now_ns: int,
) -> None:
    labels, resource_metadata = _resource_split(resource_logs, promoted)
    labels = with_service_name(labels, limits.discover_service_name)
    key = label_key(labels)
    stream = streams.get(key)
    if stream is None:
        stream = streams[key] = _Stream(labels)
    for scope_logs in resource_logs.scope_logs:
        shared = resource_metadata + _scope_pairs(scope_logs.scope)
        for record in scope_logs.log_records:
            stamp = record.time_unix_nano or record.observed_time_unix_nano or now_ns
            pairs = _record_pairs(record) + shared
            stream.timestamps.append(stamp)
            stream.lines.append(any_value_text(record.body))
            stream.metadata.append(tuple((n, v) for n, v in pairs if v))


def _finish(key: str, stream: _Stream) -> PushStream:
    metadata = stream.metadata if any(stream.metadata) else None
    return PushStream(stream.labels, key, stream.timestamps, stream.lines, metadata)

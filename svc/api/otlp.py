"""``POST /otlp/v1/logs``: OpenTelemetry logs over OTLP/HTTP (protobuf or JSON, gzip).

SDKs and collectors are configured with the endpoint ``http://<host>/otlp`` and append
``/v1/logs`` themselves. Tenancy, ingestion blocking, readiness and body limits are those
of ``/push``. Success answers the (empty) ``ExportLogsServiceResponse`` in the request's
encoding; errors answer a ``google.rpc.Status`` carrying the message, with 500s turned
into retryable 503s, as the reference does. The Status is protobuf, except for JSON
requests, which get it in JSON as the OTLP specification asks (the reference answers
protobuf to them too, which JSON-only clients cannot read).
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any

import msgspec
from litestar import Request, Response, post

from svc.api.common import org_header, runtime
from svc.api.push import read_body
from svc.config import LimitsConfig
from svc.errors import ServiceError
from svc.ingest.body import DecompressedTooLargeError, media_type
from svc.ingest.otlp import DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES, decode_otlp, encode_otlp_response
from svc.off_loop import OFF_LOOP_BODY_BYTES

__all__ = ["otlp_logs", "promoted_resource_attributes", "rpc_status"]

log = logging.getLogger(__name__)

_STATUS_MEDIA_TYPE = "application/octet-stream"
_STATUS_MESSAGE_TAG = 0x12  # google.rpc.Status field 2 (message), length-delimited


def promoted_resource_attributes(limits: LimitsConfig) -> frozenset[str]:
    """The tenant's list (its override or ``limits_config``'s), else the reference's default."""
    names = limits.otlp_promoted_resource_attributes
    return frozenset(names) if names else DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES


def rpc_status(message: str) -> bytes:
    """A serialized ``google.rpc.Status`` with only its message set (code 0 is omitted).

    Encoded by hand: the message is one string field, and googleapis-common-protos is not
    a runtime dependency.
    """
    data = message.encode()
    size = len(data)
    prefix = bytearray([_STATUS_MESSAGE_TAG])
    while size >= 0x80:
        prefix.append(size & 0x7F | 0x80)
        size >>= 7
    prefix.append(size)
    return bytes(prefix) + data


def _status_response(message: str, status: int, *, json: bool = False) -> Response[bytes]:
    status = 503 if status == 500 else status
    if json:
        # google.rpc.Status in the protobuf JSON mapping; code 0 is left out as in protobuf.
        body = msgspec.json.encode({"message": message})
        return Response(body, status_code=status, media_type="application/json")
    return Response(rpc_status(message), status_code=status, media_type=_STATUS_MEDIA_TYPE)


def _is_json(request: Request[Any, Any, Any]) -> bool:
    return media_type(request.headers.get("content-type")) == "application/json"


def _service_error(request: Request[Any, Any, Any], exc: ServiceError) -> Response[bytes]:
    return _status_response(exc.message, exc.status, json=_is_json(request))


def _unexpected_error(request: Request[Any, Any, Any], exc: Exception) -> Response[bytes]:
    log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    return _status_response("internal server error", 500, json=_is_json(request))


@post(
    "/otlp/v1/logs",
    status_code=200,
    exception_handlers={ServiceError: _service_error, Exception: _unexpected_error},
)
async def otlp_logs(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Accept an OTLP logs export; answer once it is durable."""
    rt = runtime(request)
    tenant = rt.resolver.single(org_header(request))
    rt.require_ready()
    # A tenant over its rate limit waits for favored queries before it takes a slot.
    await rt.distributor.stepped_aside(tenant)
    async with rt.store.admission():  # bounded buffering, backpressure
        distributor = rt.distributor
        tenant_limits = rt.limits_for(tenant)
        body = await read_body(request, distributor.body_limits)
        content_type = request.headers.get("content-type")
        decode = functools.partial(
            decode_otlp,
            body,
            content_type=content_type,
            content_encoding=request.headers.get("content-encoding"),
            limits=distributor.push_limits(tenant_limits),
            now_ns=time.time_ns(),
            promoted_resource_attributes=promoted_resource_attributes(tenant_limits),
        )
        try:
            decoded = await distributor.step(tenant, len(body) >= OFF_LOOP_BODY_BYTES, decode)
        except DecompressedTooLargeError:
            distributor.body_too_large(tenant, "otlp", len(body))
            raise
        error = await distributor.push(tenant, decoded, "otlp")
    if error is not None:
        return _status_response(error.message, error.status, json=_is_json(request))
    payload, response_type = encode_otlp_response(content_type)
    return Response(payload, status_code=200, media_type=response_type)

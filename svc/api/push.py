"""``POST /svc/api/v1/push`` (and its ``/loki`` and ``/api/prom`` aliases)."""

from __future__ import annotations

import time
from typing import Any

from litestar import Request, Response, post

from svc.api.common import api_paths, org_header, runtime
from svc.ingest.body import check_body_size
from svc.ingest.model import PushLimits
from svc.ingest.push import decode_push
from svc.runtime import Runtime
from svc.timestamps import parse_timestamp_ns

__all__ = ["LEGACY_PUSH_PATH", "check_blocked", "push", "read_body"]


async def read_body(request: Request[Any, Any, Any], limits: PushLimits) -> bytes:
    """The raw body, refused with 413 as soon as it is known to be over the limit."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit():
        check_body_size(int(length), limits)
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        check_body_size(size, limits)
        chunks.append(chunk)
    return b"".join(chunks)


def check_blocked(rt: Runtime, tenant: str) -> Response[bytes] | None:
    """The configured answer while ingestion is blocked, else None."""
    until_text = rt.config.limits_config.block_ingestion_until
    if not until_text:
        return None
    until = parse_timestamp_ns(until_text)
    if time.time_ns() >= until:
        return None
    status = rt.config.limits_config.block_ingestion_status_code
    if status == 200:
        return Response(b"", status_code=200)
    message = (
        f"ingestion blocked for user {tenant} until '{until_text}' with status code '{status}'"
    )
    return Response(message.encode(), status_code=status, media_type="text/plain")


LEGACY_PUSH_PATH = "/api/prom/push"


@post(api_paths("/push", LEGACY_PUSH_PATH), status_code=200)
async def push(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Accept a JSON or protobuf+snappy push; 204 once it is durable."""
    rt = runtime(request)
    tenant = rt.resolver.single(org_header(request))
    blocked = check_blocked(rt, tenant)
    if blocked is not None:
        return blocked
    rt.require_ready()
    async with rt.store.admission():  # bounded buffering, backpressure
        body = await read_body(request, rt.limits)
        streams = decode_push(
            body,
            content_type=request.headers.get("content-type"),
            content_encoding=request.headers.get("content-encoding"),
            limits=rt.limits,
            now_ns=time.time_ns(),
            # As the reference, only the deprecated path takes the legacy JSON format.
            legacy=request.url.path == LEGACY_PUSH_PATH,
        )
        await rt.store.push(tenant, streams)
    return Response(b"", status_code=204)

"""``POST /svc/api/v1/push`` (and its ``/loki`` and ``/api/prom`` aliases)."""

from __future__ import annotations

import functools
from typing import Any

from litestar import Request, Response, post

from svc.api.common import api_paths, org_header, runtime
from svc.api.ops import error_text
from svc.errors import ServiceError
from svc.ingest.body import DecompressedTooLargeError, check_body_size
from svc.ingest.model import PushLimits
from svc.ingest.push import decode_push
from svc.off_loop import OFF_LOOP_BODY_BYTES

__all__ = ["LEGACY_PUSH_PATH", "push", "read_body"]


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


def _push_error(_: Request[Any, Any, Any], exc: ServiceError) -> Response[bytes]:
    return error_text(exc.message, exc.status)


LEGACY_PUSH_PATH = "/api/prom/push"


@post(
    api_paths("/push", LEGACY_PUSH_PATH),
    status_code=200,
    exception_handlers={ServiceError: _push_error},
)
async def push(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Accept a JSON or protobuf+snappy push: the valid entries are written (durably)
    before the answer, which is 204 or lists what was refused."""
    rt = runtime(request)
    tenant = rt.resolver.single(org_header(request))
    rt.require_ready()
    # A tenant over its rate limit waits for favored queries before it takes a slot.
    await rt.distributor.stepped_aside(tenant)
    async with rt.store.admission():  # bounded buffering, backpressure
        distributor = rt.distributor
        body = await read_body(request, distributor.body_limits)
        decode = functools.partial(
            decode_push,
            body,
            content_type=request.headers.get("content-type"),
            content_encoding=request.headers.get("content-encoding"),
            # the tenant's: service_name discovery happens while decoding
            limits=distributor.push_limits(rt.limits_for(tenant)),
            # As the reference, only the deprecated path takes the legacy JSON format.
            legacy=request.url.path == LEGACY_PUSH_PATH,
        )
        try:
            decoded = await distributor.step(tenant, len(body) >= OFF_LOOP_BODY_BYTES, decode)
        except DecompressedTooLargeError:
            distributor.body_too_large(tenant, "loki", len(body))
            raise
        error = await distributor.push(tenant, decoded, "loki")
        if error is not None:
            return error_text(error.message, error.status)
    return Response(b"", status_code=204)

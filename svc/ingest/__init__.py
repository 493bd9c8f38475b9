"""Write-path request decoding and checks: push and OTLP bodies to PushStreams.

Pure functions, no HTTP framework and no storage::

    decoded = decode_push(body, content_type=..., content_encoding=..., limits=PushLimits())
    validated = validate_push(decoded, limits, tenant, now_ns=time.time_ns())

A body that cannot be read raises a :class:`svc.errors.ServiceError` (400 or 413);
limits are checked per stream and entry by ``validate_push``, which keeps what passes
and records a message for each refusal.
"""

from __future__ import annotations

from svc.ingest.body import check_body_size
from svc.ingest.model import PushLimits
from svc.ingest.otlp import DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES, decode_otlp, encode_otlp_response
from svc.ingest.push import decode_push
from svc.model import PushStream

__all__ = [
    "DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES",
    "PushLimits",
    "PushStream",
    "check_body_size",
    "decode_otlp",
    "decode_push",
    "encode_otlp_response",
]

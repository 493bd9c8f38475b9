"""Write-path request decoding: push and OTLP bodies to validated PushStreams.

Pure functions, no HTTP framework and no storage::

    streams = decode_push(body, content_type=..., content_encoding=...,
                          limits=PushLimits(), now_ns=time.time_ns())

Every problem is raised as a :class:`svc.errors.ServiceError` (400 or 413) carrying
the message to answer; nothing is returned unless the whole request is valid.
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

"""Write-path request decoding and checks: push and OTLP bodies to PushStreams.

Pure functions, no HTTP framework and no storage::

    decoded = decode_push(body, content_type=..., content_encoding=..., limits=PushLimits())
    validated = validate_push(decoded, limits, tenant, now_ns=time.time_ns())

A body that cannot be read raises a :class:`svc.errors.ServiceError` (400 or 413);
limits are checked per stream and entry by ``validate_push``, which keeps what passes
and records a message for each refusal.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from svc.ingest.body import check_body_size
    from svc.ingest.model import PushLimits
    from svc.ingest.otlp import (
        DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES,
        decode_otlp,
        encode_otlp_response,
    )
    from svc.ingest.push import decode_push
    from svc.model import PushStream

# Imported on first use (PEP 562): the configuration imports ``svc.ingest.model``, which
# runs this package first, and should not load the protobuf decoders with it.
_EXPORTS = {
    "DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES": "svc.ingest.otlp",
    "PushLimits": "svc.ingest.model",
    "PushStream": "svc.model",
    "check_body_size": "svc.ingest.body",
    "decode_otlp": "svc.ingest.otlp",
    "decode_push": "svc.ingest.push",
    "encode_otlp_response": "svc.ingest.otlp",
}

__all__ = [
    "DEFAULT_PROMOTED_RESOURCE_ATTRIBUTES",
    "PushLimits",
    "PushStream",
    "check_body_size",
    "decode_otlp",
    "decode_push",
    "encode_otlp_response",
]


def __getattr__(name: str) -> Any:
    """An exported name, imported now."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

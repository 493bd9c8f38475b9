"""The limits the push decoders enforce (their result, ``PushStream``, is in ``svc.model``)."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

# Re-exported: the decoders' result type lives in svc.model, below storage and query.
from svc.model import PushStream

# The reference's default ``discover_service_name`` list, in its order.
DEFAULT_DISCOVER_SERVICE_NAME = (
    "service",
    "app",
    "application",
    "app_name",
    "name",
    "app_kubernetes_io_name",
    "container",
    "container_name",
    "k8s_container_name",
    "component",
    "workload",
    "job",
    "k8s_job_name",
)

__all__ = [
    "DEFAULT_DISCOVER_SERVICE_NAME",
    "DecodedPush",
    "PushLimits",
    "PushStream",
    "UnparsableStream",
]

_MIB = 1 << 20
_NS_PER_SECOND = 1_000_000_000


@dataclass(frozen=True, slots=True)
class PushLimits:
    """Per-tenant limits applied while decoding a push; defaults are the reference's."""

    max_recv_msg_size: int = 100 * _MIB
    """Largest accepted request body as received (compressed), in bytes."""
    max_decompressed_size: int = 5000 * _MIB
    """Largest accepted body after gzip, deflate or snappy decompression, in bytes."""
    max_label_name_length: int = 1024
    """Longest accepted label name, in bytes."""
    max_label_value_length: int = 2048
    """Longest accepted label value, in bytes."""
    max_label_names_per_series: int = 15
    """Most label names per stream; a ``service_name`` label is not counted."""
    max_line_size: int = 256 * 1024
    """Longest accepted log line in bytes; 0 means unlimited."""
    reject_old_samples: bool = True
    """Reject entries older than ``reject_old_samples_max_age_ns``."""
    reject_old_samples_max_age_ns: int = 7 * 24 * 3600 * _NS_PER_SECOND
    """Maximum age of an entry when ``reject_old_samples`` is set, in nanoseconds."""
    creation_grace_period_ns: int = 10 * 60 * _NS_PER_SECOND
    """How far in the future an entry's timestamp may be, in nanoseconds."""
    allow_structured_metadata: bool = True
    """Accept structured metadata on entries."""
    max_structured_metadata_size: int = 64 * 1024
    """Largest structured metadata of one entry (names plus values), in bytes; 0 means
    unlimited."""
    max_structured_metadata_entries_count: int = 128
    """Most structured metadata pairs on one entry; 0 means unlimited."""
    max_line_size_truncate: bool = False
    """Cut lines longer than ``max_line_size`` instead of refusing them."""
    max_line_size_truncate_identifier: str = ""
    """Appended to each cut line (its bytes count in ``max_line_size``)."""
    enforced_labels: tuple[str, ...] = ()
    """Labels every stream must have."""
    block_ingestion_until_ns: int = 0
    """Refuse every entry until this time (Unix ns; 0: never)."""
    block_ingestion_until: str = ""
    """The same time as configured (the message quotes it)."""
    block_ingestion_status_code: int = 260
    """Status answered while ingestion is blocked (200: accept and drop)."""
    discover_service_name: tuple[str, ...] = DEFAULT_DISCOVER_SERVICE_NAME
    """Labels whose value becomes a missing ``service_name``, in order; empty: no discovery."""
    discover_log_levels: bool = True
    """Add each entry's ``detected_level`` to its structured metadata."""
    log_level_fields: tuple[str, ...] = ()
    """Names of level fields in order of preference; empty: the reference's list."""
    log_level_from_json_max_depth: int = 2
    """Depth of JSON objects searched for a level field (0 or less: any)."""


class UnparsableStream(msgspec.Struct, frozen=True):
    """A stream of a push whose label text does not parse."""

    labels: str
    """The label text as sent."""
    error: str
    """Why it does not parse."""
    entries: int
    bytes: int
    """Line and structured metadata bytes of its entries."""


@dataclass(slots=True)
class DecodedPush:
    """A push request as decoded, before any limit is checked."""

    streams: list[PushStream]
    """Streams with entries whose labels parsed, in request order."""
    raw_labels: list[str]
    """The label text of each of ``streams`` as sent (for the messages that quote it)."""
    unparsable: list[UnparsableStream]
    """Streams with entries whose labels did not parse."""
    sent_streams: int
    """Streams in the request, empty ones included (none at all answers 422)."""

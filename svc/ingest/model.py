"""The limits the push decoders enforce (their result, ``PushStream``, is in ``svc.model``)."""

from __future__ import annotations

from dataclasses import dataclass

# Re-exported: the decoders' result type lives in svc.model, below storage and query.
from svc.model import PushStream

__all__ = ["PushLimits", "PushStream"]

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

"""``svc_discarded_samples_total`` / ``svc_discarded_bytes_total`` (entries refused, with the
reference's reasons and labels) and ``svc_mutated_samples_total`` / ``_bytes_total``
(entries changed on the way in: lines cut to ``max_line_size``)."""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter

from svc.config import LimitsConfig
from svc.ingest.validate import Discard
from svc.limits.retention import retention_hours

__all__ = ["DiscardedData"]

_LABELS = ["reason", "tenant", "retention_hours", "policy", "format"]


class DiscardedData:
    """The counters, registered in one instance's registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.samples = Counter(
            "svc_discarded_samples",
            "The total number of samples that were discarded.",
            _LABELS,
            registry=registry,
        )
        self.bytes = Counter(
            "svc_discarded_bytes",
            "The total number of bytes that were discarded.",
            _LABELS,
            registry=registry,
        )
        self.mutated_samples = Counter(
            "svc_mutated_samples",
            "The total number of samples that have been mutated.",
            ["reason", "tenant"],
            registry=registry,
        )
        self.mutated_bytes = Counter(
            "svc_mutated_bytes",
            "The total number of bytes that have been mutated.",
            ["reason", "tenant"],
            registry=registry,
        )

    def discard(
        self, tenant: str, limits: LimitsConfig, fmt: str, discards: Iterable[Discard]
    ) -> None:
        """Count discarded entries (``fmt``: ``loki`` for pushes, ``otlp`` for OTLP)."""
        for item in discards:
            hours = retention_hours(limits, item.labels)
            labels = (item.reason, tenant, hours, "", fmt)
            if item.samples:
                self.samples.labels(*labels).inc(item.samples)
            if item.bytes:
                self.bytes.labels(*labels).inc(item.bytes)

    def discard_body(self, tenant: str, fmt: str, size: int) -> None:
        """Count the bytes of a body refused as too large once decompressed."""
        self.bytes.labels("request_body_too_large", tenant, "", "", fmt).inc(max(size, 0))

    def mutate(self, reason: str, tenant: str, samples: int, size: int) -> None:
        """Count entries changed on the way in."""
        if samples:
            self.mutated_samples.labels(reason, tenant).inc(samples)
            self.mutated_bytes.labels(reason, tenant).inc(size)

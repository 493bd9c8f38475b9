"""The compactor's metrics: the reference's deletion metrics (DELETION.md 10, ``svc_``
prefix) and svc's own for compaction and retention, in the instance's registry."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

__all__ = ["CompactorMetrics"]


class _DeletedLines(Collector):
    """``svc_compactor_deleted_lines{user}``: the reference's counter has no ``_total``,
    which prometheus_client would add to a Counter, so it is exposed as it is named."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.values: dict[str, float] = defaultdict(float)

    def add(self, tenant: str, lines: int) -> None:
        with self._lock:
            self.values[tenant] += lines

    def collect(self) -> Iterable[Metric]:
        metric = Metric(
            "svc_compactor_deleted_lines",
            "Log lines removed from storage by delete requests, per tenant.",
            "unknown",
        )
        with self._lock:
            for tenant, value in sorted(self.values.items()):
                metric.add_sample("svc_compactor_deleted_lines", {"user": tenant}, value)
        yield metric


class CompactorMetrics:
    """Counters and gauges of deletion, retention and compaction."""

    def __init__(self, registry: CollectorRegistry) -> None:
        reg = registry
        self.requests_received = Counter(
            "svc_compactor_delete_requests_received_total",
            "Delete requests received, per tenant.",
            ["user"],
            registry=reg,
        )
        self.requests_processed = Counter(
            "svc_compactor_delete_requests_processed_total",
            "Delete requests fully processed, per tenant.",
            ["user"],
            registry=reg,
        )
        self._deleted_lines = _DeletedLines()
        reg.register(self._deleted_lines)
        self.pending_requests = Gauge(
            "svc_compactor_pending_delete_requests_count",
            "Delete requests not processed yet.",
            registry=reg,
        )
        self.oldest_pending_age = Gauge(
            "svc_compactor_oldest_pending_delete_request_age_seconds",
            "Age of the oldest delete request past its cancel period and not processed yet.",
            registry=reg,
        )
        self.processing_failures = Counter(
            "svc_compactor_delete_processing_fails_total",
            "Delete request passes that failed, by cause.",
            ["cause"],
            registry=reg,
        )
        self.orphans_removed = Counter(
            "svc_compactor_orphaned_files_removed_total",
            "Lake files no catalog commit listed, removed after compactor.orphan_grace_period.",
            registry=reg,
        )
        self.load_attempts = Counter(
            "svc_compactor_load_pending_requests_attempts_total",
            "Loads of the pending delete requests, by status.",
            ["status"],
            registry=reg,
        )
        self.lookups = Counter(
            "svc_delete_request_lookups_total",
            "Lookups of the delete requests for query-time filtering.",
            registry=reg,
        )
        self.lookup_failures = Counter(
            "svc_delete_request_lookups_failed_total",
            "Failed lookups of the delete requests for query-time filtering.",
            registry=reg,
        )
        self.cache_gen_load_failures = Counter(
            "svc_delete_cache_gen_load_failures_total",
            "Failed loads of cache generation numbers.",
            registry=reg,
        )
        self.retention_removed_files = Counter(
            "svc_compactor_retention_removed_files_total",
            "Lake files dropped or rewritten by retention, per tenant.",
            ["user"],
            registry=reg,
        )
        self.retention_removed_rows = Counter(
            "svc_compactor_retention_removed_entries_total",
            "Entries removed by retention, per tenant.",
            ["user"],
            registry=reg,
        )
        self.retention_removed_bytes = Counter(
            "svc_compactor_retention_removed_bytes_total",
            "Line bytes removed by retention, per tenant.",
            ["user"],
            registry=reg,
        )
        self.jobs = Counter(
            "svc_compactor_jobs_total",
            "File rewrites by kind (compaction, delete, retention) and outcome.",
            ["kind", "outcome"],
            registry=reg,
        )
        self.input_bytes = Counter(
            "svc_compactor_input_bytes_total",
            "Bytes of the files compaction jobs replaced, by kind.",
            ["kind"],
            registry=reg,
        )
        self.output_bytes = Counter(
            "svc_compactor_output_bytes_total",
            "Bytes of the files compaction jobs wrote, by kind.",
            ["kind"],
            registry=reg,
        )
        self.last_run = Gauge(
            "svc_compactor_last_successful_run_timestamp_seconds",
            "When the compactor last finished a pass without error.",
            registry=reg,
        )
        self.waiting_removal = Gauge(
            "svc_compactor_files_waiting_removal",
            "Replaced lake files kept until no query reads them and their delay passed.",
            registry=reg,
        )

    def deleted_lines(self, tenant: str, lines: int) -> None:
        """Count lines a delete request removed from storage."""
        self._deleted_lines.add(tenant, lines)

    def watch_waiting(self, count: Callable[[], int]) -> None:
        """Read the number of files waiting for removal at scrape time."""
        self.waiting_removal.set_function(lambda: float(count()))

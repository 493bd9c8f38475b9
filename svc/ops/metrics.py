"""Prometheus metrics of one instance, in their own registry (never the global one).

Counters and histograms are updated on the request and write paths once per request;
everything that can be read from the store (head size, files on disk, active streams,
service states) is computed when ``/metrics`` is scraped.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from svc.ops.services import ServiceRegistry, State

if TYPE_CHECKING:
    from svc.storage.store import Store

__all__ = ["CONTENT_TYPE", "ASGIApp", "Metrics", "Receive", "Scope", "Send", "route_label"]

CONTENT_TYPE = "text/plain; version=0.0.4"  # litestar appends "; charset=utf-8"

_REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100)
_FSYNC_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5)
_NOT_LABEL = re.compile(r"[^a-z0-9_]+")
_PARAM = re.compile(r"\{([^}:]+)(?::[^}]*)?\}")
_QUERY_ROUTES = re.compile(
    r"(^|_)(query|query_range|labels?|series|tail|index_stats|index_volume|index_volume_range|"
    r"patterns|detected_fields?|detected_labels)($|_)"
)

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def route_label(path_template: str) -> str:
    """The ``route`` label of a path, as the reference names routes (``svc_api_v1_push``)."""
    label = _NOT_LABEL.sub("_", _PARAM.sub(r"\1", path_template).lower())
    return label.strip("_") or "root"


class _StoreCollector(Collector):
    """Gauges and counters read from the store and the services at scrape time."""

    def __init__(self, store: Store, services: ServiceRegistry) -> None:
        self.store = store
        self.services = services

    def collect(self) -> Iterable[Metric]:
        yield from self._head()
        yield from self._files()
        yield from self._faults()
        flushes = CounterMetricFamily(
            "svc_ingester_flushes", "Flushes of the in-memory head to Parquet files."
        )
        flushes.add_metric([], self.store.flushes_total)
        yield flushes
        states = GaugeMetricFamily(
            "svc_service_state",
            "1 for the state each internal service is in (GET /services).",
            labels=["service", "state"],
        )
        degraded = GaugeMetricFamily(
            "svc_service_degraded",
            "1 when a running service is degraded (the reason is on GET /services).",
            labels=["service"],
        )
        for service in self.services:
            for state in State:
                states.add_metric([service.name, str(state)], float(service.state is state))
            degraded.add_metric([service.name], float(service.degraded() is not None))
        yield states
        yield degraded

    def _faults(self) -> Iterable[Metric]:
        """Counters of storage faults met and handled."""
        store, wal, guard = self.store, self.store.wal, self.store.disk_guard
        counters = [
            (
                "svc_wal_write_failures",
                "WAL batches that could not be made durable (their pushes got 503).",
                wal.write_failures_total,
            ),
            (
                "svc_wal_corrupt_records",
                "Damaged spans of WAL segments skipped at replay (each lost one record or more).",
                wal.corrupt_records_total,
            ),
            (
                "svc_ingester_flush_failures",
                "Flushes that failed (their entries stay in memory and in the WAL).",
                store.flush_failures_total,
            ),
            (
                "svc_lake_quarantined_files",
                "Lake files found missing or damaged and moved to quarantine.",
                store.quarantined_files_total,
            ),
            (
                "svc_ingester_wal_disk_full_failures",
                "Times disk usage reached ingester.wal.disk_full_threshold (pushes refused).",
                guard.throttle_events_total,
            ),
        ]
        for name, documentation, value in counters:
            counter = CounterMetricFamily(name, documentation)
            counter.add_metric([], value)
            yield counter
        if guard.usage is not None:
            usage = GaugeMetricFamily(
                "svc_ingester_wal_disk_usage_percent",
                "Used share (0 to 1) of the data directory's filesystem at the last check.",
            )
            usage.add_metric([], guard.usage)
            yield usage

    def _head(self) -> Iterable[Metric]:
        head = self.store.head
        size = GaugeMetricFamily("svc_ingester_head_bytes", "Line bytes held in the head.")
        size.add_metric([], head.line_bytes)
        rows = GaugeMetricFamily("svc_ingester_head_entries", "Entries held in the head.")
        rows.add_metric([], head.rows)
        streams = GaugeMetricFamily(
            "svc_ingester_memory_streams",
            "Streams with entries in the head (active streams), per tenant.",
            labels=["tenant"],
        )
        for tenant in list(head.tenants):
            table = head.table(tenant)
            if table is not None:
                streams.add_metric([tenant], pc.count_distinct(table["stream_id"]).as_py())
        yield from (size, rows, streams)

    def _files(self) -> Iterable[Metric]:
        files = GaugeMetricFamily(
            "svc_store_files", "Parquet files listed in the catalog, per tenant.", labels=["tenant"]
        )
        size = GaugeMetricFamily(
            "svc_store_bytes", "Bytes of the listed Parquet files, per tenant.", labels=["tenant"]
        )
        try:
            entries = self.store.catalog.all_files()
        except Exception:  # the catalog is closed during shutdown
            entries = []
        counts: dict[str, int] = defaultdict(int)
        sizes: dict[str, int] = defaultdict(int)
        for entry in entries:
            counts[entry.tenant] += 1
            sizes[entry.tenant] += entry.file_bytes
        for tenant in sorted(counts):
            files.add_metric([tenant], counts[tenant])
            size.add_metric([tenant], sizes[tenant])
        yield from (files, size)


class Metrics:
    """Every metric of one instance and the hooks that update them."""

    def __init__(self) -> None:
        # Process-wide switch: no ``_created`` series, as the reference's exposition.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry(auto_describe=True)
        reg = self.registry
        ProcessCollector(registry=reg)
        PlatformCollector(registry=reg)
        self.bytes_received = Counter(
            "svc_distributor_bytes_received",
            "Line bytes of accepted log entries, per tenant.",
            ["tenant"],
            registry=reg,
        )
        self.lines_received = Counter(
            "svc_distributor_lines_received",
            "Accepted log entries, per tenant.",
            ["tenant"],
            registry=reg,
        )
        self.request_duration = Histogram(
            "svc_request_duration_seconds",
            "Time (in seconds) spent serving HTTP requests.",
            ["method", "route", "status_code", "ws"],
            buckets=_REQUEST_BUCKETS,
            registry=reg,
        )
        self.wal_fsync = Histogram(
            "svc_ingester_wal_fsync_duration_seconds",
            "Time spent in one group-commit fdatasync of the write-ahead log.",
            buckets=_FSYNC_BUCKETS,
            registry=reg,
        )
        self.query_queue = Gauge(
            "svc_query_queue_length",
            "Query requests accepted and not yet answered (waiting or running).",
            registry=reg,
        )
        self.shutdown_marker = Gauge(
            "svc_ingester_shutdown_marker",
            "1 if prepare-shutdown has been requested, 0 otherwise.",
            registry=reg,
        )
        self._routes: dict[str, tuple[str, bool]] = {}

    def watch(self, store: Store, services: ServiceRegistry) -> None:
        """Hook the store's write path and WAL, and read them at scrape time."""
        store.on_push = self.observe_push
        store.wal.on_sync = self.wal_fsync.observe
        self.registry.register(_StoreCollector(store, services))

    def observe_push(self, tenant: str, lines: int, line_bytes: int) -> None:
        """Count one accepted push request."""
        self.lines_received.labels(tenant).inc(lines)
        self.bytes_received.labels(tenant).inc(line_bytes)

    def exposition(self) -> bytes:
        """The text exposition of every metric."""
        return generate_latest(self.registry)

    def route(self, path_template: str) -> tuple[str, bool]:
        """The route label of a path template, and whether it is a query route."""
        found = self._routes.get(path_template)
        if found is None:
            label = route_label(path_template)
            is_query = bool(_QUERY_ROUTES.search(label)) and "format_query" not in label
            found = (label, is_query)
            self._routes[path_template] = found
        return found

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """ASGI middleware timing every routed HTTP request by method, route and status."""

        async def timed(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            route, is_query = self.route(str(scope.get("path_template") or scope["path"]))
            status = 500

            async def capture(message: MutableMapping[str, Any]) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                await send(message)

            started = time.perf_counter()
            if is_query:
                self.query_queue.inc()
            try:
                await app(scope, receive, capture)
            finally:
                if is_query:
                    self.query_queue.dec()
                elapsed = time.perf_counter() - started
                self.request_duration.labels(scope["method"], route, str(status), "false").observe(
                    elapsed
                )

        return timed

"""Metrics and the log line of SQL queries."""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["SqlMetrics"]

log = logging.getLogger("svc.sql")

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100)


class SqlMetrics:
    """``svc_sql_queries_total{status}`` and ``svc_sql_query_duration_seconds{status}``."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.queries = Counter(
            "svc_sql_queries",
            "SQL queries answered, by outcome: success, refused (the sandbox's static check), "
            "bad_request (other 4xx), timeout, canceled (the client left) or failed.",
            ["status"],
            registry=registry,
        )
        self.duration = Histogram(
            "svc_sql_query_duration_seconds",
            "Time from an SQL query's arrival to its last byte, by outcome.",
            ["status"],
            buckets=_BUCKETS,
            registry=registry,
        )

    def record(
        self,
        *,
        tenants: tuple[str, ...],
        status: str,
        seconds: float,
        rows: int,
        result_format: str,
        query: str,
    ) -> None:
        """Count one answered query and log it."""
        self.queries.labels(status).inc()
        self.duration.labels(status).observe(seconds)
        log.info(
            "sql query: tenant=%s status=%s seconds=%.6f rows=%d format=%s query=%r",
            "|".join(tenants),
            status,
            seconds,
            rows,
            result_format,
            query[:2000],
        )

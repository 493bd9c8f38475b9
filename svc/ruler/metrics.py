"""The ruler's metrics, in the instance's registry (names after the reference's, ``svc_``).

Per tenant (``user``) and, unless ``disable_rule_group_label``, per rule group
(``rule_group`` = ``<namespace>;<group>``): evaluations, failures, duration, missed
iterations, last evaluation time; per tenant: Alertmanager notifications sent, failed,
dropped and queued; per tenant and client: remote-write samples sent, failed, retried
and pending.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from svc.ruler.manager import Manager
    from svc.ruler.notifier import Notifier
    from svc.ruler.remote_write import RemoteWriter

__all__ = ["RulerMetrics"]

_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class RulerMetrics:
    """Counters updated as rules run, gauges read when ``/metrics`` is scraped."""

    def __init__(self, registry: CollectorRegistry, *, rule_group_label: bool) -> None:
        self.rule_group_label = rule_group_label
        group_labels = ["user", "rule_group"] if rule_group_label else ["user"]
        self.evaluations = Counter(
            "svc_prometheus_rule_evaluations",
            "Rule evaluations.",
            group_labels,
            registry=registry,
        )
        self.failures = Counter(
            "svc_prometheus_rule_evaluation_failures",
            "Rule evaluations that failed.",
            group_labels,
            registry=registry,
        )
        self.duration = Histogram(
            "svc_prometheus_rule_evaluation_duration_seconds",
            "Time one rule evaluation takes.",
            ["user"],
            buckets=_BUCKETS,
            registry=registry,
        )
        self.missed = Counter(
            "svc_prometheus_rule_group_iterations_missed",
            "Group evaluations skipped because the previous one overran.",
            group_labels,
            registry=registry,
        )
        self.query_seconds = Counter(
            "svc_ruler_queries_seconds",
            "Wall time of rule queries (with ruler.query_stats_enabled).",
            ["user"],
            registry=registry,
        )
        self.notifications = Counter(
            "svc_prometheus_notifications",
            "Alerts sent to Alertmanager (outcome: sent, failed, dropped).",
            ["user", "outcome"],
            registry=registry,
        )
        self.remote_write = Counter(
            "svc_ruler_remote_write_samples",
            "Remote-write samples (outcome: sent, failed, retried).",
            ["tenant", "client", "outcome"],
            registry=registry,
        )
        self.appended = Counter(
            "svc_ruler_wal_samples_appended",
            "Samples buffered for remote write.",
            ["tenant"],
            registry=registry,
        )

    def group_labels(self, tenant: str, namespace: str, group: str) -> list[str]:
        """Label values of a per-group metric."""
        return [tenant, f"{namespace};{group}"] if self.rule_group_label else [tenant]

    def observe_rule(
        self, tenant: str, namespace: str, group: str, seconds: float, failed: bool
    ) -> None:
        """Count one rule evaluation."""
        labels = self.group_labels(tenant, namespace, group)
        self.evaluations.labels(*labels).inc()
        if failed:
            self.failures.labels(*labels).inc()
        self.duration.labels(tenant).observe(seconds)

    def observe_notifications(self, tenant: str, outcome: str, count: int) -> None:
        """Count alerts sent, failed or dropped."""
        self.notifications.labels(tenant, outcome).inc(count)

    def observe_remote_write(self, tenant: str, client: str, outcome: str, count: int) -> None:
        """Count remote-write samples by outcome."""
        self.remote_write.labels(tenant, client, outcome).inc(count)

    def watch(
        self,
        registry: CollectorRegistry,
        manager: Manager,
        notifier: Notifier,
        writer: RemoteWriter,
    ) -> None:
        """Read the scrape-time gauges from the running parts."""
        registry.register(_RulerCollector(self, manager, notifier, writer))


class _RulerCollector(Collector):
    def __init__(
        self,
        metrics: RulerMetrics,
        manager: Manager,
        notifier: Notifier,
        writer: RemoteWriter,
    ) -> None:
        self.metrics = metrics
        self.manager = manager
        self.notifier = notifier
        self.writer = writer

    def collect(self) -> Iterable[Metric]:
        group_label_names = ["user", "rule_group"] if self.metrics.rule_group_label else ["user"]
        last = GaugeMetricFamily(
            "svc_prometheus_rule_group_last_evaluation_timestamp_seconds",
            "When each rule group was last evaluated.",
            labels=group_label_names,
        )
        rules = GaugeMetricFamily(
            "svc_prometheus_rule_group_rules", "Rules in each rule group.", labels=group_label_names
        )
        queue = GaugeMetricFamily(
            "svc_prometheus_notifications_queue_length",
            "Alerts waiting to be sent to Alertmanager.",
            labels=["user"],
        )
        newest: dict[tuple[str, ...], float] = {}
        counts: dict[tuple[str, ...], int] = {}
        for group in self.manager.all_groups():
            # without the rule_group label, a tenant's groups add up to one series
            labels = tuple(self.metrics.group_labels(*group.key))
            newest[labels] = max(newest.get(labels, 0.0), group.last_evaluation_ns / 1e9)
            counts[labels] = counts.get(labels, 0) + len(group.rules)
        for labels in sorted(newest):
            last.add_metric(list(labels), newest[labels])
            rules.add_metric(list(labels), counts[labels])
        tenants = {labels[0] for labels in newest}
        for tenant in sorted(tenants):
            queue.add_metric([tenant], self.notifier.queue_length(tenant))
        pending = GaugeMetricFamily(
            "svc_ruler_remote_write_samples_pending",
            "Samples buffered and not yet sent, per client.",
            labels=["tenant", "client"],
        )
        for (tenant, client), count in sorted(self.writer.pending().items()):
            pending.add_metric([tenant, client], count)
        yield from (last, rules, queue, pending)

"""The ruler as one part of a running instance: store, manager, notifier, remote write.

Built from the config by :func:`build_ruler` for the targets that run it (``all``,
``ruler``, ``backend``); started and stopped as the ``ruler`` internal service.
"""

from __future__ import annotations

import functools
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from svc.config import lake_object_store
from svc.ruler.alerting import AlertingRule, OutputSample
from svc.ruler.config import RulerConfig, tenant_list
from svc.ruler.evaluation import (
    Evaluator,
    JitterEvaluator,
    LocalEvaluator,
    RemoteEvaluator,
    Sample,
)
from svc.ruler.forstate import ForStateStore, restore_group
from svc.ruler.group import GroupContext, GroupRuntime
from svc.ruler.manager import Manager
from svc.ruler.metrics import RulerMetrics
from svc.ruler.notifier import Notifier
from svc.ruler.object_store import ObjectRuleStore
from svc.ruler.recording import RecordingRule
from svc.ruler.remote_write import RemoteWriter
from svc.ruler.rulefmt import RuleGroup
from svc.ruler.store import LocalRuleStore, RuleStore
from svc.storage.backend_config import object_store_settings
from svc.storage.objects import one_bucket, s3_filesystem

if TYPE_CHECKING:
    from collections.abc import Callable

    from prometheus_client import CollectorRegistry

    from svc.config import Config, LimitsConfig
    from svc.query.engine import QueryEngine

__all__ = ["RULER_TARGETS", "Ruler", "build_ruler"]

log = logging.getLogger(__name__)

RULER_TARGETS: Final = frozenset({"all", "ruler", "backend"})


def _seconds_ns(seconds: float) -> int:
    return round(seconds * 1e9)


class Ruler:
    """Rule storage and evaluation of every tenant."""

    def __init__(
        self,
        config: Config,
        store: RuleStore,
        evaluator: Evaluator,
        registry: CollectorRegistry,
        limits_for: Callable[[str], LimitsConfig],
    ) -> None:
        self.config = config
        self.limits_for = limits_for
        cfg: RulerConfig = config.ruler
        self.cfg = cfg
        self.store = store
        self.evaluator = evaluator
        root = Path(config.common.path_prefix)
        self.metrics = RulerMetrics(registry, rule_group_label=not cfg.disable_rule_group_label)
        self.notifier = Notifier(cfg, self.metrics.observe_notifications)
        wal_dir = Path(cfg.wal.dir)
        self.writer = RemoteWriter(
            cfg.remote_write,
            wal_dir if wal_dir.is_absolute() else root / wal_dir,
            max_age_s=cfg.wal.max_age,
            truncate_every_s=cfg.wal.truncate_frequency,
            disabled=self._remote_write_disabled,
            observe=self.metrics.observe_remote_write,
        )
        self.for_state = ForStateStore(root / "ruler" / "for-state")
        self.context = GroupContext(
            evaluator=self._timed(evaluator),
            append=self.append,
            notify=self.notifier.send,
            observe=self.metrics.observe_rule,
            resend_delay_ns=_seconds_ns(cfg.resend_delay),
            external_labels=dict(cfg.external_labels),
            external_url=cfg.external_url,
        )
        enabled, disabled = tenant_list(cfg.enabled_tenants), tenant_list(cfg.disabled_tenants)
        self.manager = Manager(
            store,
            build=self._build_group,
            evaluate=self._evaluate_group,
            append=self.append,
            forget=self.for_state.delete,
            tenant_allowed=lambda t: (not enabled or t in enabled) and t not in disabled,
            poll_interval_s=cfg.poll_interval,
            max_concurrent=cfg.max_concurrent_evaluations,
        )
        self.metrics.watch(registry, self.manager, self.notifier, self.writer)

    # limits ------------------------------------------------------------------------

    def group_limits(self, tenant: str) -> tuple[int, int]:
        """``ruler_max_rules_per_rule_group`` and ``ruler_max_rule_groups_per_tenant``."""
        limits = self.limits_for(tenant)
        return limits.ruler_max_rules_per_rule_group, limits.ruler_max_rule_groups_per_tenant

    def _remote_write_disabled(self, tenant: str) -> bool:
        return self.limits_for(tenant).ruler_remote_write_disabled

    # evaluation --------------------------------------------------------------------

    def _timed(self, evaluator: Evaluator) -> Evaluator:
        if not self.cfg.query_stats_enabled:
            return evaluator
        metrics = self.metrics

        class Timed:
            """The evaluator, timing each query (``query_stats_enabled``)."""

            def instant(self, tenant: str, expr: str, ts_ns: int) -> list[Sample]:
                started = time.perf_counter()
                try:
                    return evaluator.instant(tenant, expr, ts_ns)
                finally:
                    elapsed = time.perf_counter() - started
                    metrics.query_seconds.labels(tenant).inc(elapsed)
                    log.info("ruler query: tenant=%s seconds=%.6f expr=%s", tenant, elapsed, expr)

        return Timed()

    def _build_group(
        self, tenant: str, namespace: str, group: RuleGroup, restore: bool
    ) -> GroupRuntime:
        rules: list[AlertingRule | RecordingRule] = []
        for rule in group.rules:
            if rule.alert:
                alerting = AlertingRule(
                    rule,
                    external_labels=dict(self.cfg.external_labels),
                    external_url=self.cfg.external_url,
                    query=functools.partial(self.evaluator.instant, tenant),
                )
                alerting.restored = not restore
                rules.append(alerting)
            else:
                rules.append(RecordingRule(rule))
        interval = group.interval_ns or _seconds_ns(self.cfg.evaluation_interval)
        return GroupRuntime(tenant, namespace, group, interval, rules)

    def _evaluate_group(self, group: GroupRuntime, ts_ns: int) -> None:
        group.evaluate(ts_ns, self.context)
        rules = group.alerting_rules()
        if not rules:
            return
        if group.evaluations >= 2 and not all(rule.restored for rule in rules):
            restore_group(
                group,
                self.for_state.load(group.key),
                time.time_ns(),
                _seconds_ns(self.cfg.for_grace_period),
                _seconds_ns(self.cfg.for_outage_tolerance),
            )
        if all(rule.restored for rule in rules):
            try:
                self.for_state.save(group, ts_ns)
            except OSError as exc:
                log.warning("saving the alert state of %s failed: %s", group.key, exc)

    def append(self, tenant: str, samples: list[OutputSample]) -> None:
        """Hand output samples to remote write (discarded when it is off)."""
        count = self.writer.append(tenant, samples)
        if count:
            self.metrics.appended.labels(tenant).inc(count)

    # lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Start sending what is buffered, load the rules, start evaluating."""
        self.writer.start()
        cleaner = self.cfg.wal_cleaner
        if cleaner.period > 0:
            self.writer.start_cleaner(cleaner.min_age, cleaner.period, self._tenants_with_rules)
        self.manager.start()

    def _tenants_with_rules(self) -> set[str]:
        return {group.tenant for group in self.manager.all_groups()}

    def stop(self) -> None:
        """Stop evaluating, send queued alerts, stop the senders."""
        self.manager.stop()
        self.notifier.stop()
        self.writer.stop()

    def request_sync(self) -> None:
        """Pick up stored changes now."""
        self.manager.request_sync()

    def groups(self, tenant: str) -> list[GroupRuntime]:
        """The tenant's loaded groups."""
        return self.manager.groups(tenant)


def rules_directory(config: Config) -> Path:
    """The local rule directory (default ``<path_prefix>/rules``)."""
    local = config.ruler.storage.local.directory
    return Path(local) if local else Path(config.common.path_prefix) / "rules"


def build_ruler(
    config: Config,
    engine: QueryEngine,
    registry: CollectorRegistry,
    limits_for: Callable[[str], LimitsConfig],
) -> Ruler:
    """The ruler of an instance: local rule store and the configured evaluation mode."""
    evaluation = config.ruler.evaluation
    evaluator: Evaluator
    if evaluation.mode == "remote":
        evaluator = RemoteEvaluator(
            evaluation.query_frontend.address,
            tls=evaluation.query_frontend.tls_enabled,
            timeout_seconds=config.limits_config.query_timeout,
        )
    else:
        evaluator = LocalEvaluator(engine, limits_for)
    if evaluation.max_jitter > 0:
        evaluator = JitterEvaluator(evaluator, evaluation.max_jitter)
    return Ruler(config, rule_store(config), evaluator, registry, limits_for)


def rule_store(config: Config) -> RuleStore:
    """Where rule groups are kept: ``ruler.storage.type: s3`` (``ruler.storage.s3``, else the
    common S3 settings), or by default the lake's bucket when the lake is in S3, as the
    reference's common storage puts rules in its object store; else the local directory."""
    storage = config.ruler.storage
    if storage.type == "s3":
        own = storage.s3 if storage.s3.bucketnames else config.storage_config.aws
        settings = object_store_settings("s3", own, config.common.storage.s3)
    elif storage.type == "":
        settings = lake_object_store(config)
    else:
        settings = None
    if settings is None:
        return LocalRuleStore(rules_directory(config))
    settings = one_bucket(settings)
    return ObjectRuleStore(s3_filesystem(settings), settings.bucket)

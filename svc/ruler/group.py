"""One rule group's evaluation: its rules in order at one timestamp (Prometheus' group).

Each rule is queried, its output appended for remote write, alerts due handed to the
notifier; series a rule produced last time and not this time get a stale marker. A
failing rule records ``health: err`` and ``lastError`` and does not stop the others.
"""

from __future__ import annotations

import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from svc.ruler.alerting import Alert, AlertingRule, OutputSample
from svc.ruler.evaluation import EvaluationError, Evaluator, Labels
from svc.ruler.recording import RecordingRule
from svc.ruler.rulefmt import RuleGroup

__all__ = ["STALE_NAN", "GroupContext", "GroupRuntime", "RuleStatus"]

log = logging.getLogger(__name__)

STALE_NAN: Final = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000002))[0]
"""Prometheus' stale marker: a NaN with its own bit pattern."""

AnyRule = AlertingRule | RecordingRule


@dataclass
class GroupContext:
    """What a group's evaluation talks to (the ruler's services for one tenant)."""

    evaluator: Evaluator
    append: Callable[[str, list[OutputSample]], None]
    notify: Callable[[str, str, list[Alert]], None]
    observe: Callable[[str, str, str, float, bool], None]
    resend_delay_ns: int
    external_labels: dict[str, str]
    external_url: str


@dataclass
class RuleStatus:
    """Health of a rule: ``unknown`` before its first evaluation, then ``ok`` or ``err``."""

    health: str = "unknown"
    last_error: str = ""
    last_evaluation_ns: int = 0
    evaluation_seconds: float = 0.0


@dataclass
class GroupRuntime:
    """A loaded rule group of a tenant, with its rules' state."""

    tenant: str
    namespace: str
    group: RuleGroup
    interval_ns: int
    rules: list[AnyRule]
    statuses: list[RuleStatus] = field(default_factory=list)
    last_evaluation_ns: int = 0
    evaluation_seconds: float = 0.0
    evaluations: int = 0
    previous_series: list[dict[Labels, None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.statuses = [RuleStatus() for _ in self.rules]
        self.previous_series = [{} for _ in self.rules]

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity: tenant, namespace, group name."""
        return (self.tenant, self.namespace, self.group.name)

    def alerting_rules(self) -> list[AlertingRule]:
        """The group's alerting rules."""
        return [rule for rule in self.rules if isinstance(rule, AlertingRule)]

    def evaluate(self, ts_ns: int, ctx: GroupContext) -> None:
        """One iteration at ``ts_ns`` (the scheduled time, not the wall clock)."""
        started_wall = time.time_ns()
        started = time.perf_counter()
        for index, rule in enumerate(self.rules):
            self._evaluate_rule(index, rule, ts_ns, ctx)
        self.evaluation_seconds = time.perf_counter() - started
        self.last_evaluation_ns = started_wall
        self.evaluations += 1

    def _evaluate_rule(self, index: int, rule: AnyRule, ts_ns: int, ctx: GroupContext) -> None:
        status = self.statuses[index]
        started_wall = time.time_ns()
        started = time.perf_counter()
        failed = True
        try:
            samples = ctx.evaluator.instant(self.tenant, rule.rule.expr, ts_ns)
            output = rule.evaluate(samples, ts_ns, self.group.limit)
            failed = False
        except EvaluationError as exc:
            status.health, status.last_error = "err", str(exc)
            log.warning(
                "evaluating rule failed: tenant=%s group=%s rule=%s err=%s",
                self.tenant,
                self.group.name,
                rule.name,
                exc,
            )
        except Exception as exc:  # an engine fault must not stop the group's other rules
            status.health, status.last_error = "err", str(exc)
            log.exception(
                "evaluating rule failed: tenant=%s group=%s rule=%s",
                self.tenant,
                self.group.name,
                rule.name,
            )
        finally:
            status.evaluation_seconds = time.perf_counter() - started
            status.last_evaluation_ns = started_wall
            ctx.observe(
                self.tenant, self.namespace, self.group.name, status.evaluation_seconds, failed
            )
        if failed:
            return
        status.health, status.last_error = "ok", ""
        if isinstance(rule, AlertingRule):
            due = rule.to_send(ts_ns, ctx.resend_delay_ns, self.interval_ns)
            if due:
                ctx.notify(self.tenant, rule.rule.expr, due)
        returned = {sample.labels: None for sample in output}
        ms = ts_ns // 1_000_000
        stale = [
            OutputSample(labels, ms, STALE_NAN)
            for labels in self.previous_series[index]
            if labels not in returned
        ]
        ctx.append(self.tenant, output + stale)
        self.previous_series[index] = returned

    def stale_markers(self, ts_ns: int) -> list[OutputSample]:
        """Stale markers for every series of the last evaluation (the group goes away)."""
        ms = ts_ns // 1_000_000
        return [
            OutputSample(labels, ms, STALE_NAN)
            for series in self.previous_series
            for labels in series
        ]

    def copy_state(self, old: GroupRuntime) -> None:
        """Carry alerts, series and timings over from the previous version of the group.

        Rules are matched by name and labels, the first with the first (as Prometheus).
        """
        self.last_evaluation_ns = old.last_evaluation_ns
        self.evaluation_seconds = old.evaluation_seconds
        self.evaluations = old.evaluations
        unmatched: dict[tuple[str, str, Labels], list[int]] = {}
        for i, rule in enumerate(old.rules):
            unmatched.setdefault(_identity(rule), []).append(i)
        for i, rule in enumerate(self.rules):
            indexes = unmatched.get(_identity(rule))
            if not indexes:
                continue
            j = indexes.pop(0)
            self.previous_series[i] = old.previous_series[j]
            self.statuses[i] = old.statuses[j]
            old_rule = old.rules[j]
            if isinstance(rule, AlertingRule) and isinstance(old_rule, AlertingRule):
                rule.active.update(old_rule.active)
                rule.restored = rule.restored or old_rule.restored

    def leftover_stale_markers(self, old: GroupRuntime, ts_ns: int) -> list[OutputSample]:
        """Stale markers for the series of ``old``'s rules that no rule here took over."""
        taken = {_identity(rule) for rule in self.rules}
        ms = ts_ns // 1_000_000
        return [
            OutputSample(labels, ms, STALE_NAN)
            for i, rule in enumerate(old.rules)
            if _identity(rule) not in taken
            for labels in old.previous_series[i]
        ]


def _identity(rule: AnyRule) -> tuple[str, str, Labels]:
    return (rule.kind, rule.name, tuple(sorted(rule.rule.labels.items())))

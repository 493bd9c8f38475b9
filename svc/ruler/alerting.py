"""Alerting rules: the alert state machine of RULER.md 5 (Prometheus' alerting rule).

One alert per distinct label set of the result (result labels without ``__name__``, the
rule's expanded labels over them, then ``alertname``)::

    (none) --present--> pending --present, for elapsed--> firing
    pending --absent--> (deleted)          firing --absent--> inactive (resolved)
    inactive: kept 15 minutes for resolved notifications; present again: a new pending alert

While restored, each evaluation also yields ``ALERTS`` and ``ALERTS_FOR_STATE`` series.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Final

from svc.ruler.evaluation import EvaluationError, Labels, Sample, labels_key
from svc.ruler.rulefmt import Rule
from svc.ruler.template_funcs import TemplateScope
from svc.ruler.templates import expand

__all__ = ["Alert", "AlertState", "AlertingRule", "OutputSample"]

RESOLVED_RETENTION_NS: Final = 15 * 60 * 1_000_000_000
DUPLICATE_ALERT = "vector contains metrics with the same labelset after applying alert labels"


class AlertState(enum.IntEnum):
    """An alert's state; rules report the highest state of their alerts."""

    INACTIVE = 1
    PENDING = 2
    FIRING = 3

    def __str__(self) -> str:
        return self.name.lower()


@dataclass
class Alert:
    """One alert instance of an alerting rule."""

    labels: Labels
    annotations: Labels
    state: AlertState
    active_at_ns: int
    value: float
    fired_at_ns: int = 0
    resolved_at_ns: int = 0
    last_sent_at_ns: int = 0
    valid_until_ns: int = 0

    def needs_sending(self, ts_ns: int, resend_delay_ns: int) -> bool:
        """Pending never; resolved since the last send, or not sent for ``resend_delay``."""
        if self.state is AlertState.PENDING:
            return False
        if self.resolved_at_ns > self.last_sent_at_ns:
            return True
        return self.last_sent_at_ns + resend_delay_ns < ts_ns


@dataclass(frozen=True, slots=True)
class OutputSample:
    """A sample a rule writes: series labels (``__name__`` included), time (ms), value."""

    labels: Labels
    timestamp_ms: int
    value: float


ExpandQuery = Callable[[str, int], list[Sample]]


class AlertingRule:
    """An ``alert:`` rule and the state of its alerts."""

    kind = "alerting"

    def __init__(
        self,
        rule: Rule,
        *,
        external_labels: dict[str, str],
        external_url: str,
        query: ExpandQuery | None = None,
    ) -> None:
        self.rule = rule
        self.external_labels = external_labels
        self.external_url = external_url
        self.query = query
        self.active: dict[Labels, Alert] = {}
        self.restored = False

    @property
    def name(self) -> str:
        """The alert name."""
        return self.rule.alert

    def _template_query(self, expr: str, ts_ns: int) -> list[tuple[Mapping[str, str], float]]:
        if self.query is None:
            raise EvaluationError("query is not available")
        return [(dict(s.labels), s.value) for s in self.query(expr, ts_ns)]

    def _alert_for(self, sample: Sample, ts_ns: int) -> Alert:
        result_labels = dict(sample.labels)
        scope = TemplateScope(ts_ns, self.external_url, self._template_query)

        def expand_text(text: str) -> str:
            return expand(self.name, text, result_labels, sample.value, self.external_labels, scope)

        labels = {k: v for k, v in result_labels.items() if k != "__name__"}
        for key, text in self.rule.labels.items():
            labels[key] = expand_text(text)
        labels["alertname"] = self.name
        # an empty value removes the label, as Prometheus' label builder does
        labels = {name: value for name, value in labels.items() if value}
        annotations = {key: expand_text(text) for key, text in self.rule.annotations.items()}
        return Alert(
            labels=labels_key(labels),
            annotations=labels_key(annotations),
            state=AlertState.PENDING,
            active_at_ns=ts_ns,
            value=sample.value,
        )

    def evaluate(self, samples: list[Sample], ts_ns: int, limit: int) -> list[OutputSample]:
        """Advance the state machine with the result at ``ts_ns``; the ALERTS series."""
        current: dict[Labels, Alert] = {}
        for sample in samples:
            alert = self._alert_for(sample, ts_ns)
            if alert.labels in current:
                raise EvaluationError(DUPLICATE_ALERT)
            current[alert.labels] = alert
        for key, alert in current.items():
            known = self.active.get(key)
            if known is not None and known.state is not AlertState.INACTIVE:
                known.value = alert.value
                known.annotations = alert.annotations
            else:
                self.active[key] = alert
        return self._advance(set(current), ts_ns, limit)

    def _advance(self, present: set[Labels], ts_ns: int, limit: int) -> list[OutputSample]:
        hold = self.rule.for_ns
        out: list[OutputSample] = []
        count = 0
        for key, alert in list(self.active.items()):
            if key not in present:
                retention_over = (
                    alert.resolved_at_ns and ts_ns - alert.resolved_at_ns > RESOLVED_RETENTION_NS
                )
                if alert.state is AlertState.PENDING or retention_over:
                    del self.active[key]
                if alert.state is not AlertState.INACTIVE:
                    alert.state = AlertState.INACTIVE
                    alert.resolved_at_ns = ts_ns
                continue
            count += 1
            if alert.state is AlertState.PENDING and ts_ns - alert.active_at_ns >= hold:
                alert.state = AlertState.FIRING
                alert.fired_at_ns = ts_ns
            if alert.state is AlertState.FIRING and ts_ns - alert.active_at_ns < hold:
                alert.state = AlertState.PENDING
                alert.fired_at_ns = alert.last_sent_at_ns = 0
            if self.restored:
                out += self._series(alert, ts_ns)
        if 0 < limit < count:
            self.active = {}
            raise EvaluationError(f"exceeded limit of {limit} with {count} alerts")
        return out

    def _series(self, alert: Alert, ts_ns: int) -> list[OutputSample]:
        labels = dict(alert.labels)
        ms = ts_ns // 1_000_000
        alerts = {**labels, "__name__": "ALERTS", "alertstate": str(alert.state)}
        for_state = {**labels, "__name__": "ALERTS_FOR_STATE"}
        return [
            OutputSample(labels_key(alerts), ms, 1.0),
            OutputSample(labels_key(for_state), ms, float(alert.active_at_ns // 1_000_000_000)),
        ]

    def to_send(self, ts_ns: int, resend_delay_ns: int, interval_ns: int) -> list[Alert]:
        """Alerts due for Alertmanager at ``ts_ns``, marked sent (copies)."""
        due = []
        for alert in self.active.values():
            if alert.needs_sending(ts_ns, resend_delay_ns):
                alert.last_sent_at_ns = ts_ns
                alert.valid_until_ns = ts_ns + 4 * max(resend_delay_ns, interval_ns)
                due.append(replace(alert))
        return due

    def unresolved(self) -> list[Alert]:
        """Pending and firing alerts, by labels."""
        return sorted(
            (a for a in list(self.active.values()) if a.state is not AlertState.INACTIVE),
            key=lambda a: a.labels,
        )

    def state(self) -> str:
        """The highest state of the alerts (``inactive`` without any)."""
        states = [a.state for a in list(self.active.values())]
        return str(max(states, default=AlertState.INACTIVE))

    def restore(
        self, saved: dict[Labels, int], down_at_ns: int, now_ns: int, grace_ns: int
    ) -> None:
        """Move ``activeAt`` of alerts found in the saved state (Prometheus' rules).

        ``saved`` maps alert labels to their ``activeAt`` (ns) at ``down_at_ns``, the last
        evaluation before the restart.
        """
        hold = self.rule.for_ns
        for key, alert in self.active.items():
            saved_active = saved.get(key)
            if saved_active is None:
                continue
            down_at = down_at_ns // 1_000_000_000 * 1_000_000_000
            active_at = saved_active // 1_000_000_000 * 1_000_000_000
            remaining = hold - (down_at - active_at)
            if remaining <= 0:
                pass  # it was firing: it fires again at the next evaluation
            elif remaining < grace_ns:
                active_at = now_ns + grace_ns - hold
            else:
                active_at += now_ns - down_at
            alert.active_at_ns = active_at

"""The alert state machine: every row of RULER.md 5, sending, ALERTS series and restore."""

from __future__ import annotations

import pytest

from svc.ruler.alerting import RESOLVED_RETENTION_NS, AlertingRule, AlertState
from svc.ruler.evaluation import EvaluationError, Sample
from svc.ruler.forstate import ForStateStore, restore_group
from svc.ruler.group import GroupRuntime
from svc.ruler.rulefmt import Rule, RuleGroup

S = 1_000_000_000
MIN = 60 * S
T0 = 1_700_000_000 * S
WEB = Sample((("__name__", "x"), ("app", "web")), 3.0)
DB = Sample((("app", "db"),), 1.0)


def make(for_ns: int = 0, **kwargs: object) -> AlertingRule:
    rule = Rule(
        'sum by (app) (rate({a="b"}[1m])) > 0',
        alert="High",
        for_ns=for_ns,
        labels={"severity": "page", "app": "overridden-{{ $labels.app }}"},
        annotations={"v": "{{ $value }}"},
        **kwargs,  # type: ignore[arg-type]
    )
    alerting = AlertingRule(rule, external_labels={}, external_url="")
    alerting.restored = True
    return alerting


def only(rule: AlertingRule):  # type: ignore[no-untyped-def]
    (alert,) = rule.active.values()
    return alert


def test_labels_of_an_alert() -> None:
    rule = make()
    rule.evaluate([WEB], T0, 0)
    assert dict(only(rule).labels) == {
        "alertname": "High",
        "app": "overridden-web",
        "severity": "page",
    }
    assert dict(only(rule).annotations) == {"v": "3"}


def test_an_empty_expansion_removes_the_label() -> None:
    rule = AlertingRule(
        Rule("x", alert="A", labels={"app": "{{ $labels.none }}"}),
        external_labels={},
        external_url="",
    )
    rule.evaluate([WEB], T0, 0)
    assert dict(only(rule).labels) == {"alertname": "A"}


def test_none_to_pending_to_firing() -> None:
    rule = make(for_ns=2 * MIN)
    rule.evaluate([WEB], T0, 0)
    alert = only(rule)
    assert (alert.state, alert.active_at_ns) == (AlertState.PENDING, T0)
    rule.evaluate([Sample(WEB.labels, 5.0)], T0 + MIN, 0)
    assert (alert.state, alert.value, dict(alert.annotations)) == (
        AlertState.PENDING,
        5.0,
        {"v": "5"},
    )
    rule.evaluate([WEB], T0 + 2 * MIN, 0)
    assert (alert.state, alert.fired_at_ns) == (AlertState.FIRING, T0 + 2 * MIN)
    rule.evaluate([Sample(WEB.labels, 7.0)], T0 + 3 * MIN, 0)
    assert (alert.state, alert.value, alert.active_at_ns) == (AlertState.FIRING, 7.0, T0)


def test_for_zero_fires_at_once() -> None:
    rule = make()
    rule.evaluate([WEB], T0, 0)
    assert only(rule).state is AlertState.FIRING


def test_pending_absent_is_deleted_without_notification() -> None:
    rule = make(for_ns=MIN)
    rule.evaluate([WEB], T0, 0)
    rule.evaluate([], T0 + S, 0)
    assert rule.active == {}
    assert rule.to_send(T0 + S, MIN, MIN) == []


def test_firing_absent_resolves_and_is_kept_15_minutes() -> None:
    rule = make()
    rule.evaluate([WEB], T0, 0)
    alert = only(rule)
    rule.evaluate([], T0 + MIN, 0)
    assert (alert.state, alert.resolved_at_ns) == (AlertState.INACTIVE, T0 + MIN)
    assert rule.unresolved() == [] and rule.state() == "inactive"
    rule.evaluate([], T0 + MIN + RESOLVED_RETENTION_NS, 0)
    assert rule.active  # not past the retention yet
    rule.evaluate([], T0 + 2 * MIN + RESOLVED_RETENTION_NS, 0)
    assert rule.active == {}


def test_inactive_present_again_is_a_new_pending_alert() -> None:
    rule = make(for_ns=MIN)
    rule.evaluate([WEB], T0, 0)
    rule.evaluate([WEB], T0 + MIN, 0)
    rule.evaluate([], T0 + 2 * MIN, 0)
    rule.evaluate([WEB], T0 + 3 * MIN, 0)
    alert = only(rule)
    assert (alert.state, alert.active_at_ns, alert.resolved_at_ns) == (
        AlertState.PENDING,
        T0 + 3 * MIN,
        0,
    )


def test_keep_firing_for_is_not_applied() -> None:
    rule = make()  # keep_firing_for is dropped when decoding: the rule has none
    rule.evaluate([WEB], T0, 0)
    rule.evaluate([], T0 + S, 0)
    assert only(rule).state is AlertState.INACTIVE


def test_raised_for_returns_a_firing_alert_to_pending() -> None:
    old = make()
    old.evaluate([WEB], T0, 0)
    old.to_send(T0, MIN, MIN)
    new = make(for_ns=10 * MIN)
    group_old = GroupRuntime("t", "ns", RuleGroup("g", rules=(old.rule,)), MIN, [old])
    group_new = GroupRuntime("t", "ns", RuleGroup("g", rules=(new.rule,)), MIN, [new])
    group_new.copy_state(group_old)
    new.evaluate([WEB], T0 + MIN, 0)
    alert = only(new)
    assert (alert.state, alert.fired_at_ns, alert.last_sent_at_ns) == (AlertState.PENDING, 0, 0)


def test_state_is_the_highest() -> None:
    rule = make(for_ns=MIN)
    rule.evaluate([WEB], T0, 0)
    assert rule.state() == "pending"
    rule.evaluate([WEB, DB], T0 + MIN, 0)
    assert rule.state() == "firing"


def test_duplicate_label_sets() -> None:
    rule = make()
    twins = [Sample((("app", "web"), ("x", "1")), 1.0), Sample((("app", "web"), ("x", "1")), 2.0)]
    no_overrides = AlertingRule(Rule("x", alert="A"), external_labels={}, external_url="")
    with pytest.raises(EvaluationError, match="same labelset after applying alert labels"):
        no_overrides.evaluate(twins, T0, 0)
    # the rule label overrides "app": web and db differ only in __name__ -> still distinct
    rule.evaluate([WEB, DB], T0, 0)
    assert len(rule.active) == 2


def test_limit_clears_the_alerts() -> None:
    rule = make()
    rule.evaluate([WEB], T0, 1)
    with pytest.raises(EvaluationError, match=r"^exceeded limit of 1 with 2 alerts$"):
        rule.evaluate([WEB, DB], T0 + S, 1)
    assert rule.active == {}


def test_sending() -> None:
    rule = make(for_ns=MIN)
    rule.evaluate([WEB], T0, 0)
    assert rule.to_send(T0, MIN, MIN) == []  # pending is never sent
    rule.evaluate([WEB], T0 + MIN, 0)
    sent = rule.to_send(T0 + MIN, MIN, 30 * S)
    assert [a.valid_until_ns for a in sent] == [T0 + MIN + 4 * MIN]
    rule.evaluate([WEB], T0 + 2 * MIN, 0)
    assert rule.to_send(T0 + 2 * MIN, MIN, MIN) == []  # lastSent + delay is not before ts
    rule.evaluate([WEB], T0 + 3 * MIN, 0)
    assert len(rule.to_send(T0 + 3 * MIN, MIN, MIN)) == 1
    rule.evaluate([], T0 + 3 * MIN + S, 0)
    resolved = rule.to_send(T0 + 3 * MIN + S, MIN, MIN)
    assert [a.resolved_at_ns for a in resolved] == [T0 + 3 * MIN + S]


def test_alerts_series_only_once_restored() -> None:
    rule = make(for_ns=MIN)
    rule.restored = False
    assert rule.evaluate([WEB], T0, 0) == []
    rule.restored = True
    series = rule.evaluate([WEB], T0 + S, 0)
    labels = [dict(s.labels) for s in series]
    assert labels[0] == {
        "__name__": "ALERTS",
        "alertname": "High",
        "alertstate": "pending",
        "app": "overridden-web",
        "severity": "page",
    }
    assert labels[1]["__name__"] == "ALERTS_FOR_STATE" and "alertstate" not in labels[1]
    assert [s.value for s in series] == [1.0, T0 // S]
    assert {s.timestamp_ms for s in series} == {(T0 + S) // 1_000_000}


def _group_with(rule: AlertingRule) -> GroupRuntime:
    return GroupRuntime("t", "ns", RuleGroup("g", rules=(rule.rule,)), MIN, [rule])


@pytest.mark.parametrize(
    ("active_before", "down_for", "expected_active_at"),
    [
        # was firing at the restart: activeAt kept, it fires at the next evaluation
        pytest.param(20 * MIN, 2 * MIN, "kept", id="was-firing"),
        # 12 of 15 minutes spent: 3 left < grace 10 -> fires grace period after now
        pytest.param(12 * MIN, 2 * MIN, "grace", id="within-grace"),
        # 2 of 15 minutes spent: 13 left -> the outage does not count
        pytest.param(2 * MIN, 5 * MIN, "shifted", id="shifted-by-outage"),
    ],
)
def test_restore(tmp_path, active_before: int, down_for: int, expected_active_at: str) -> None:  # type: ignore[no-untyped-def]
    before = make(for_ns=15 * MIN)
    down_at = T0
    before.evaluate([WEB], down_at - active_before, 0)
    before.evaluate([WEB], down_at, 0)
    store = ForStateStore(tmp_path)
    store.save(_group_with(before), down_at)
    original = only(before).active_at_ns

    after = make(for_ns=15 * MIN)
    after.restored = False
    now = down_at + down_for
    after.evaluate([WEB], now, 0)
    group = _group_with(after)
    restore_group(group, store.load(group.key), now, 10 * MIN, 60 * MIN)
    assert after.restored
    expected = {
        "kept": original,
        "grace": now + 10 * MIN - 15 * MIN,
        "shifted": original + (now - down_at),
    }[expected_active_at]
    assert only(after).active_at_ns == expected


def test_restore_skips_short_for_and_old_state(tmp_path) -> None:  # type: ignore[no-untyped-def]
    short = make(for_ns=MIN)
    short.evaluate([WEB], T0 - 30 * MIN, 0)
    store = ForStateStore(tmp_path)
    store.save(_group_with(short), T0 - 30 * MIN)
    after = make(for_ns=MIN)
    after.restored = False
    after.evaluate([WEB], T0, 0)
    restore_group(_group_with(after), store.load(("t", "ns", "g")), T0, 10 * MIN, 60 * MIN)
    assert only(after).active_at_ns == T0 and after.restored
    long_rule = make(for_ns=15 * MIN)
    long_rule.restored = False
    long_rule.evaluate([WEB], T0, 0)
    # the state is older than the outage tolerance (20 minutes here)
    restore_group(_group_with(long_rule), store.load(("t", "ns", "g")), T0, 10 * MIN, 20 * MIN)
    assert only(long_rule).active_at_ns == T0

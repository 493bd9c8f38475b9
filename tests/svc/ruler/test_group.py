"""A group's evaluation: recording output, stale markers, failures kept per rule."""

from __future__ import annotations

import math
import struct

import pytest

from svc.ruler.alerting import Alert, OutputSample
from svc.ruler.evaluation import EvaluationError, Sample
from svc.ruler.group import STALE_NAN, GroupContext, GroupRuntime
from svc.ruler.recording import RecordingRule
from svc.ruler.rulefmt import Rule, RuleGroup

S = 1_000_000_000


class FakeEvaluator:
    """Answers by expression (a pure stand-in for the query engine in unit tests)."""

    def __init__(self, answers: dict[str, list[Sample] | Exception]) -> None:
        self.answers = answers

    def instant(self, tenant: str, expr: str, ts_ns: int) -> list[Sample]:
        answer = self.answers[expr]
        if isinstance(answer, Exception):
            raise answer
        return answer


def context(evaluator: FakeEvaluator, out: list[OutputSample]) -> GroupContext:
    def notify(tenant: str, expr: str, alerts: list[Alert]) -> None:
        return None

    return GroupContext(
        evaluator=evaluator,
        append=lambda tenant, samples: out.extend(samples),
        notify=notify,
        observe=lambda *args: None,
        resend_delay_ns=60 * S,
        external_labels={},
        external_url="",
    )


def group_of(*rules: Rule, limit: int = 0) -> GroupRuntime:
    return GroupRuntime(
        "t",
        "ns",
        RuleGroup("g", limit=limit, rules=rules),
        S,
        [RecordingRule(rule) for rule in rules],
    )


def test_recorded_series_and_stale_markers() -> None:
    out: list[OutputSample] = []
    evaluator = FakeEvaluator(
        {"e": [Sample((("app", "a"),), 1.0), Sample((("app", "b"), ("team", "x")), 2.0)]}
    )
    group = group_of(Rule("e", record="r:x", labels={"team": "y"}))
    group.evaluate(10 * S, context(evaluator, out))
    assert out == [
        OutputSample((("__name__", "r:x"), ("app", "a"), ("team", "y")), 10_000, 1.0),
        OutputSample((("__name__", "r:x"), ("app", "b"), ("team", "y")), 10_000, 2.0),
    ]
    out.clear()
    evaluator.answers["e"] = [Sample((("app", "b"),), 3.0)]
    group.evaluate(11 * S, context(evaluator, out))
    assert [s.labels for s in out] == [
        (("__name__", "r:x"), ("app", "b"), ("team", "y")),
        (("__name__", "r:x"), ("app", "a"), ("team", "y")),
    ]
    stale = out[1].value
    assert math.isnan(stale) and struct.pack("<d", stale) == struct.pack("<d", STALE_NAN)
    assert struct.pack("<Q", 0x7FF0000000000002) == struct.pack("<d", STALE_NAN)


def test_an_empty_rule_label_removes_the_label() -> None:
    out: list[OutputSample] = []
    group = group_of(Rule("e", record="r", labels={"app": ""}))
    group.evaluate(S, context(FakeEvaluator({"e": [Sample((("app", "a"), ("x", "1")), 1.0)]}), out))
    assert out == [OutputSample((("__name__", "r"), ("x", "1")), 1000, 1.0)]


def test_scalar_result_has_only_the_name() -> None:
    out: list[OutputSample] = []
    group = group_of(Rule("e", record="one"))
    group.evaluate(S, context(FakeEvaluator({"e": [Sample((), 1.0)]}), out))
    assert out == [OutputSample((("__name__", "one"),), 1000, 1.0)]


@pytest.mark.parametrize(
    ("rule", "answer", "limit", "message"),
    [
        (
            Rule("e", record="r", labels={"app": "same"}),
            [Sample((("app", "a"),), 1.0), Sample((("app", "b"),), 1.0)],
            0,
            "vector contains metrics with the same labelset after applying rule labels",
        ),
        (
            Rule("e", record="r"),
            [Sample((("app", "a"),), 1.0), Sample((("app", "b"),), 1.0)],
            1,
            "exceeded limit of 1 with 2 series",
        ),
        (
            Rule("e", record="r"),
            EvaluationError("rule result is not a vector or scalar"),
            0,
            "rule result is not a vector or scalar",
        ),
        (Rule("e", record="r"), RuntimeError("engine fault"), 0, "engine fault"),
    ],
)
def test_failures_are_kept_on_the_rule(
    rule: Rule, answer: list[Sample] | Exception, limit: int, message: str
) -> None:
    out: list[OutputSample] = []
    ok = Rule("ok", record="fine")
    evaluator = FakeEvaluator({"e": answer, "ok": [Sample((), 1.0)]})
    group = group_of(rule, ok, limit=limit)
    group.evaluate(S, context(evaluator, out))
    assert (group.statuses[0].health, group.statuses[0].last_error) == ("err", message)
    assert (group.statuses[1].health, group.statuses[1].last_error) == ("ok", "")
    assert out == [OutputSample((("__name__", "fine"),), 1000, 1.0)]
    assert group.evaluations == 1 and group.last_evaluation_ns > 0


def test_a_failed_evaluation_marks_nothing_stale() -> None:
    out: list[OutputSample] = []
    evaluator = FakeEvaluator({"e": [Sample((("app", "a"),), 1.0)]})
    group = group_of(Rule("e", record="r"))
    group.evaluate(S, context(evaluator, out))
    evaluator.answers["e"] = EvaluationError("boom")
    out.clear()
    group.evaluate(2 * S, context(evaluator, out))
    assert out == []
    assert group.stale_markers(3 * S)[0].labels == (("__name__", "r"), ("app", "a"))


def test_changed_group_keeps_matching_rules_and_marks_the_rest_stale() -> None:
    out: list[OutputSample] = []
    evaluator = FakeEvaluator({"a": [Sample((), 1.0)], "b": [Sample((), 2.0)]})
    old = group_of(Rule("a", record="ra"), Rule("b", record="rb"))
    old.evaluate(S, context(evaluator, out))
    new = group_of(Rule("b", record="rb"))
    new.copy_state(old)
    assert new.previous_series[0] == {(("__name__", "rb"),): None}
    stale = new.leftover_stale_markers(old, 2 * S)
    assert [s.labels for s in stale] == [(("__name__", "ra"),)]

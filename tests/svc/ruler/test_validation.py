"""Semantic validation: every row of RULER.md 2.2, with the reference's messages."""

from __future__ import annotations

import pytest

import logql_to_sql
from svc.ruler.rulefmt import Rule, RuleGroup, parse_group, parse_rule_file
from svc.ruler.validation import validate_groups

EXPR = 'sum(rate({app="x"}[1m]))'


def _parse_error(expr: str) -> str:
    with pytest.raises(logql_to_sql.LogQLError) as caught:
        logql_to_sql.parse(expr)
    return str(caught.value)


def group(*rules: Rule, name: str = "g") -> RuleGroup:
    return RuleGroup(name=name, rules=rules)


CASES = [
    pytest.param(group(name=""), "group 0: Groupname must not be empty", id="empty-name"),
    pytest.param(
        group(Rule(EXPR, record="r", alert="a")),
        "only one of 'record' and 'alert' must be set",
        id="record-and-alert",
    ),
    pytest.param(group(Rule(EXPR)), "one of 'record' or 'alert' must be set", id="neither"),
    pytest.param(group(Rule("", record="r")), "field 'expr' must be set in rule", id="no-expr"),
    pytest.param(
        group(Rule("sum(rate({app=", record="r")),
        "could not parse expression for record 'r' in group 'g': " + _parse_error("sum(rate({app="),
        id="bad-expr-record",
    ),
    pytest.param(
        group(Rule('{app="x"} |= ', alert="A")),
        "could not parse expression for alert 'A' in group 'g': " + _parse_error('{app="x"} |= '),
        id="bad-expr-alert",
    ),
    pytest.param(
        group(Rule(EXPR, record="r", annotations={"a": "b"})),
        "invalid field 'annotations' in recording rule",
        id="recording-annotations",
    ),
    pytest.param(
        group(Rule(EXPR, record="r", for_ns=60_000_000_000)),
        "invalid field 'for' in recording rule",
        id="recording-for",
    ),
    pytest.param(
        group(Rule(EXPR, record="1bad")),
        "invalid recording rule name: 1bad",
        id="record-name",
    ),
    pytest.param(
        group(Rule(EXPR, record="ok:name", labels={"bad-name": "x"})),
        "invalid label name: bad-name",
        id="label-name",
    ),
    pytest.param(
        group(Rule(EXPR, alert="A", labels={"__name__": "x"})),
        "invalid label name: __name__",
        id="label-__name__",
    ),
    pytest.param(
        group(Rule(EXPR, alert="A", labels={"a": "\ud800"})),
        "invalid label value: \ud800",
        id="label-value-utf8",
    ),
    pytest.param(
        group(Rule(EXPR, alert="A", annotations={"bad.name": "x"})),
        "invalid annotation name: bad.name",
        id="annotation-name",
    ),
    pytest.param(
        group(Rule(EXPR, alert="A", labels={"sev": "{{ nope }}"})),
        'label "sev": template: __alert_A:1: function "nope" not defined',
        id="label-template",
    ),
    pytest.param(
        group(Rule(EXPR, alert="A", annotations={"s": "{{ $labels.x "})),
        'annotation "s": template: __alert_A:1: unclosed action',
        id="annotation-template",
    ),
    pytest.param(
        group(Rule(EXPR, alert="A", annotations={"u": "{{ $externalURL }}"})),
        'annotation "u": template: __alert_A:1: undefined variable "$externalURL"',
        id="externalURL-rejected-at-validation",
    ),
]


@pytest.mark.parametrize(("groups", "message"), CASES)
def test_each_row(groups: RuleGroup, message: str) -> None:
    assert validate_groups([groups]) == [message]


def test_duplicate_group_in_a_file() -> None:
    groups = parse_rule_file("groups:\n  - name: g\n    rules: []\n  - name: g\n    rules: []\n")
    assert validate_groups(groups) == ['groupname: "g" is repeated in the same file']


def test_one_error_per_rule_the_first_check() -> None:
    rule = Rule("", record="1bad", annotations={"a": "b"})
    assert validate_groups([group(rule)]) == ["field 'expr' must be set in rule"]


def test_every_rule_and_group_reports() -> None:
    errors = validate_groups(
        [group(Rule(EXPR), Rule(EXPR, record="r", alert="a"), Rule(EXPR, record="ok"), name="")]
    )
    assert errors == [
        "group 0: Groupname must not be empty",
        "one of 'record' or 'alert' must be set",
        "only one of 'record' and 'alert' must be set",
    ]


def test_log_queries_and_good_templates_pass() -> None:
    rules = [
        Rule('{app="x"} |= "err"', alert="LogOnly"),
        Rule(
            EXPR,
            alert="A",
            labels={"s": "{{ $value | humanize }}"},
            annotations={
                "d": '{{ range query "sum(rate({a=\\"b\\"}[1m]))" }}{{ .Value }}{{ end }}'
            },
        ),
        Rule(EXPR, record="ns:rate:1m", labels={"team": "a"}),
    ]
    assert validate_groups([group(*rules)]) == []


def test_recording_label_values_are_not_templates() -> None:
    rule = Rule(EXPR, record="r", labels={"t": "{{ nope }}"})
    assert validate_groups([group(rule)]) == []


def test_decoded_then_validated() -> None:
    parsed = parse_group("name: g\nrules:\n  - record: r\n    expr: ''\n")
    assert validate_groups([parsed]) == ["field 'expr' must be set in rule"]

"""Decoding rule groups (yaml.v3 semantics) and the round trip to the reference's layout."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.ruler.rulefmt import (
    Rule,
    RuleFormatError,
    RuleGroup,
    group_document,
    namespace_document,
    parse_group,
    parse_rule_file,
)


def test_scalars_of_any_kind_read_as_strings() -> None:
    group = parse_group(
        "name: 123\nrules:\n  - alert: yes\n    expr: 1\n    labels: {a: true, b: 1.50, c: null, d: ~}\n"
    )
    assert group.name == "123"
    rule = group.rules[0]
    assert (rule.alert, rule.expr) == ("yes", "1")
    assert rule.labels == {"a": "true", "b": "1.50", "c": "", "d": ""}


@pytest.mark.parametrize(
    ("text", "interval_ns", "limit"),
    [
        ("name: g\ninterval: 1h30m\nlimit: 7", 5_400_000_000_000, 7),
        ("name: g\ninterval: 0\nlimit: 0x10", 0, 16),
        ("name: g\ninterval:\nlimit:", 0, 0),
        ("name: g\ninterval: 1d", 86_400_000_000_000, 0),
    ],
)
def test_group_fields(text: str, interval_ns: int, limit: int) -> None:
    group = parse_group(text)
    assert (group.interval_ns, group.limit) == (interval_ns, limit)


@pytest.mark.parametrize(
    "text",
    [
        "name: {a: b}",
        "rules: x",
        "limit: '5'",
        "limit: 1.5",
        "interval: 1.5h",
        "interval: -1m",
        "rules:\n  - for: 1m30",
        "rules:\n  - annotations: {a: [1]}",
        "rules:\n  - labels: x",
        "name: a\nname: b",
        "rules:\n  - labels: {a: 1, a: 2}",
        "\t- bad",
    ],
)
def test_wrong_shapes(text: str) -> None:
    with pytest.raises(RuleFormatError):
        parse_group(text)


def test_empty_and_null_documents() -> None:
    assert parse_group("") == RuleGroup(name="")
    assert parse_group("~") == RuleGroup(name="")
    assert parse_group("name: g\nrules:\n  -\n").rules == (Rule(expr=""),)


def test_rule_files_are_strict() -> None:
    assert parse_rule_file("") == []
    assert parse_rule_file("groups:\n") == []
    with pytest.raises(RuleFormatError, match="field bogus not found"):
        parse_rule_file("groups:\n  - name: g\n    rules:\n      - record: r\n        bogus: 1\n")
    with pytest.raises(RuleFormatError):
        parse_rule_file("other: 1\n")


def test_round_trip_layout() -> None:
    body = """
name: errors
interval: 5m
rules:
  - alert: HighErrorRate
    expr: |
      sum by (app) (rate({env="prod"} |= "error" [5m]))
        > 10
    for: 10m
    labels:
      severity: critical
      team: "42"
    annotations:
      summary: "{{ $labels.app }}: {{ $value | humanize }} errors/s"
      runbook: https://example.org/runbook#errors
  - record: app:errors:rate5m
    expr: sum by (app) (rate({env="prod"} |= "error" [5m]))
    labels:
      source: loki
"""
    group = parse_group(body)
    expected = (
        "name: errors\n"
        "interval: 5m\n"
        "rules:\n"
        "    - alert: HighErrorRate\n"
        "      expr: |\n"
        '        sum by (app) (rate({env="prod"} |= "error" [5m]))\n'
        "          > 10\n"
        "      for: 10m\n"
        "      labels:\n"
        "        severity: critical\n"
        '        team: "42"\n'
        "      annotations:\n"
        "        runbook: https://example.org/runbook#errors\n"
        "        summary: '{{ $labels.app }}: {{ $value | humanize }} errors/s'\n"
        "    - record: app:errors:rate5m\n"
        '      expr: sum by (app) (rate({env="prod"} |= "error" [5m]))\n'
        "      labels:\n"
        "        source: loki\n"
    )
    assert group_document(group) == expected
    assert parse_group(expected) == group
    assert parse_rule_file(namespace_document([group])) == [group]


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20)


@settings(max_examples=200, deadline=None)
@given(
    name=_text,
    expr=_text,
    labels=st.dictionaries(_text, _text, max_size=3),
    annotations=st.dictionaries(_text, _text, max_size=3),
    for_s=st.integers(0, 10**6),
)
def test_any_group_reads_back_the_same(
    name: str, expr: str, labels: dict[str, str], annotations: dict[str, str], for_s: int
) -> None:
    group = RuleGroup(
        name=name,
        interval_ns=for_s * 1_000_000_000,
        rules=(
            Rule(
                expr,
                alert="A",
                for_ns=for_s * 1_000_000_000,
                labels=labels,
                annotations=annotations,
            ),
        ),
    )
    assert parse_group(group_document(group)) == group

"""Semantic checks of rule groups, with the reference's messages (RULER.md 2.2).

Each group check adds one error; each rule adds at most one, its first failing check.
Maps are checked in sorted key order (the reference walks Go maps, in random order).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import logql_to_sql
from logql_to_sql import LogQLError
from svc.ruler.rulefmt import Rule, RuleGroup
from svc.ruler.templates import template_parse_error

__all__ = ["validate_groups", "validate_rule"]

_METRIC_NAME: Final = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_NAME: Final = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def validate_groups(groups: Sequence[RuleGroup]) -> list[str]:
    """Every error of the groups of one file (or of the one group of a POST)."""
    errors: list[str] = []
    seen: set[str] = set()
    for index, group in enumerate(groups):
        if not group.name:
            errors.append(f"group {index}: Groupname must not be empty")
        if group.name in seen:
            errors.append(f'groupname: "{group.name}" is repeated in the same file')
        seen.add(group.name)
        for rule in group.rules:
            error = validate_rule(rule, group.name)
            if error is not None:
                errors.append(error)
    return errors


def validate_rule(rule: Rule, group: str) -> str | None:
    """The first problem of one rule, or None."""
    if rule.record and rule.alert:
        return "only one of 'record' and 'alert' must be set"
    if not rule.record and not rule.alert:
        return "one of 'record' or 'alert' must be set"
    if not rule.expr:
        return "field 'expr' must be set in rule"
    try:
        logql_to_sql.parse(rule.expr)
    except LogQLError as exc:
        kind, name = ("record", rule.record) if rule.record else ("alert", rule.alert)
        return f"could not parse expression for {kind} '{name}' in group '{group}': {exc}"
    if rule.record:
        if rule.annotations:
            return "invalid field 'annotations' in recording rule"
        if rule.for_ns:
            return "invalid field 'for' in recording rule"
        if not _METRIC_NAME.fullmatch(rule.record):
            return f"invalid recording rule name: {rule.record}"
    for name, value in sorted(rule.labels.items()):
        if not _LABEL_NAME.fullmatch(name) or name == "__name__":
            return f"invalid label name: {name}"
        if not _valid_utf8(value):
            return f"invalid label value: {value}"
    for name in sorted(rule.annotations):
        if not _LABEL_NAME.fullmatch(name):
            return f"invalid annotation name: {name}"
    return _template_error(rule)


def _valid_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _template_error(rule: Rule) -> str | None:
    if not rule.alert:
        return None
    for kind, mapping in (("label", rule.labels), ("annotation", rule.annotations)):
        for key, text in sorted(mapping.items()):
            error = template_parse_error(rule.alert, text)
            if error is not None:
                return f'{kind} "{key}": {error}'
    return None

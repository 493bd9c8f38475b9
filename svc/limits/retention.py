"""How long a stream is kept: ``retention_stream`` rules over ``retention_period``
(DELETION.md §8). Used for the ``retention_hours`` label of the discarded-data counters
and by retention itself.

Every rule whose matchers all match the stream's labels is a candidate; the highest
``priority`` wins, then the shortest ``period``, then the first in the list. Without a
matching rule the tenant's ``retention_period`` applies. A period of 0 keeps forever.
"""

from __future__ import annotations

import math
from functools import lru_cache

from gocompat.regex import full_match
from logql_to_sql import ast
from svc.compactor.config import StreamRetention, parse_selector
from svc.config import LimitsConfig

__all__ = ["matches", "retention_hours", "stream_retention_seconds"]

Labels = tuple[tuple[str, str], ...]


@lru_cache(maxsize=1024)
def _rule_matchers(selector: str) -> tuple[ast.Matcher, ...]:
    return parse_selector(selector)


def matches(matchers: tuple[ast.Matcher, ...], labels: Labels) -> bool:
    """Whether every matcher matches ``labels`` (an absent label has the empty value)."""
    values = dict(labels)
    for matcher in matchers:
        value = values.get(matcher.name, "")
        op = matcher.op
        if op is ast.MatchOp.EQ:
            ok = value == matcher.value
        elif op is ast.MatchOp.NEQ:
            ok = value != matcher.value
        else:
            found = full_match(matcher.value, value) is not None
            ok = found if op is ast.MatchOp.RE else not found
        if not ok:
            return False
    return True


def stream_retention_seconds(limits: LimitsConfig, labels: Labels) -> float:
    """The retention period of a stream with ``labels`` under ``limits`` (0: forever)."""
    best: StreamRetention | None = None
    for rule in limits.retention_stream:
        if rule.outranks(best) and matches(_rule_matchers(rule.selector), labels):
            best = rule
    return best.period if best is not None else limits.retention_period


def retention_hours(limits: LimitsConfig, labels: Labels) -> str:
    """The ``retention_hours`` label: whole hours of the stream's retention."""
    if not limits.retention_stream:
        return str(math.floor(limits.retention_period / 3600))
    return str(math.floor(stream_retention_seconds(limits, labels) / 3600))

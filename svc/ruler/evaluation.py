"""One rule expression as a LogQL instant query at one time, as a vector of samples.

``local`` evaluation runs the query through the same engine and code path as
``GET /query`` (``run_metric_query``), scoped to the rule's tenant, so its limits and
what it reads are those of the API. ``remote`` evaluation POSTs the query to a query
frontend's ``/loki/api/v1/query``. A scalar result becomes one sample without labels;
a log query fails with ``rule result is not a vector or scalar``.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Protocol

import logql_to_sql
from logql_to_sql import Grid, LogQLError, ast
from svc.config import LimitsConfig
from svc.errors import ServiceError
from svc.query.engine import QueryEngine
from svc.query.metric_queries import run_metric_query
from svc.query.scope import RequestScope, using_scope

__all__ = [
    "EvaluationError",
    "Evaluator",
    "JitterEvaluator",
    "LocalEvaluator",
    "RemoteEvaluator",
    "Sample",
    "labels_key",
    "parse_rule_expr",
]

Labels = tuple[tuple[str, str], ...]
NOT_A_VECTOR = "rule result is not a vector or scalar"


class EvaluationError(Exception):
    """A rule's query failed; ``str()`` becomes the rule's ``lastError``."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One element of an instant vector: labels sorted by name, and the value."""

    labels: Labels
    value: float


def labels_key(labels: dict[str, str]) -> Labels:
    """Labels as a sorted tuple (the identity of a series or an alert)."""
    return tuple(sorted(labels.items()))


class Evaluator(Protocol):
    """Runs rule queries for a tenant."""

    def instant(self, tenant: str, expr: str, ts_ns: int) -> list[Sample]:
        """The instant vector of ``expr`` at ``ts_ns``; raises :class:`EvaluationError`."""
        ...


@lru_cache(maxsize=1024)
def parse_rule_expr(expr: str) -> ast.Expr | str:
    """The parsed expression of a rule, or its parse error (cached)."""
    try:
        return logql_to_sql.parse(expr)
    except LogQLError as exc:
        return str(exc)


class LocalEvaluator:
    """In-process evaluation on the service's query engine."""

    def __init__(self, engine: QueryEngine, limits_for: Callable[[str], LimitsConfig]) -> None:
        self.engine = engine
        self.limits_for = limits_for

    def instant(self, tenant: str, expr: str, ts_ns: int) -> list[Sample]:
        parsed = parse_rule_expr(expr)
        if isinstance(parsed, str):
            raise EvaluationError(parsed)
        if isinstance(parsed, ast.LogQuery):
            raise EvaluationError(NOT_A_VECTOR)
        limits = self.limits_for(tenant)
        lookback = round(limits.max_query_lookback * 1e9)
        # The tenant's query timeout and max_query_lookback apply to rules as to queries.
        scope = RequestScope(
            limits.query_timeout, floor_ns=time.time_ns() - lookback if lookback > 0 else None
        )
        try:
            result, _ = using_scope(scope).run(
                run_metric_query,
                self.engine,
                tenant,
                parsed,
                Grid(start_ns=ts_ns, step_ns=1_000_000, steps=1),
                max_series=limits.max_query_series,
                instant=True,
            )
        except (ServiceError, LogQLError) as exc:
            raise EvaluationError(getattr(exc, "message", None) or str(exc)) from exc
        if result.scalar:
            points = result.series[0].points if result.series else []
            return [Sample((), points[-1][1] if points else math.nan)]
        return [Sample(s.labels, value) for s in result.series for _, value in s.points]


class RemoteEvaluator:
    """Evaluation through a query frontend's HTTP API (``evaluation.mode: remote``)."""

    def __init__(self, address: str, *, tls: bool, timeout_seconds: float) -> None:
        base = address if "://" in address else f"{'https' if tls else 'http'}://{address}"
        self.url = base.rstrip("/") + "/loki/api/v1/query"
        self.timeout_seconds = timeout_seconds

    def instant(self, tenant: str, expr: str, ts_ns: int) -> list[Sample]:
        when = datetime.fromtimestamp(ts_ns // 1_000_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        body = urllib.parse.urlencode(
            {"query": expr, "direction": "forward", "time": f"{when}.{ts_ns % 10**9:09d}Z"}
        ).encode()
        request = urllib.request.Request(
            self.url,
            data=body,
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "User-Agent": "svc-ruler/0.1.0",
                "X-Scope-OrgID": tenant,
                "X-Query-Tags": "source=ruler",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as response:
                payload = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise EvaluationError(
                f"unsuccessful/unexpected response - status code {exc.code}"
            ) from exc
        except (OSError, ValueError) as exc:
            raise EvaluationError(f"rule evaluation failed: {exc}") from exc
        return _remote_samples(payload)


def fnv32a(data: bytes) -> int:
    """The 32-bit FNV-1a hash."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


class JitterEvaluator:
    """Waits a stable, query-dependent delay of at most ``max_jitter`` before each query
    (``evaluation.max_jitter``): FNV-1a of the query, scaled as the reference does."""

    def __init__(self, inner: Evaluator, max_jitter_seconds: float) -> None:
        self.inner = inner
        self.max_jitter_seconds = max_jitter_seconds

    def delay(self, expr: str) -> float:
        """Seconds waited before ``expr``."""
        return fnv32a(expr.encode()) / 0xFFFFFFFF * self.max_jitter_seconds

    def instant(self, tenant: str, expr: str, ts_ns: int) -> list[Sample]:
        time.sleep(self.delay(expr))
        return self.inner.instant(tenant, expr, ts_ns)


def _remote_samples(payload: dict[str, object]) -> list[Sample]:
    data = payload.get("data")
    if not isinstance(data, dict):
        raise EvaluationError("rule evaluation failed: malformed response")
    kind, result = data.get("resultType"), data.get("result")
    if kind == "scalar" and isinstance(result, list):
        return [Sample((), float(result[1]))]
    if kind == "vector" and isinstance(result, list):
        return [
            Sample(labels_key(item["metric"]), float(item["value"][1]))
            for item in result
            if isinstance(item, dict)
        ]
    raise EvaluationError(f'unsupported result type: "{kind}"')

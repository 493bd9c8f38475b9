"""Rule queries: remote evaluation through a query frontend's API, and jitter."""

from __future__ import annotations

import time

import pytest

from svc.ruler.evaluation import (
    EvaluationError,
    JitterEvaluator,
    RemoteEvaluator,
    Sample,
    fnv32a,
)
from tests.e2e.clients import push
from tests.e2e.server import Server


def test_remote_evaluation_against_a_real_query_api(server: Server, tenant: str) -> None:
    now = time.time_ns()
    with server.client(tenant) as client:
        lines = [(now - i * 1_000_000, "x") for i in range(4)]
        assert push(client, [({"app": "remote"}, lines)]).status_code == 204
    evaluator = RemoteEvaluator(server.url.removeprefix("http://"), tls=False, timeout_seconds=10)
    expr = 'sum by (app) (count_over_time({app="remote"}[1m]))'
    assert evaluator.instant(tenant, expr, now + 1_000_000) == [Sample((("app", "remote"),), 4.0)]
    assert evaluator.instant(tenant, "vector(2) + 1", now) == [Sample((), 3.0)]
    assert evaluator.instant("someone-else", expr, now) == []
    with pytest.raises(
        EvaluationError, match=r"^unsuccessful/unexpected response - status code 400$"
    ):
        evaluator.instant(tenant, '{app="remote"}', now)
    unreachable = RemoteEvaluator("127.0.0.1:9", tls=False, timeout_seconds=2)
    with pytest.raises(EvaluationError, match=r"^rule evaluation failed: "):
        unreachable.instant(tenant, expr, now)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def instant(self, tenant: str, expr: str, ts_ns: int) -> list[Sample]:
        self.calls.append(expr)
        return []


def test_jitter_is_stable_and_bounded() -> None:
    assert fnv32a(b"") == 0x811C9DC5 and fnv32a(b"a") == 0xE40C292C
    jitter = JitterEvaluator(Recorder(), 0.05)
    delays = {expr: jitter.delay(expr) for expr in ("a", "vector(1)", 'sum(rate({a="b"}[1m]))')}
    assert all(0 <= d <= 0.05 for d in delays.values()) and len(set(delays.values())) == 3
    assert jitter.delay("a") == delays["a"]
    started = time.perf_counter()
    jitter.instant("t", "a", 0)
    assert time.perf_counter() - started >= delays["a"] * 0.9

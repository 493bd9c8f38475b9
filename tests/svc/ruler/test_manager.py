"""Scheduling: each group on its own interval, a slow group delaying no other, sync."""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from pathlib import Path

from svc.ruler.alerting import OutputSample
from svc.ruler.group import GroupRuntime
from svc.ruler.manager import Manager
from svc.ruler.recording import RecordingRule
from svc.ruler.rulefmt import Rule, RuleGroup
from svc.ruler.store import LocalRuleStore

MS = 1_000_000


def group(name: str, interval_ms: int) -> RuleGroup:
    return RuleGroup(name, interval_ns=interval_ms * MS, rules=(Rule("vector(1)", record="r"),))


def test_a_slow_group_delays_no_other(tmp_path: Path) -> None:
    store = LocalRuleStore(tmp_path)
    store.set_group("t", "ns", group("slow", 200))
    store.set_group("t", "ns", group("fast", 200))
    runs: dict[str, list[int]] = defaultdict(list)
    release = threading.Event()

    def build(tenant: str, namespace: str, rules: RuleGroup, restore: bool) -> GroupRuntime:
        return GroupRuntime(
            tenant, namespace, rules, rules.interval_ns, [RecordingRule(r) for r in rules.rules]
        )

    def evaluate(runtime: GroupRuntime, ts: int) -> None:
        runs[runtime.group.name].append(ts)
        if runtime.group.name == "slow":
            release.wait(5)

    appended: list[tuple[str, list[OutputSample]]] = []
    manager = Manager(
        store,
        build=build,
        evaluate=evaluate,
        append=lambda tenant, samples: appended.append((tenant, samples)),
        forget=lambda key: None,
        tenant_allowed=lambda tenant: True,
        poll_interval_s=60,
        max_concurrent=2,
    )
    manager.start()
    try:
        time.sleep(1.5)
        assert len(runs["slow"]) == 1  # still in its first evaluation
        fast = runs["fast"]
        assert len(fast) >= 5
        assert {b - a for a, b in itertools.pairwise(fast)} == {200 * MS}
        release.set()
        time.sleep(0.5)
        assert len(runs["slow"]) >= 2
        # the overrun skipped the slots it missed: the next run is on the current slot
        assert runs["slow"][1] - runs["slow"][0] >= 1000 * MS
        assert manager.iterations_missed[("t", "ns", "slow")] >= 4

        store.set_group("t", "ns2", group("new", 200))
        manager.request_sync()
        time.sleep(0.6)
        assert runs["new"]  # picked up at once, not after the 60 s poll interval
        assert {g.group.name for g in manager.groups("t")} == {"slow", "fast", "new"}
        store.delete_namespace("t", "ns")
        manager.request_sync()
        time.sleep(0.3)
        assert [g.group.name for g in manager.groups("t")] == ["new"]
    finally:
        release.set()
        manager.stop()

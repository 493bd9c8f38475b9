"""Alarms fire once when due, in deadline order, never once cancelled, and survive an
action that fails."""

from __future__ import annotations

import threading

from svc.query import alarms
from svc.query.alarms import after


def test_alarms_fire_in_deadline_order_and_cancelled_ones_never() -> None:
    fired: list[str] = []
    done = threading.Event()
    after(0.30, lambda: (fired.append("last"), done.set()))
    dropped = after(0.10, lambda: fired.append("cancelled"))
    after(0.05, lambda: fired.append("first"))
    dropped.cancel()
    assert done.wait(10)
    assert fired == ["first", "last"]


def test_a_failing_action_does_not_stop_later_alarms() -> None:
    done = threading.Event()

    def fail() -> None:
        raise RuntimeError("boom")

    after(0.01, fail)
    after(0.02, done.set)
    assert done.wait(10)


def test_many_cancelled_alarms_are_dropped_before_they_are_due() -> None:
    for _ in range(5000):
        after(3600, lambda: None).cancel()
    done = threading.Event()
    after(0.01, done.set)
    assert done.wait(10)
    assert len(alarms._CLOCK._heap) < 2500

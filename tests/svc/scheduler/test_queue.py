"""The fair queue: round-robin over tenants and over a tenant's actor-path sub-queues."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from svc.errors import TooManyRequestsError
from svc.scheduler.queue import FairQueue, QueueStopped


def _drain(queue: FairQueue[str], count: int) -> list[str]:
    return [queue.get()[1] for _ in range(count)]


def test_tenants_take_turns() -> None:
    queue: FairQueue[str] = FairQueue(0)
    for i in range(6):
        queue.put("a", (), f"a{i}")
    for i in range(2):
        queue.put("b", (), f"b{i}")
    assert _drain(queue, 8) == ["a0", "b0", "a1", "b1", "a2", "a3", "a4", "a5"]


def test_three_sub_queues_get_equal_service() -> None:
    queue: FairQueue[str] = FairQueue(0)
    for name, count in (("x", 30), ("y", 10), ("z", 10)):
        for i in range(count):
            queue.put("t", (name,), f"{name}{i}")
    served = Counter(item[0] for item in _drain(queue, 30))
    assert served == {"x": 10, "y": 10, "z": 10}


def test_local_queue_is_one_more_member_of_the_rotation() -> None:
    queue: FairQueue[str] = FairQueue(0)
    for i in range(4):
        queue.put("t", (), f"local{i}")
        queue.put("t", ("grafana",), f"grafana{i}")
        queue.put("t", ("grafana", "alice"), f"alice{i}")
    first = _drain(queue, 4)
    # local, then the "grafana" node (its own items and "alice" alternate inside it)
    assert first == ["local0", "grafana0", "local1", "alice0"]


def test_outstanding_limit_counts_every_sub_queue_of_the_tenant() -> None:
    queue: FairQueue[str] = FairQueue(3)
    queue.put("t", (), "1")
    queue.put("t", ("a",), "2")
    queue.put("t", ("b", "c"), "3")
    with pytest.raises(TooManyRequestsError) as refused:
        queue.put("t", ("d",), "4")
    assert refused.value.message == "too many outstanding requests"
    queue.put("other", (), "fine")  # another tenant has its own count
    queue.get()
    queue.put("t", (), "room again")
    assert queue.outstanding("t") == 3


def test_stop_wakes_waiting_workers() -> None:
    queue: FairQueue[str] = FairQueue(0)
    stopped = threading.Event()

    def wait() -> None:
        with pytest.raises(QueueStopped):
            queue.get()
        stopped.set()

    worker = threading.Thread(target=wait)
    worker.start()
    queue.stop()
    worker.join(5)
    assert stopped.is_set()


def test_a_tenant_at_its_running_limit_lets_the_others_go_first() -> None:
    queue: FairQueue[str] = FairQueue(0, max_running=2)
    for i in range(5):
        queue.put("heavy", (), f"h{i}")
    assert [queue.get()[1] for _ in range(2)] == ["h0", "h1"]
    queue.put("light", (), "l0")
    assert queue.get() == ("light", "l0")  # heavy holds two workers already
    queue.done("light")
    queue.done("heavy")
    queue.done("heavy")
    assert queue.get() == ("heavy", "h2")


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _taken(queue: FairQueue[str]) -> str | None:
    """The item a worker would take now, or None when every tenant is at its share."""
    with queue._cond:
        if queue._eligible() is None:
            return None
    return queue.get()[1]


def test_active_tenants_share_the_running_slots() -> None:
    clock = _Clock()
    queue: FairQueue[str] = FairQueue(0, max_running=4, recent_seconds=10, clock=clock)
    for i in range(8):
        queue.put("heavy", (), f"h{i}")
    assert [_taken(queue) for _ in range(5)] == ["h0", "h1", "h2", "h3", None]
    queue.put("light", (), "l0")
    assert _taken(queue) == "l0"  # its share is 4 // 2: it runs although heavy holds 4
    for _ in range(4):
        queue.done("heavy")
    # heavy may now run 2 (light is running, then recently done)
    assert [_taken(queue) for _ in range(3)] == ["h4", "h5", None]
    queue.done("light")
    clock.now = 9.0
    assert _taken(queue) is None  # light still counts: it was done 9 s ago
    clock.now = 10.5
    assert [_taken(queue) for _ in range(3)] == ["h6", "h7", None]


def test_a_waiting_worker_takes_an_item_once_a_quiet_tenants_share_expires() -> None:
    clock = _Clock()
    queue: FairQueue[str] = FairQueue(0, max_running=2, recent_seconds=5, clock=clock)
    queue.put("light", (), "l0")
    assert queue.get() == ("light", "l0")
    queue.done("light")
    queue.put("heavy", (), "h0")
    queue.put("heavy", (), "h1")
    assert queue.get() == ("heavy", "h0")
    taken: list[str] = []
    worker = threading.Thread(target=lambda: taken.append(queue.get()[1]))
    worker.start()
    worker.join(0.3)
    assert taken == []  # heavy is at its share of 2 // 2 while light counts as active
    clock.now = 6.0
    worker.join(5)
    assert taken == ["h1"]

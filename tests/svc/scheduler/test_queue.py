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
    queue.done("heavy")
    assert queue.get() == ("heavy", "h2")

"""Internal services and their lifecycle (SPEC 3.1), reported by ``GET /services``.

    New ──start──> Starting ──ok──> Running ──stop──> Stopping ──ok──> Terminated
                      │                │                  │
                      └────error───────┴──────error───────┴──────> Failed

A :class:`Service` wraps a ``starting`` and a ``stopping`` callable; the
:class:`ServiceRegistry` starts services in registration order (a service whose
dependencies are not all Running is not started and stays New) and stops them in
reverse order. A failure is recorded on the service, never raised to the caller, so
``/services`` and ``/ready`` can show it.

A Running service can also be *degraded*: it serves, but something needs an operator (the
storage services report damaged files they set aside). ``/services`` then prints the
reason after the state, ``wal => Running (degraded: ...)``; ``/ready`` stays 200.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator

__all__ = ["Service", "ServiceRegistry", "State"]

log = logging.getLogger(__name__)


class State(enum.Enum):
    """A service's state; ``str()`` prints the reference's names."""

    NEW = "New"
    STARTING = "Starting"
    RUNNING = "Running"
    STOPPING = "Stopping"
    TERMINATED = "Terminated"
    FAILED = "Failed"

    def __str__(self) -> str:
        return self.value


_ALLOWED = {
    State.NEW: {State.STARTING, State.TERMINATED},
    State.STARTING: {State.RUNNING, State.FAILED},
    State.RUNNING: {State.STOPPING, State.FAILED},
    State.STOPPING: {State.TERMINATED, State.FAILED},
    State.TERMINATED: set(),
    State.FAILED: set(),
}


def _noop() -> None:
    return None


class Service:
    """One internal service: a name, what starting and stopping it does, and its state."""

    def __init__(
        self,
        name: str,
        starting: Callable[[], None] = _noop,
        stopping: Callable[[], None] = _noop,
        *,
        depends_on: tuple[str, ...] = (),
        degraded: Callable[[], str | None] | None = None,
    ) -> None:
        self.name = name
        self.depends_on = depends_on
        self._degraded = degraded
        self._starting = starting
        self._stopping = stopping
        self._state = State.NEW
        self._cond = threading.Condition()
        self.failure: BaseException | None = None
        self.running_since: float | None = None

    @property
    def state(self) -> State:
        """The current state."""
        return self._state

    def degraded(self) -> str | None:
        """Why the Running service is degraded, or None."""
        if self._degraded is None or self._state is not State.RUNNING:
            return None
        try:
            return self._degraded()
        except OSError as exc:
            return f"cannot tell: {exc}"

    def describe(self) -> str:
        """The state as ``/services`` prints it, with the reason when degraded."""
        reason = self.degraded()
        return str(self._state) if reason is None else f"{self._state} (degraded: {reason})"

    def _move(self, new: State) -> None:
        with self._cond:
            if new not in _ALLOWED[self._state]:
                raise RuntimeError(f"service {self.name}: cannot go {self._state} -> {new}")
            log.debug("service %s: %s -> %s", self.name, self._state, new)
            self._state = new
            if new is State.RUNNING:
                self.running_since = time.monotonic()
            self._cond.notify_all()

    def fail(self, exc: BaseException) -> None:
        """Mark a Starting, Running or Stopping service Failed with ``exc``."""
        with self._cond:
            if State.FAILED not in _ALLOWED[self._state]:
                return
            self.failure = exc
            self._move(State.FAILED)
        log.error("service %s failed: %s", self.name, exc, exc_info=exc)

    def start(self) -> bool:
        """Run ``starting``; True when the service is Running afterwards."""
        self._move(State.STARTING)
        try:
            self._starting()
        except BaseException as exc:
            self.fail(exc)
            return False
        self._move(State.RUNNING)
        return True

    def stop(self) -> None:
        """Stop a Running service and return once it is stopped.

        A New service terminates at once; a service already Stopping is waited for;
        a Starting one is left to finish starting; terminal states stay.
        """
        with self._cond:
            state = self._state
            if state is State.NEW:
                self._move(State.TERMINATED)
                return
            if state is State.STOPPING:
                self._cond.wait_for(lambda: self._state in (State.TERMINATED, State.FAILED))
                return
            if state is not State.RUNNING:
                return
            self._move(State.STOPPING)
        try:
            self._stopping()
        except BaseException as exc:
            self.fail(exc)
            return
        self._move(State.TERMINATED)

    def wait_for(self, states: set[State], timeout: float) -> bool:
        """Block until the service is in one of ``states``; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._state in states, timeout)


class ServiceRegistry:
    """The services of one instance, in start order."""

    def __init__(self) -> None:
        self._services: dict[str, Service] = {}
        self._stop_requested = threading.Event()

    def add(self, service: Service) -> Service:
        """Register a service (after the ones it depends on)."""
        missing = [name for name in service.depends_on if name not in self._services]
        if missing:
            raise ValueError(f"service {service.name} depends on unknown {missing}")
        self._services[service.name] = service
        return service

    def __getitem__(self, name: str) -> Service:
        return self._services[name]

    def __iter__(self) -> Iterator[Service]:
        return iter(self._services.values())

    def start_all(self) -> None:
        """Start every service whose dependencies are Running, in order."""
        for service in self:
            if self._stop_requested.is_set():
                return
            if all(self._services[d].state is State.RUNNING for d in service.depends_on):
                service.start()

    def request_stop(self) -> None:
        """Start no further services."""
        self._stop_requested.set()

    def stop_all(self) -> None:
        """Stop every service, last started first."""
        self._stop_requested.set()
        for service in reversed(list(self)):
            service.stop()

    def healthy(self) -> bool:
        """True when every service is Running."""
        return all(s.state is State.RUNNING for s in self)

    def by_state(self) -> list[tuple[State, int]]:
        """How many services are in each state, in lifecycle order, zero counts left out."""
        counts = Counter(s.state for s in self)
        return [(state, counts[state]) for state in State if counts[state]]

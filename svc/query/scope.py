"""One query request as the engine sees it: its deadline, its cancellation, and what it reads.

A request (``query_range``, ``labels``, ...) may run many statements, on several query
threads, one sub-query after another. They all share a :class:`RequestScope`, found through
a context variable that the scheduler sets on each thread before running the request's
work. Cancelling the scope (deadline passed, client gone, a sibling sub-query failed)
interrupts every DuckDB statement it is running at once, stops its Python functions at
their next check, and makes every later statement fail before it starts.

The scope can also pin what the request reads (one catalog listing and head snapshot for
all its sub-queries) and a time floor (``max_query_lookback``) below which nothing is read.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from svc.errors import GatewayTimeoutError, ServiceError
from svc.query.context import TIMEOUT_MESSAGE, QueryContext

if TYPE_CHECKING:
    import duckdb

__all__ = ["ClientClosedError", "RequestScope", "current_scope", "using_scope"]

CLIENT_CLOSED_MESSAGE = "the request was cancelled by the client"


class ClientClosedError(ServiceError):
    """The client went away before the answer (499, logged; nobody reads the body)."""

    status = 499


class RequestScope:
    """Deadline, cancellation and pinned reads of one request (thread-safe)."""

    def __init__(self, timeout_seconds: float, *, floor_ns: int | None = None) -> None:
        self.deadline = time.monotonic() + timeout_seconds
        self.floor_ns = floor_ns
        """Nothing older than this is read (``max_query_lookback``), or None."""
        self.reason: ServiceError | None = None
        self.pinned: dict[tuple[str, ...], tuple[int, int, Any]] = {}
        """Views read once per tenant set: ``tenants -> (start_ns, end_ns, view)``."""
        self.queue_seconds = 0.0
        """Time the request's sub-queries waited for a query worker, summed (the
        statistics' ``queueTime``)."""
        self._running: dict[int, tuple[duckdb.DuckDBPyConnection, QueryContext]] = {}
        self._listeners: list[Callable[[ServiceError], None]] = []
        self._lock = threading.Lock()

    def waited(self, seconds: float) -> None:
        """A sub-query waited ``seconds`` in the queue."""
        with self._lock:
            self.queue_seconds += seconds

    def remaining(self) -> float:
        """Seconds left before the deadline (may be negative)."""
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise the reason the request stopped, or 504 once its deadline has passed."""
        if self.reason is not None:
            raise self.reason
        if self.remaining() <= 0:
            self.cancel(GatewayTimeoutError(TIMEOUT_MESSAGE))
            raise self.reason or GatewayTimeoutError(TIMEOUT_MESSAGE)

    def cancel(self, reason: ServiceError) -> None:
        """Stop the request (the first reason wins): interrupt what runs, tell listeners."""
        with self._lock:
            if self.reason is not None:
                return
            self.reason = reason
            running = list(self._running.values())
            listeners = list(self._listeners)
        for cursor, context in running:
            context.fail(reason)
            cursor.interrupt()
        for listener in listeners:
            listener(reason)

    def on_cancel(self, listener: Callable[[ServiceError], None]) -> None:
        """Call ``listener(reason)`` when the request is cancelled (at once if it is)."""
        with self._lock:
            reason = self.reason
            if reason is None:
                self._listeners.append(listener)
        if reason is not None:
            listener(reason)

    @contextmanager
    def running(self, cursor: duckdb.DuckDBPyConnection, context: QueryContext) -> Iterator[None]:
        """Register a statement so that a cancellation interrupts it."""
        key = id(cursor)
        with self._lock:
            reason = self.reason
            if reason is None:
                self._running[key] = (cursor, context)
        if reason is not None:
            raise reason
        try:
            yield
        finally:
            with self._lock:
                self._running.pop(key, None)


_SCOPE: contextvars.ContextVar[RequestScope | None] = contextvars.ContextVar(
    "request_scope", default=None
)


def current_scope() -> RequestScope | None:
    """The scope of the request whose work this thread is running, if any."""
    return _SCOPE.get()


def using_scope(scope: RequestScope) -> contextvars.Context:
    """A copy of the current context in which ``scope`` is the request's scope."""
    context = contextvars.copy_context()
    context.run(_SCOPE.set, scope)
    return context

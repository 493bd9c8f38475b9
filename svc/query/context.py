"""The running query's deadline and budgets, where the engine's Python functions find them.

DuckDB calls our Python functions (templates, ``| json``) on any of its threads, so a
query's limits cannot travel in a thread-local. The engine registers a
:class:`QueryContext` under a fresh id, sets the connection's ``logql_query`` variable to
that id, and the compiled SQL passes it to each function call (``QUERY_VARIABLE``); the
function looks the context up and calls :meth:`QueryContext.check` between small batches.
``cursor.interrupt()`` alone does not stop a Python function that is running: the check
does, by raising, and the engine then answers the reason recorded here.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from gocompat.durations import format_humanize_bytes
from gocompat.template.limits import OutputTooLarge, RenderAborted, RenderLimits
from svc.errors import TIMEOUT_MESSAGE, BadRequestError, GatewayTimeoutError, ServiceError

__all__ = [
    "TIMEOUT_MESSAGE",
    "QueryAborted",
    "QueryContext",
    "line_too_large",
    "lookup",
    "query_too_large",
    "registered",
]


class QueryAborted(RenderAborted):
    """Raised inside an engine function to stop the query; the reason is on the context."""


def line_too_large(exc: OutputTooLarge) -> BadRequestError:
    """The answer when one entry's template output is over the per-line budget."""
    return BadRequestError(
        f"template output too large (entry: more than {format_humanize_bytes(exc.limit)}, "
        f"limit: {format_humanize_bytes(exc.limit)}); reduce what line_format or "
        "label_format builds with repeat, padding, indent or printf widths"
    )


def query_too_large(limit: int) -> BadRequestError:
    """The answer when a query's template output is over the per-query budget."""
    return BadRequestError(
        f"template output too large (query: more than {format_humanize_bytes(limit)}, "
        f"limit: {format_humanize_bytes(limit)}); consider adding more specific stream "
        "selectors or reduce the time range of the query"
    )


@dataclass
class QueryContext:
    """One running query: when it must stop and how much template output it may build."""

    id: str
    deadline: float
    """``time.monotonic()`` value past which the query fails with 504."""
    line_chars: int
    """Largest output of one template render (characters)."""
    query_chars: int
    """Largest total template output of the query (characters; 0: unbounded)."""
    rendered: int = 0
    reason: ServiceError | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def fail(self, reason: ServiceError) -> QueryAborted:
        """Record why the query stops (the first reason wins) and return the exception."""
        with self._lock:
            if self.reason is None:
                self.reason = reason
        return QueryAborted(reason.message)

    def check(self) -> None:
        """Raise :class:`QueryAborted` once the deadline has passed or the query failed."""
        if self.reason is not None:
            raise QueryAborted(self.reason.message)
        if time.monotonic() >= self.deadline:
            raise self.fail(GatewayTimeoutError(TIMEOUT_MESSAGE))

    def add_output(self, chars: int) -> None:
        """Count template output; raise once the query's total is over its budget."""
        with self._lock:
            self.rendered += chars
            over = 0 < self.query_chars < self.rendered
        if over:
            raise self.fail(query_too_large(self.query_chars))

    def render_limits(self) -> RenderLimits:
        """Limits for one render of this query."""
        return RenderLimits(max_chars=self.line_chars, interrupt=self.check)


_ids = itertools.count()
_contexts: dict[str, QueryContext] = {}
_contexts_lock = threading.Lock()


@contextmanager
def registered(
    timeout_seconds: float, *, line_chars: int, query_chars: int, name: str | None = None
) -> Iterator[QueryContext]:
    """A new context, findable by :func:`lookup` while the block runs, under ``name``
    when given (a process running one query at a time may reuse one), else a fresh id."""
    context = QueryContext(
        id=f"q{next(_ids)}" if name is None else name,
        deadline=time.monotonic() + timeout_seconds,
        line_chars=line_chars,
        query_chars=query_chars,
    )
    with _contexts_lock:
        _contexts[context.id] = context
    try:
        yield context
    finally:
        with _contexts_lock:
            del _contexts[context.id]


def lookup(query_id: str | None) -> QueryContext | None:
    """The context registered under ``query_id`` (None outside the engine)."""
    if query_id is None:
        return None
    return _contexts.get(query_id)

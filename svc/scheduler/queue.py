"""The query queue: per tenant, with actor-path sub-queues, served fairly (LIMITS.md §2.2).

The queue is a tree. Its root holds one node per tenant; a tenant's node holds the tenant's
own items (its local queue) and one child node per first segment of the actor paths
(``X-Service-Actor-Path: group|user``), and so on down. Taking an item rotates among the
tenants, and within a node among its local queue and its children, so each of a node's
``N`` sub-queues with items and its local queue get ``1/(N+1)`` of what the node gets. A
node that runs dry leaves the rotation.

A tenant may have ``max_outstanding`` items queued at once, over all its sub-queues;
one more is refused with 429 ``too many outstanding requests``. A tenant may also have at
most ``max_running`` items taken and not yet done: with it below the number of workers, a
tenant that floods the queue never holds every worker, and the next tenant's request starts
at once instead of waiting for a busy worker to finish.

Running items share the machine's cores, and an item cannot be paused once taken, so the
running slots are shared too: with ``k`` active tenants, one may run at most
``max_running // k`` items (at least one). A tenant is active while it has items queued or
running and for ``recent_seconds`` after its last one was done, so a tenant sending one
light query after another keeps its share between them instead of finding the slots taken
again by a flooding tenant's long items each time it comes back.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from svc.errors import TooManyRequestsError

__all__ = ["FairQueue", "QueueStopped"]

_T = TypeVar("_T")
_LOCAL = ""
"""The rotation key of a node's own items (child names are never empty)."""
TOO_MANY_OUTSTANDING = "too many outstanding requests"


class QueueStopped(Exception):
    """The queue was stopped while waiting for an item."""


class _Node(Generic[_T]):
    __slots__ = ("children", "local", "rotation")

    def __init__(self) -> None:
        self.local: deque[_T] = deque()
        self.children: dict[str, _Node[_T]] = {}
        self.rotation: deque[str] = deque()

    def push(self, path: Sequence[str], item: _T) -> None:
        if not path:
            if not self.local:
                self.rotation.append(_LOCAL)
            self.local.append(item)
            return
        child = self.children.get(path[0])
        if child is None:
            child = self.children[path[0]] = _Node()
            self.rotation.append(path[0])
        child.push(path[1:], item)

    def pop(self, key: str | None = None) -> _T:
        """The next item in rotation, or of the child ``key`` (the node must not be empty);
        the member served moves to the back of the rotation."""
        if key is None:
            key = self.rotation.popleft()
        else:
            self.rotation.remove(key)
        if key == _LOCAL:
            item = self.local.popleft()
            if self.local:
                self.rotation.append(key)
            return item
        child = self.children[key]
        item = child.pop()
        if child.rotation:
            self.rotation.append(key)
        else:
            del self.children[key]
        return item


class FairQueue(Generic[_T]):
    """Items of every tenant; ``get`` blocks until one is there (thread-safe)."""

    def __init__(
        self,
        max_outstanding: int,
        max_running: int = 0,
        *,
        recent_seconds: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_outstanding = max_outstanding
        self.max_running = max_running
        self.recent_seconds = recent_seconds
        self._clock = clock
        self._root: _Node[_T] = _Node()
        self._counts: dict[str, int] = {}
        self._running: dict[str, int] = {}
        self._last_done: dict[str, float] = {}
        self._cond = threading.Condition()
        self._stopped = False

    def put(self, tenant: str, path: Sequence[str], item: _T) -> None:
        """Queue ``item`` in the tenant's sub-queue at ``path``; 429 when the tenant has
        ``max_outstanding`` items queued already."""
        with self._cond:
            count = self._counts.get(tenant, 0)
            if self.max_outstanding and count >= self.max_outstanding:
                raise TooManyRequestsError(TOO_MANY_OUTSTANDING)
            self._counts[tenant] = count + 1
            self._root.push((tenant, *path), item)
            self._cond.notify()

    def get(self) -> tuple[str, _T]:
        """The next ``(tenant, item)`` in fair order among the tenants below
        ``max_running``; the caller reports it with :meth:`done`. Raises QueueStopped once
        stopped."""
        with self._cond:
            while True:
                if self._stopped:
                    raise QueueStopped
                tenant = self._eligible()
                if tenant is not None:
                    break
                # Items held back by the shares wait at most a second for a quiet tenant's
                # share to expire; an empty queue waits for a put.
                self._cond.wait(1.0 if self._counts else None)
            item = self._root.pop(tenant)
            left = self._counts[tenant] - 1
            if left:
                self._counts[tenant] = left
            else:
                del self._counts[tenant]
            self._running[tenant] = self._running.get(tenant, 0) + 1
            return tenant, item

    def _eligible(self) -> str | None:
        share = self._share()
        for tenant in self._root.rotation:
            if not share or self._running.get(tenant, 0) < share:
                return tenant
        return None

    def _share(self) -> int:
        """Items one tenant may run now (0: no bound)."""
        if not self.max_running:
            return 0
        return max(1, self.max_running // max(1, len(self._active())))

    def _active(self) -> set[str]:
        """Tenants with items queued or running, or done within ``recent_seconds``."""
        now = self._clock()
        for tenant, when in list(self._last_done.items()):
            if now - when > self.recent_seconds:
                del self._last_done[tenant]
        return self._counts.keys() | self._running.keys() | self._last_done.keys()

    def active(self) -> set[str]:
        """The tenants active now (thread-safe)."""
        with self._cond:
            return self._active()

    def done(self, tenant: str) -> None:
        """An item taken by :meth:`get` is finished."""
        with self._cond:
            left = self._running.get(tenant, 1) - 1
            if left:
                self._running[tenant] = left
            else:
                self._running.pop(tenant, None)
            self._last_done[tenant] = self._clock()
            # A share may have grown (a tenant went quiet): every waiting worker looks again.
            self._cond.notify_all()

    def outstanding(self, tenant: str) -> int:
        """Items the tenant has queued."""
        with self._cond:
            return self._counts.get(tenant, 0)

    def lengths(self) -> tuple[dict[str, int], dict[str, int]]:
        """Items queued and items running, per tenant."""
        with self._cond:
            return dict(self._counts), dict(self._running)

    def stop(self) -> None:
        """Wake every waiting ``get`` with QueueStopped (queued items are dropped)."""
        with self._cond:
            self._stopped = True
            self._root = _Node()
            self._counts.clear()
            self._cond.notify_all()

"""The query queue: per tenant, with actor-path sub-queues, served fairly (LIMITS.md §2.2).

The queue is a tree. Its root holds one node per tenant; a tenant's node holds the tenant's
own items (its local queue) and one child node per first segment of the actor paths
(``X-Service-Actor-Path: group|user``), and so on down. Taking an item rotates among the
tenants, and within a node among its local queue and its children, so each of a node's
``N`` sub-queues with items and its local queue get ``1/(N+1)`` of what the node gets. A
node that runs dry leaves the rotation.

A tenant may have ``max_outstanding`` items queued at once, over all its sub-queues;
one more is refused with 429 ``too many outstanding requests``.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
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

    def pop(self) -> _T:
        """The next item in rotation (the node must not be empty)."""
        key = self.rotation.popleft()
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

    def __init__(self, max_outstanding: int) -> None:
        self.max_outstanding = max_outstanding
        self._root: _Node[_T] = _Node()
        self._counts: dict[str, int] = {}
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
        """The next ``(tenant, item)`` in fair order; raises QueueStopped once stopped."""
        with self._cond:
            while not self._root.rotation:
                if self._stopped:
                    raise QueueStopped
                self._cond.wait()
            tenant = self._root.rotation[0]
            item = self._root.pop()
            left = self._counts[tenant] - 1
            if left:
                self._counts[tenant] = left
            else:
                del self._counts[tenant]
            return tenant, item

    def outstanding(self, tenant: str) -> int:
        """Items the tenant has queued."""
        with self._cond:
            return self._counts.get(tenant, 0)

    def stop(self) -> None:
        """Wake every waiting ``get`` with QueueStopped (queued items are dropped)."""
        with self._cond:
            self._stopped = True
            self._root = _Node()
            self._counts.clear()
            self._cond.notify_all()

"""Live tail: newly pushed rows, filtered by each subscriber's log query, fanned out.

The store calls ``TailHub.publish`` with every accepted push (a cheap hand-off: nothing
happens for tenants nobody tails). One worker thread runs each subscription's compiled
log query over just the new Arrow batch, on the shared DuckDB, and offers the result to
the subscription. A subscription holds a bounded buffer: what does not fit is dropped
and reported as dropped entries (labels and timestamp), at most ``MAX_DROPPED`` of them,
so a slow client costs bounded memory.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from logql_to_sql import Direction, ast, compile_log_query, compile_stream_matchers
from svc.model import Labels
from svc.query.engine import QueryEngine, ScanStats
from svc.query.log_queries import stream_labels_lookup
from svc.query.streams import group_streams
from svc.storage.remote_tails import WriterFeeds
from svc.storage.store import StoreView, with_streams

__all__ = ["MAX_DROPPED", "TailEntry", "TailHub", "TailSubscription"]

log = logging.getLogger(__name__)

MAX_DROPPED = 1000
"""Most dropped entries reported in one message (as the reference)."""
MAX_PENDING_ENTRIES = 10_000
"""Entries waiting for one client past which new pushes are dropped."""
MAX_PENDING_BYTES = 4 << 20
"""Line bytes waiting for one client past which new pushes are dropped."""
MAX_MESSAGE_BYTES = 1 << 20
"""About the most line bytes sent in one message."""
_QUEUE_BATCHES = 1024
_FOLLOW_WAIT_SECONDS = 5.0
"""Longest a new tail client waits for the other writers' feeds to open."""


@dataclass(frozen=True)
class TailEntry:
    """One entry for a tail client: its result labels, time and line."""

    labels: Labels
    ts: int
    line: str


@dataclass
class _Pending:
    entry: TailEntry
    release: float


@dataclass(eq=False)
class TailSubscription:
    """One tail client: its query, tenant and bounded buffer of entries to send."""

    tenant: str
    query: ast.LogQuery
    delay_seconds: float
    notify: Callable[[], None]
    max_entries: int = MAX_PENDING_ENTRIES
    max_bytes: int = MAX_PENDING_BYTES
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pending: list[_Pending] = field(default_factory=list)
    _pending_bytes: int = 0
    _dropped: list[tuple[Labels, int]] = field(default_factory=list)
    _matching: tuple[pa.Table | None, pa.Array | None] = (None, None)

    def offer(self, entries: list[TailEntry]) -> None:
        """Buffer one push's entries for sending; when the buffer is already full the whole
        push is recorded as dropped instead (memory stays within the bound plus one push)."""
        if not entries:
            return
        release = time.monotonic() + self.delay_seconds
        with self._lock:
            if len(self._pending) >= self.max_entries or self._pending_bytes >= self.max_bytes:
                room = max(MAX_DROPPED - len(self._dropped), 0)
                self._dropped += [(e.labels, e.ts) for e in entries[:room]]
            else:
                for entry in entries:
                    self._pending.append(_Pending(entry, release))
                    self._pending_bytes += len(entry.line)
        self.notify()

    def drop(self, dropped: list[tuple[Labels, int]]) -> None:
        """Record entries that were never buffered (labels and timestamp)."""
        with self._lock:
            room = max(MAX_DROPPED - len(self._dropped), 0)
            self._dropped += dropped[:room]
        self.notify()

    def take(
        self, limit: int, max_bytes: int = MAX_MESSAGE_BYTES
    ) -> tuple[list[TailEntry], list[tuple[Labels, int]], float | None]:
        """Entries due now (up to ``limit`` of them and about ``max_bytes`` of lines), the
        dropped entries so far, and when the next held-back entry is due (None: none)."""
        now = time.monotonic()
        with self._lock:
            due = size = 0
            pending = self._pending
            while due < len(pending) and due < limit and pending[due].release <= now:
                size += len(pending[due].entry.line)
                due += 1
                if size >= max_bytes:
                    break
            taken = [p.entry for p in pending[:due]]
            del pending[:due]
            self._pending_bytes -= size
            dropped, self._dropped = self._dropped, []
            following = self._pending[0].release if self._pending else None
        return taken, dropped, following

    def matching_ids(self, engine: QueryEngine, streams: pa.Table, lake: StoreView) -> pa.Array:
        """Ids of the tenant's streams the selector matches (cached per streams table)."""
        table, ids = self._matching
        if table is streams and ids is not None:
            return ids
        select = compile_stream_matchers(self.query.selector.matchers)
        view = StoreView(lake.lake, [], [], streams)
        found = engine.execute(select, view, ScanStats())["stream_id"].combine_chunks()
        self._matching = (streams, found)
        return found


class TailHub:
    """Subscriptions by tenant, fed by one worker thread from the store's pushes."""

    def __init__(self, engine: QueryEngine) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._subscriptions: dict[str, list[TailSubscription]] = {}
        self._queue: queue.Queue[tuple[str, pa.RecordBatch, pa.Table | None]] = queue.Queue(
            _QUEUE_BATCHES
        )
        self.feeds: WriterFeeds | None = None
        """On a reader of a shared catalog: the other writers' pushes, followed."""
        self._worker = threading.Thread(target=self._run, name="tail", daemon=True)
        self._worker.start()

    def subscribe(
        self,
        tenant: str,
        query: ast.LogQuery,
        delay_seconds: float,
        loop: asyncio.AbstractEventLoop,
        wake: asyncio.Event,
    ) -> TailSubscription:
        """Start receiving the tenant's new entries matching ``query``."""

        def notify() -> None:
            loop.call_soon_threadsafe(wake.set)

        subscription = TailSubscription(tenant, query, delay_seconds, notify)
        with self._lock:
            self._subscriptions.setdefault(tenant, []).append(subscription)
        return subscription

    def follow_writers(self, tenant: str) -> None:
        """Receive the tenant's pushes to the other writers too (blocks until their feeds
        are open, a few seconds at most); nothing without other writers."""
        if self.feeds is not None:
            self.feeds.follow(tenant, _FOLLOW_WAIT_SECONDS)

    def tailed(self, tenant: str) -> bool:
        """Whether the tenant has tail clients here."""
        with self._lock:
            return tenant in self._subscriptions

    def unsubscribe(self, subscription: TailSubscription) -> None:
        """Stop feeding a subscription."""
        with self._lock:
            found = self._subscriptions.get(subscription.tenant, [])
            if subscription in found:
                found.remove(subscription)
            if not found:
                self._subscriptions.pop(subscription.tenant, None)

    def publish(self, tenant: str, batch: pa.RecordBatch, streams: pa.Table | None = None) -> None:
        """Hand newly visible rows to the worker; a no-op for tenants nobody tails.
        ``streams``: those of the rows, when they were pushed to another writer (this
        process's index may not know them yet)."""
        if tenant not in self._subscriptions:
            return
        try:
            self._queue.put_nowait((tenant, batch, streams))
        except queue.Full:
            log.warning("tail: queue full, dropping a batch of %d rows", batch.num_rows)
            self._drop(tenant, batch)

    def _drop(self, tenant: str, batch: pa.RecordBatch) -> None:
        labels_of = stream_labels_lookup(self.engine, tenant)
        dropped = [
            (labels_of(stream_id), ts)
            for ts, stream_id in zip(
                batch.column("ts").to_pylist()[:MAX_DROPPED],
                batch.column("stream_id").to_pylist()[:MAX_DROPPED],
                strict=True,
            )
        ]
        for subscription in self._current(tenant):
            subscription.drop(dropped)

    def _current(self, tenant: str) -> list[TailSubscription]:
        with self._lock:
            return list(self._subscriptions.get(tenant, ()))

    def _run(self) -> None:
        while True:
            tenant, batch, streams = self._queue.get()
            for subscription in self._current(tenant):
                try:
                    subscription.offer(self.filter(subscription, batch, streams))
                except Exception:
                    log.exception("tail: filtering new rows failed")

    def filter(
        self,
        subscription: TailSubscription,
        batch: pa.RecordBatch,
        more_streams: pa.Table | None = None,
    ) -> list[TailEntry]:
        """The entries of ``batch`` the subscription's query returns, oldest first."""
        tenant = subscription.tenant
        store = self.engine.store
        streams = store.index.table(tenant)
        if more_streams is not None:
            streams = with_streams(streams, more_streams)
        empty = StoreView(store.lake, [], [], streams)
        ids = subscription.matching_ids(self.engine, streams, empty)
        rows = pa.Table.from_batches([batch])
        rows = rows.filter(pc.is_in(rows["stream_id"], value_set=ids))
        if rows.num_rows == 0:
            return []
        plan = compile_log_query(
            subscription.query,
            start_ns=pc.min(rows["ts"]).as_py(),
            end_ns=pc.max(rows["ts"]).as_py() + 1,
            limit=None,
            direction=Direction.FORWARD,
        )
        deletes = store.deletes(tenant, pc.min(rows["ts"]).as_py(), pc.max(rows["ts"]).as_py() + 1)
        view = StoreView(store.lake, [], [rows], streams, deletes)
        result = self.engine.execute(plan.select, view, ScanStats())
        labels_of = stream_labels_lookup(self.engine, tenant, view)
        grouped = group_streams(result, labels_of, backward=False)
        entries = [
            TailEntry(stream.labels, ts, line) for stream in grouped for ts, line in stream.values
        ]
        entries.sort(key=lambda e: e.ts)
        return entries

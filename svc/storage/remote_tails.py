"""Live tail across writers: each writer streams the rows pushed to it, readers follow.

A writer answers ``GET /svc/internal/tail`` (one tenant) with a stream of frames, kept
open: every accepted push of the tenant as one frame (the rows and their streams, as
``encode_head`` writes them), and an empty frame every second, which tells the reader the
writer is alive and the writer that the reader still listens. A frame is its length in 8
bytes, then the body.

A reader with tail clients of a tenant (``TailHub``) follows every live writer of the
ring other than itself (``WriterFeeds``): one connection per writer, opened before the
client's history is read (so that an entry is in the history, or arrives by the feed, or
both, deduplicated by the tail), retried while the tenant has tail clients, closed once
none is left. The rows go to the reader's hub as its own pushes would.
"""

from __future__ import annotations

import asyncio
import http.client
import logging
import struct
import threading
import urllib.request
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from svc.storage.remote_heads import RemoteHeads, decode_head, encode_head

__all__ = ["TAIL_PATH", "RowFeed", "WriterFeeds"]

log = logging.getLogger(__name__)

TAIL_PATH = "/svc/internal/tail"
_LENGTH = struct.Struct(">Q")
_HEARTBEAT_SECONDS = 1.0
_READ_TIMEOUT_SECONDS = 10.0
"""A writer silent this long (no heartbeat) is dropped and dialled again."""
_FOLLOW_SECONDS = 1.0
"""How often a reader looks for writers that joined and connections that ended."""
_QUEUED_FRAMES = 1024
"""Frames waiting for one reader past which new pushes are dropped for it."""

Publish = Callable[[str, pa.RecordBatch, pa.Table], None]
"""Where a reader hands the rows it receives: tenant, rows, their streams."""


class RowFeed:
    """The writer's side: pushes of each followed tenant, as frames for its readers.

    ``publish`` is a listener of the store's accepted rows (``Store.on_rows``), called on
    the event loop; each reader's connection drains a queue of its own.
    """

    def __init__(self, streams_of: Callable[[str], pa.Table]) -> None:
        self.streams_of = streams_of
        self._queues: dict[str, set[asyncio.Queue[bytes]]] = {}

    def publish(self, tenant: str, batch: pa.RecordBatch) -> None:
        """Queue one push's rows for the tenant's readers (nothing when none follows)."""
        queues = self._queues.get(tenant)
        if not queues:
            return
        streams = self.streams_of(tenant)
        streams = streams.filter(pc.is_in(streams["stream_id"], value_set=batch["stream_id"]))
        body = encode_head([pa.Table.from_batches([batch])], streams, 0)
        frame = _LENGTH.pack(len(body)) + body
        for queue in queues:
            try:
                queue.put_nowait(frame)
            except asyncio.QueueFull:
                log.warning("tail feed: a reader is behind, dropping %d rows", batch.num_rows)

    async def frames(self, tenant: str, stopping: threading.Event) -> AsyncIterator[bytes]:
        """The tenant's frames for one reader, from now on, until it goes away or the
        writer is ``stopping`` (an open feed would hold up its graceful shutdown)."""
        queue: asyncio.Queue[bytes] = asyncio.Queue(_QUEUED_FRAMES)
        self._queues.setdefault(tenant, set()).add(queue)
        heartbeat = _LENGTH.pack(0)
        try:
            yield heartbeat  # registered: the reader may count on every later push
            while not stopping.is_set():
                try:
                    yield await asyncio.wait_for(queue.get(), _HEARTBEAT_SECONDS)
                except TimeoutError:
                    yield heartbeat
        finally:
            queues = self._queues.get(tenant, set())
            queues.discard(queue)
            if not queues:
                self._queues.pop(tenant, None)


@dataclass
class _Connection:
    """One reader's connection to one writer's feed."""

    opened: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)


class WriterFeeds:
    """The reader's side: follows the live writers' feeds of the tenants being tailed."""

    def __init__(self, heads: RemoteHeads, publish: Publish, wanted: Callable[[str], bool]):
        self.heads = heads
        self.publish = publish
        self.wanted = wanted
        """Whether the tenant still has tail clients here (else its feeds close)."""
        self._lock = threading.Lock()
        self._followers: dict[str, threading.Thread] = {}
        self._connections: dict[tuple[str, str], _Connection] = {}
        self._stopping = threading.Event()

    def follow(self, tenant: str, wait_seconds: float) -> None:
        """Follow the tenant's rows on every live writer; returns once each writer's feed
        is open (or after ``wait_seconds``, a writer being slow or gone)."""
        with self._lock:
            follower = self._followers.get(tenant)
            if follower is None or not follower.is_alive():
                follower = threading.Thread(
                    target=self._follow, args=(tenant,), name=f"tail-feeds-{tenant}", daemon=True
                )
                self._followers[tenant] = follower
                self._connect_all(tenant)
                follower.start()
            waiting = [c for (t, _), c in self._connections.items() if t == tenant]
        for connection in waiting:
            connection.opened.wait(wait_seconds)

    def stop(self) -> None:
        """Close every feed (they end within a heartbeat)."""
        self._stopping.set()

    def _follow(self, tenant: str) -> None:
        while not self._stopping.wait(_FOLLOW_SECONDS):
            with self._lock:
                if not self.wanted(tenant):
                    self._followers.pop(tenant, None)
                    return
                self._connect_all(tenant)

    def _connect_all(self, tenant: str) -> None:
        """Open a feed to each live writer the tenant has none to (under the lock)."""
        for writer in self.heads.writers():
            key = (tenant, writer.name)
            current = self._connections.get(key)
            if current is not None and not current.ended.is_set():
                continue
            connection = self._connections[key] = _Connection()
            threading.Thread(
                target=self._read,
                args=(tenant, writer.address, connection),
                name=f"tail-feed-{writer.name}",
                daemon=True,
            ).start()

    def _read(self, tenant: str, address: str, connection: _Connection) -> None:
        request = urllib.request.Request(f"{address}{TAIL_PATH}", headers={"X-Scope-OrgID": tenant})
        try:
            with urllib.request.urlopen(request, timeout=_READ_TIMEOUT_SECONDS) as response:
                while not self._stopping.is_set():
                    (length,) = _LENGTH.unpack(_read_exactly(response, _LENGTH.size))
                    connection.opened.set()
                    if not length:
                        if not self.wanted(tenant):
                            return
                        continue
                    head = decode_head("", _read_exactly(response, length))
                    for batch in head.rows.to_batches():
                        self.publish(tenant, batch, head.streams)
        except Exception as exc:  # gone, refused, timed out: dialled again while wanted
            log.debug("tail feed from %s ended: %s", address, exc)
        finally:
            connection.opened.set()
            connection.ended.set()


def _read_exactly(response: http.client.HTTPResponse, size: int) -> bytes:
    data = b""
    while len(data) < size:
        more = response.read(size - len(data))
        if not more:
            raise ConnectionError("the writer closed its feed")
        data += more
    return data

"""The store: WAL, head, stream index, Parquet lake and catalog behind one interface.

Write: ``push`` logs the streams durably, then applies them to the head (in the WAL's
commit, so rotation never splits the two). Flush: swap the head out under the WAL's lock,
write it to Parquet, list the files in the catalog together with the WAL watermark, retire
covered WAL segments. Read: ``view`` returns, under one lock, the listed files and the
in-memory tables, so a query never sees a flushed row twice or not at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from schemas.log_rows import HEAD_SCHEMA, LABEL_MAP
from svc.errors import ServiceError
from svc.ingest.model import PushStream
from svc.storage.catalog import Catalog, FileEntry, FileStreamRow, StreamRow
from svc.storage.files import release_free_memory
from svc.storage.head import Head
from svc.storage.lake import write_tenant_files_summarized
from svc.storage.streams import StreamIndex, stream_id_of
from svc.storage.wal import WriteAheadLog

__all__ = ["IngesterShuttingDownError", "Store", "StoreSettings", "StoreView"]

log = logging.getLogger(__name__)

# Pushes read, decoded and written at once. Decoding holds the GIL: more of them at a time
# only holds more bodies and decoded rows in memory (two still share a WAL sync).
PUSHES_IN_FLIGHT = 2


class IngesterShuttingDownError(ServiceError):
    """A write arrived after the ingester stopped taking writes (500, as the reference)."""

    status = 500


class WalRecord(msgspec.Struct, array_like=True):
    """One accepted push as logged: the tenant and its streams."""

    tenant: str
    streams: list[PushStream]


_encode_record = msgspec.msgpack.Encoder().encode
_decode_record = msgspec.msgpack.Decoder(WalRecord).decode
_encode_labels = msgspec.json.Encoder().encode
_decode_labels = msgspec.json.Decoder(list[tuple[str, str]]).decode


@dataclass(frozen=True)
class StoreSettings:
    """Where and when the store writes."""

    root: Path
    head_max_bytes: int
    max_head_age_seconds: float
    flush_check_seconds: float
    wal_segment_max_bytes: int
    row_group_rows: int


@dataclass
class StoreView:
    """What a query of one tenant reads: listed files plus in-memory tables."""

    lake_root: Path
    files: list[FileEntry]
    head_tables: list[pa.Table]
    streams: pa.Table

    @property
    def paths(self) -> list[str]:
        """Absolute paths of the files."""
        return [str(self.lake_root / f.path) for f in self.files]


@dataclass
class _Prepared:
    batch: pa.RecordBatch
    line_bytes: int
    spans: list[tuple[PushStream, int, int]] = field(default_factory=list)


class Store:
    """Durable, queryable storage of every tenant's log entries."""

    def __init__(self, settings: StoreSettings) -> None:
        self.settings = settings
        self.lake_root = settings.root / "lake"
        self.catalog = Catalog(settings.root / "catalog.sqlite")
        self.wal = WriteAheadLog(
            settings.root / "wal", segment_max_bytes=settings.wal_segment_max_bytes
        )
        self.index = StreamIndex()
        self.head = Head()
        self._flushing: list[Head] = []
        self._view_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._flushed = threading.Condition()
        self._writing = False  # a flush is writing a head out (not: a failed head lingers)
        self._admitted: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._flusher: threading.Thread | None = None
        self.flushes_total = 0
        self.read_only = False
        # Called once per accepted push with (tenant, rows, line bytes), after it is durable.
        self.on_push: Callable[[str, int, int], None] | None = None
        # Called once per accepted push with (tenant, rows) once they are visible (tail).
        self.on_rows: list[Callable[[str, pa.RecordBatch], None]] = []

    # lifecycle -----------------------------------------------------------------------

    def open(self) -> int:
        """Load the catalog, replay the WAL into the head, start writing; returns replayed rows."""
        self.load_index()
        replayed = self.replay_wal()
        self.start_flusher()
        return replayed

    def load_index(self) -> None:
        """Load every persisted stream of the catalog into the stream index."""
        for row in self.catalog.streams():
            labels = tuple((k, v) for k, v in _decode_labels(row.labels))
            self.index.observe(row.tenant, row.key, labels, row.first_ts, row.last_ts)

    def replay_wal(self) -> int:
        """Apply the unflushed WAL records to the head, then start the WAL writer."""
        replayed = 0
        for payload in self.wal.replay(after_seq=self.catalog.flushed_wal_seq()):
            record = _decode_record(payload)
            prepared = _prepare(record.streams)
            self._apply(record.tenant, prepared)
            replayed += prepared.batch.num_rows
        self.wal.start()
        return replayed

    def start_flusher(self) -> None:
        """Start the thread that flushes the head when it is too big or too old."""
        self._flusher = threading.Thread(target=self._flush_loop, name="flusher", daemon=True)
        self._flusher.start()

    def stop_flusher(self) -> None:
        """Stop the flusher thread (a flush in progress completes first)."""
        self._stopping.set()
        self._wake.set()
        if self._flusher is not None:
            self._flusher.join()

    def close(self, *, flush: bool) -> None:
        """Stop accepting writes, optionally flush the head, and close everything."""
        self.read_only = True
        self.stop_flusher()
        if flush:
            self.flush()  # while the WAL still runs: the flush rotates and retires segments
        self.wal.stop()
        self.catalog.close()

    # write path ----------------------------------------------------------------------

    async def push(self, tenant: str, streams: list[PushStream]) -> None:
        """Make the streams durable, then visible; returns once both are true."""
        if self.read_only:
            raise IngesterShuttingDownError("Ingester is shutting down")
        if not streams:
            return
        await self.wait_for_room()
        prepared = _prepare(streams)
        payload = _encode_record(WalRecord(tenant, streams))
        await self.wal.append(payload, lambda: self._apply(tenant, prepared))
        if self.on_push is not None:
            self.on_push(tenant, prepared.batch.num_rows, prepared.line_bytes)
        for listener in self.on_rows:
            listener(tenant, prepared.batch)
        if self.head.line_bytes >= self.settings.head_max_bytes:
            self._wake.set()

    @contextlib.asynccontextmanager
    async def admission(self) -> AsyncIterator[None]:
        """Bounded request buffering: at most ``PUSHES_IN_FLIGHT`` pushes are read, decoded
        and written at a time, each once the head has room (``wait_for_room``). The HTTP
        handlers enter it before reading a body, so that waiting requests stay in the
        socket buffers rather than in memory."""
        loop = asyncio.get_running_loop()
        slots = self._admitted.get(loop)
        if slots is None:
            slots = self._admitted[loop] = asyncio.Semaphore(PUSHES_IN_FLIGHT)
        async with slots:
            await self.wait_for_room()
            yield

    def head_full(self) -> bool:
        """Whether a flush is writing one head while the next one is already full."""
        return self._writing and self.head.line_bytes >= self.settings.head_max_bytes

    async def wait_for_room(self) -> None:
        """Backpressure: while ``head_full``, wait for the flush to end.

        Pushes faster than the flush writes would otherwise grow the next head without
        bound while the previous one is still in memory; waiting here bounds the heads in
        memory to two (the one written, the one filling).
        """
        while self.head_full():
            await asyncio.to_thread(self._wait_flushed, 0.1)

    def _wait_flushed(self, timeout: float) -> None:
        with self._flushed:
            if self.head_full():
                self._flushed.wait(timeout)

    def _apply(self, tenant: str, prepared: _Prepared) -> None:
        for stream, first, last in prepared.spans:
            self.index.observe(tenant, stream.key, stream.labels, first, last)
        self.head.append(tenant, prepared.batch, prepared.line_bytes)

    # flush ---------------------------------------------------------------------------

    def flush(self) -> int:
        """Write the whole head to Parquet now; returns the number of files written."""
        with self._flush_lock:
            with self.wal.commit_lock:
                if self.head.rows == 0:
                    return 0
                closed_seq = self.wal.rotate_locked()
                with self._view_lock:
                    old, self.head = self.head, Head()
                    self._flushing.append(old)
                self._writing = True
            try:
                old.compact()
                release_free_memory()  # the per-push batches compact() let go of
                entries, streams, summaries = self._write(old)
                with self._view_lock:
                    self.catalog.commit_flush(entries, streams, closed_seq, summaries)
                    self._flushing.remove(old)
            finally:
                with self._flushed:
                    self._writing = False
                    self._flushed.notify_all()
            self.wal.retire(closed_seq)
            self.flushes_total += 1
            log.info("flushed head: files=%d rows=%d", len(entries), old.rows)
            del old
            release_free_memory()
            return len(entries)

    def _write(self, head: Head) -> tuple[list[FileEntry], list[StreamRow], list[FileStreamRow]]:
        entries: list[FileEntry] = []
        streams: list[StreamRow] = []
        summaries: list[FileStreamRow] = []
        for tenant, tenant_head in head.tenants.items():
            table = tenant_head.as_table()

            def labels_of(stream_id: int, tenant: str = tenant) -> list[tuple[str, str]]:
                return self._labels(tenant, stream_id)

            written, summarized = write_tenant_files_summarized(
                self.lake_root, tenant, table, labels_of, self.settings.row_group_rows
            )
            entries += written
            summaries += summarized
            for stream_id in pc.unique(table["stream_id"]).to_pylist():
                info = self.index.get(tenant, stream_id)
                if info is not None:
                    streams.append(
                        StreamRow(
                            tenant,
                            stream_id,
                            info.key,
                            _encode_labels(info.labels).decode(),
                            info.first_ts,
                            info.last_ts,
                        )
                    )
        return entries, streams, summaries

    def _labels(self, tenant: str, stream_id: int) -> list[tuple[str, str]]:
        info = self.index.get(tenant, stream_id)
        return [] if info is None else list(info.labels)

    def _flush_loop(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self.settings.flush_check_seconds)
            self._wake.clear()
            if self._stopping.is_set():
                return
            if self._flush_due():
                try:
                    self.flush()
                except Exception:
                    log.exception("flush failed; the head stays in memory and in the WAL")
                    time.sleep(1)

    def _flush_due(self) -> bool:
        # A function of its own so that no local variable keeps a flushed head alive while
        # the flusher sleeps.
        head = self.head
        too_big = head.line_bytes >= self.settings.head_max_bytes
        return too_big or (
            head.rows > 0 and head.age_seconds() >= self.settings.max_head_age_seconds
        )

    # read path -----------------------------------------------------------------------

    def view(self, tenant: str, start_ns: int, end_ns: int) -> StoreView:
        """Files and in-memory tables holding the tenant's data in ``[start_ns, end_ns)``."""
        with self._view_lock:
            files = self.catalog.files(tenant, start_ns, end_ns)
            tables = [h.table(tenant) for h in [*self._flushing, self.head]]
        return StoreView(
            lake_root=self.lake_root,
            files=files,
            head_tables=[t for t in tables if t is not None],
            streams=self.index.table(tenant),
        )


def _prepare(streams: list[PushStream]) -> _Prepared:
    timestamps: list[int] = []
    stream_ids: list[int] = []
    lines: list[str] = []
    metadata: list[list[tuple[str, str]] | None] = []
    spans = []
    has_metadata = False
    for stream in streams:
        count = len(stream.timestamps)
        if count == 0:
            continue
        timestamps += stream.timestamps
        lines += stream.lines
        stream_ids += [stream_id_of(stream.key)] * count
        if stream.metadata is None:
            metadata += [None] * count
        else:
            has_metadata = True
            metadata += [list(pairs) if pairs else None for pairs in stream.metadata]
        spans.append((stream, min(stream.timestamps), max(stream.timestamps)))
    line_array = pa.array(lines, pa.string())
    batch = pa.record_batch(
        [
            pa.array(timestamps, pa.int64()),
            pa.array(stream_ids, pa.int64()),
            line_array,
            pa.array(metadata, LABEL_MAP) if has_metadata else pa.nulls(len(lines), LABEL_MAP),
        ],
        schema=HEAD_SCHEMA,
    )
    line_bytes = pc.sum(pc.binary_length(line_array)).as_py() or 0
    return _Prepared(batch, line_bytes, spans)

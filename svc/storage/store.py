"""The store: WAL, head, stream index, Parquet lake and catalog behind one interface.

Write: ``push`` logs the streams durably, then applies them to the head (in the WAL's
commit, so rotation never splits the two). Flush: swap the head out under the WAL's lock,
write it to Parquet, list the files in the catalog together with the WAL watermark, retire
covered WAL segments. Read: ``view`` returns, under one lock, the listed files and the
in-memory tables, so a query never sees a flushed row twice or not at all.

Faults. A flush that fails keeps its head queryable and first in line: the next flush
writes it again before anything newer, so flushes are committed in WAL order and the
watermark (``flushed_wal_seq``: every record in that segment and before is in a listed
file) never passes rows that are only in memory. At startup the catalog is rebuilt from
the lake when it is missing, listed files that are missing or damaged are quarantined, and
files no flush committed are swept away. A file found damaged by a query is quarantined
and the query runs again without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import shutil
import threading
import uuid
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from logql_to_sql import LogQuery
from schemas.log_rows import HEAD_SCHEMA, LABEL_MAP
from svc.errors import ServiceError, ServiceUnavailableError
from svc.model import Labels, PushStream
from svc.off_loop import OFF_LOOP_ENTRIES, off_loop
from svc.storage import faults
from svc.storage.catalog import (
    CATALOG_FILENAME,
    Catalog,
    CatalogDb,
    FileEntry,
    FileStreamRow,
    StreamRow,
)
from svc.storage.disk_guard import DiskGuard
from svc.storage.files import (
    DataDirectoryLock,
    fsync_directory,
    lake_publish_lock,
    release_free_memory,
)
from svc.storage.head import Head
from svc.storage.lake import FlushInfo, day_numbers, day_rows, write_day_file
from svc.storage.lake_check import check_file, lake_files, read_fully, sweep
from svc.storage.leases import FileLeases, Lease
from svc.storage.objects import LakeStorage, LocalLake, S3Lake, S3Settings
from svc.storage.rebuild import rebuild_catalog
from svc.storage.remote_heads import RemoteHead, RemoteHeads, encode_head
from svc.storage.skip_index import remove_sidecars, sweep_sidecars
from svc.storage.skip_indexer import SkipIndexer
from svc.storage.streams import StreamIndex, StreamInfo, stream_id_of, stream_infos
from svc.storage.wal import WriteAheadLog

__all__ = [
    "DeleteFilter",
    "FlushError",
    "IngesterShuttingDownError",
    "ReadShare",
    "Store",
    "StoreSettings",
    "StoreView",
    "with_streams",
]

log = logging.getLogger(__name__)

# Pushes read, decoded and written at once. Decoding holds the GIL: more of them at a time
# only holds more bodies and decoded rows in memory (two still share a WAL sync).
PUSHES_IN_FLIGHT = 2
_REMOTE_ATTEMPTS = 3
SHARED_REMOVE_DELAY_SECONDS = 600.0
"""How long files replaced in a shared catalog stay in the lake: other processes' queries
may still read them, and hold no lease here."""


class IngesterShuttingDownError(ServiceError):
    """A write arrived after the ingester stopped taking writes (500, as the reference)."""

    status = 500


class FlushError(ServiceError):
    """A flush failed; its entries stay in memory and in the WAL and are retried (503)."""

    status = 503


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
    disk_full_threshold: float = 0.0
    """Refuse pushes at this used share of the data filesystem (0: never)."""
    object_store: S3Settings | None = None
    """Keep the lake in this bucket instead of under ``root``."""
    catalog_dsn: str = ""
    """Keep the catalog in this PostgreSQL database, shared with other processes, instead
    of SQLite under ``root``."""
    writer: str = ""
    """This process's name in a shared catalog (whose WAL watermark it advances)."""
    skip_index: bool = True
    """Build the skipping index of new lake files in the background (``skip_indexer``)."""


@dataclass(frozen=True)
class DeleteFilter:
    """Entries a view hides: those of a delete request (its query, over ``[start_ns,
    end_ns]``, both ends included) that may still be stored."""

    query: LogQuery
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class ReadShare:
    """What a query reads of a file narrowed to some row groups (its statistics)."""

    rows: int
    line_bytes: int
    file_bytes: int

    @classmethod
    def whole(cls, entry: FileEntry) -> ReadShare:
        """All of a file."""
        return cls(entry.rows, entry.line_bytes, entry.file_bytes)


@dataclass
class StoreView:
    """What a query of one tenant reads: listed files plus in-memory tables, minus the
    entries of its delete requests."""

    lake: LakeStorage
    files: list[FileEntry]
    head_tables: list[pa.Table]
    streams: pa.Table
    deletes: tuple[DeleteFilter, ...] = ()
    lease: Lease | None = None
    """Keeps the files on disk while the view (or one derived from it) is alive."""
    window: tuple[int, int] | None = None
    """Only the files' entries with ``ts`` in these inclusive bounds (a limited query
    reading a compacted file piece by piece); the in-memory tables are not narrowed."""
    row_ranges: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    """Files (relative paths) of which only these row ranges (first row, rows) are read:
    the row groups the skipping index says may hold the query's needles."""
    shares: dict[str, ReadShare] = field(default_factory=dict)
    """Of the files in ``row_ranges``, what those row groups hold (statistics)."""

    def share(self, entry: FileEntry) -> ReadShare:
        """What the view reads of one of its files."""
        found = self.shares.get(entry.path)
        return ReadShare.whole(entry) if found is None else found

    @property
    def paths(self) -> list[str]:
        """URLs of the files (absolute paths in a local lake)."""
        return [self.lake.url(f.path) for f in self.files]


@dataclass
class _Flushing:
    """A head swapped out for flushing, with the WAL segments its rows are in."""

    head: Head
    wal_first_seq: int
    wal_seq: int


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
        self.quarantine_root = settings.root / "quarantine"
        self.lake: LakeStorage = (
            LocalLake(self.lake_root)
            if settings.object_store is None
            else S3Lake(settings.object_store, settings.root / "lake-staging")
        )
        # Taken first: nothing below may touch a data directory another process owns.
        self._directory_lock = DataDirectoryLock(settings.root)
        self._directory_lock.acquire()
        self.catalog = (
            Catalog.postgres(settings.catalog_dsn, settings.writer)
            if settings.catalog_dsn
            else Catalog(settings.root / CATALOG_FILENAME)
        )
        self.wal = WriteAheadLog(
            settings.root / "wal", segment_max_bytes=settings.wal_segment_max_bytes
        )
        self.wal.on_write_failure = self._wal_write_failed
        self.disk_guard = DiskGuard(settings.root, settings.disk_full_threshold)
        self._index = StreamIndex()
        self.leases = FileLeases()
        self._memory_turns = threading.Lock()
        """Held by a flush while it writes and by the skip indexer for each slice it reads,
        so that their buffers are never in memory at the same time."""
        self.skip_indexer = SkipIndexer(
            self.lake, self.catalog, enabled=settings.skip_index, turns=self._memory_turns
        )
        # (tenant, start_ns, end_ns) -> the delete filters of the tenant's views (deletion).
        self.delete_filters: Callable[[str, int, int], tuple[DeleteFilter, ...]] | None = None
        self.head = Head()
        self._head_first_seq = 1
        self._flushing: list[_Flushing] = []
        self._view_lock = threading.Lock()
        self._flush_lock = threading.Lock()
        self._flushed = threading.Condition()
        self._writing = False  # a flush is writing a head out (not: a failed head lingers)
        self._admitted: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._quarantine_lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._flusher: threading.Thread | None = None
        self.flushes_total = 0
        self.flush_failures_total = 0
        self.quarantined_files_total = 0
        self.read_only = False
        # Called once per accepted push with (tenant, rows, line bytes), after it is durable.
        self.on_push: Callable[[str, int, int], None] | None = None
        # Called once per accepted push with (tenant, rows) once they are visible (tail).
        self.on_rows: list[Callable[[str, pa.RecordBatch], None]] = []
        # The other writers' unflushed heads (readers of a shared catalog).
        self.remote: RemoteHeads | None = None

    # lifecycle -----------------------------------------------------------------------

    def open(self) -> int:
        """Open the catalog, replay the WAL into the head, start writing; returns replayed
        rows."""
        self.open_catalog()
        replayed = self.replay_wal()
        self.start_flusher()
        return replayed

    def open_catalog(self) -> None:
        """Own the data directory, bring catalog and lake into agreement, load the index."""
        self._directory_lock.acquire()
        self.check_lake()
        self.load_index()

    def close_catalog(self) -> None:
        """Close the catalog and give up the data directory."""
        self.catalog.close()
        self._directory_lock.release()

    @property
    def index(self) -> StreamIndex:
        """The stream index, first brought up to date with streams another process (a
        backfill) listed in the catalog since the last look."""
        if self.catalog.changed_elsewhere():
            self.load_index()
        return self._index

    def check_lake(self) -> None:
        """Startup repairs: rebuild a lost catalog, quarantine listed files that are
        missing or damaged, remove files no flush committed."""
        with lake_publish_lock(self.settings.root):
            self._check_lake()

    def _check_lake(self) -> None:
        # A lost local catalog over a bucket: one listing tells whether to rebuild it.
        single = not self.lake.local and not self.catalog.shared
        if single and self.catalog.is_empty() and self.lake.files():
            self.rebuild_catalog()
        if not self.lake.local or self.catalog.shared:
            # Files are checked when a query fails on them: a start does not read a whole
            # bucket. Unlisted files may be another writer's, about to be listed, so none
            # is swept; only this process's unpublished files go.
            if not self.lake.local:
                shutil.rmtree(self.lake.staging, ignore_errors=True)
            return
        if self.catalog.is_empty() and lake_files(self.lake_root):
            self.rebuild_catalog()
        bad = []
        for entry in self.catalog.all_files():
            reason = check_file(self.lake_root / entry.path, entry.file_bytes)
            if reason is not None:
                bad.append((entry.path, reason))
        self._quarantine(bad)
        listed = {entry.path for entry in self.catalog.all_files()}
        sweep_sidecars(self.lake_root, listed)
        for relative in sweep(self.lake_root, listed):
            log.warning(
                "removed lake file %s: no flush committed it (a crash or a failed "
                "flush left it; its entries are in the WAL)",
                relative,
            )

    def rebuild_catalog(self) -> None:
        """List the lake's files in the (empty) catalog again, from their own metadata."""
        segments = {seq for seq, _ in self.wal.segments()}
        report = rebuild_catalog(self.catalog, self.lake, self.quarantine_root, segments)
        self.quarantined_files_total += len(report.quarantined)
        log.warning(
            "catalog was missing or empty while the lake holds files: rebuilt it from the lake: "
            "files=%d streams=%d flushed_wal_seq=%d unlisted=%d quarantined=%d",
            len(report.listed),
            report.streams,
            report.watermark,
            len(report.unlisted),
            len(report.quarantined),
        )

    def load_index(self) -> None:
        """Load every persisted stream of the catalog into the stream index."""
        for row in self.catalog.streams():
            labels = tuple((k, v) for k, v in _decode_labels(row.labels))
            self._index.observe(row.tenant, row.key, labels, row.first_ts, row.last_ts)

    def replay_wal(self) -> int:
        """Apply the unflushed WAL records to the head, then start the WAL writer."""
        replayed = 0
        watermark = self.catalog.flushed_wal_seq()
        for record in self.wal.replay(watermark, _decode_record):
            prepared = _prepare(record.streams)
            self._apply(record.tenant, prepared)
            replayed += prepared.batch.num_rows
        self._head_first_seq = watermark + 1
        self.wal.start(after_seq=watermark)
        return replayed

    def start_flusher(self) -> None:
        """Start the thread that flushes the head when it is too big or too old, and the
        skipping indexer's."""
        self._flusher = threading.Thread(target=self._flush_loop, name="flusher", daemon=True)
        self._flusher.start()
        if not self.catalog.shared:
            # Files of an older version or of a rebuilt catalog: indexed in the background
            # (with a shared catalog, each file when a query first meets it).
            self.skip_indexer.request(self.catalog.files_without_skip_index())
        self.skip_indexer.start()

    def stop_flusher(self) -> None:
        """Stop the flusher thread (a flush in progress completes first) and the indexer."""
        self._stopping.set()
        self._wake.set()
        if self._flusher is not None:
            self._flusher.join()
        self.skip_indexer.stop()

    def close(self, *, flush: bool) -> None:
        """Stop accepting writes, optionally flush the head, and close everything.

        A flush that fails here is logged: its entries stay in the WAL for the next start.
        """
        self.read_only = True
        self.stop_flusher()
        if flush:
            with contextlib.suppress(FlushError):
                self.flush()  # while the WAL still runs: the flush rotates and retires segments
        self.wal.stop()
        self.close_catalog()

    # health --------------------------------------------------------------------------

    def degraded_lake(self) -> str | None:
        """Why the lake is degraded (files kept in quarantine), or None."""
        kept = _count_files(self.quarantine_root)
        if not kept:
            return None
        return f"{kept} damaged lake file(s) kept in {self.quarantine_root}"

    def degraded_wal(self) -> str | None:
        """Why the WAL is degraded (damaged segments kept aside), or None."""
        kept = _count_files(self.wal.corrupt_directory)
        if not kept:
            return None
        return f"{kept} damaged WAL segment(s) kept in {self.wal.corrupt_directory}"

    # write path ----------------------------------------------------------------------

    async def push(self, tenant: str, streams: list[PushStream]) -> None:
        """Make the streams durable, then visible; returns once both are true."""
        if self.read_only:
            raise IngesterShuttingDownError("Ingester is shutting down")
        if not streams:
            return
        self.disk_guard.check()
        await self.wait_for_room()
        entries = sum(len(stream.timestamps) for stream in streams)
        prepared, payload = await off_loop(
            entries >= OFF_LOOP_ENTRIES, lambda: _prepared_record(tenant, streams)
        )
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
            self._index.observe(tenant, stream.key, stream.labels, first, last)
        self.head.append(tenant, prepared.batch, prepared.line_bytes)

    def _wal_write_failed(self, exc: OSError) -> None:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            self.disk_guard.refresh()

    # flush ---------------------------------------------------------------------------

    def flush(self) -> int:
        """Write the whole head to Parquet now; returns the number of files written.

        Heads whose flush failed earlier go first, oldest first; raises FlushError (and
        leaves the current head in place) when one of them fails again.
        """
        with self._flush_lock:
            written = 0
            for pending in list(self._flushing):
                written += self._flush_one(pending)
            with self.wal.commit_lock:
                if self.head.rows == 0:
                    return written
                try:
                    closed_seq = self.wal.rotate_locked()
                except OSError as exc:
                    raise self._flush_failed(exc) from exc
                pending = _Flushing(self.head, self._head_first_seq, closed_seq)
                with self._view_lock:
                    self.head = Head()
                    self._head_first_seq = closed_seq + 1
                    self._flushing.append(pending)
            written += self._flush_one(pending)
            del pending
            release_free_memory()
            return written

    def _flush_one(self, pending: _Flushing) -> int:
        """Write one swapped-out head, list its files, retire its WAL segments."""
        self._writing = True
        try:
            with self._memory_turns:
                pending.head.compact()
                release_free_memory()  # the per-push batches compact() let go of
                entries, streams, summaries = self._write(pending)
        except Exception as exc:
            raise self._flush_failed(exc) from exc
        finally:
            with self._flushed:
                self._writing = False
                self._flushed.notify_all()
        try:
            with self._view_lock:
                self.catalog.commit_flush(entries, streams, pending.wal_seq, summaries)
                self._flushing.remove(pending)
        except Exception as exc:
            if not self._committed(pending):
                _remove_files(self.lake, entries)
                raise self._flush_failed(exc) from exc
            with self._view_lock:  # the commit went through although it reported an error
                self._flushing.remove(pending)
        self.lake.settle(entry.path for entry in entries)
        self.wal.retire(pending.wal_seq)
        self.flushes_total += 1
        self.skip_indexer.request(entry.path for entry in entries)
        log.info("flushed head: files=%d rows=%d", len(entries), pending.head.rows)
        return len(entries)

    def _committed(self, pending: _Flushing) -> bool:
        try:
            return self.catalog.flushed_wal_seq() >= pending.wal_seq
        except Exception:
            return False

    def _flush_failed(self, exc: BaseException) -> FlushError:
        self.flush_failures_total += 1
        reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        log.error(
            "flush failed, its entries stay in memory and in the WAL and are retried: %s", exc
        )
        return FlushError(
            f"flush failed, the entries stay in memory and in the WAL and are retried: "
            f"{reason.lower()}"
        )

    def _write(
        self, pending: _Flushing
    ) -> tuple[list[FileEntry], list[StreamRow], list[FileStreamRow]]:
        tenants = [(tenant, th.as_table()) for tenant, th in pending.head.tenants.items()]
        days = {tenant: day_numbers(table) for tenant, table in tenants}
        flush = FlushInfo(
            flush_id=uuid.uuid4().hex,
            files=sum(len(d) for d in days.values()),
            wal_first_seq=pending.wal_first_seq,
            wal_seq=pending.wal_seq,
        )
        entries: list[FileEntry] = []
        streams: list[StreamRow] = []
        summaries: list[FileStreamRow] = []
        try:
            for tenant, table in tenants:

                def labels_of(stream_id: int, tenant: str = tenant) -> list[tuple[str, str]]:
                    return self._labels(tenant, stream_id)

                for day in days[tenant]:
                    rows = day_rows(table, day, len(days[tenant]))
                    entry, summarized = write_day_file(
                        self.lake, tenant, rows, labels_of, self.settings.row_group_rows, flush
                    )
                    entries.append(entry)
                    summaries += summarized
                streams += self._stream_rows(tenant, table)
        except BaseException:
            _remove_files(self.lake, entries)
            raise
        return entries, streams, summaries

    def _stream_rows(self, tenant: str, table: pa.Table) -> list[StreamRow]:
        rows = []
        for stream_id in pc.unique(table["stream_id"]).to_pylist():
            info = self._index.get(tenant, stream_id)
            if info is not None:
                rows.append(
                    StreamRow(
                        tenant,
                        stream_id,
                        info.key,
                        _encode_labels(info.labels).decode(),
                        info.first_ts,
                        info.last_ts,
                    )
                )
        return rows

    def _labels(self, tenant: str, stream_id: int) -> list[tuple[str, str]]:
        info = self._index.get(tenant, stream_id)
        return [] if info is None else list(info.labels)

    def _flush_loop(self) -> None:
        backoff = 0.0
        while not self._stopping.is_set():
            self._wake.wait(self.settings.flush_check_seconds)
            self._wake.clear()
            if self._stopping.is_set():
                return
            if not (self._flushing or self._flush_due()):
                continue
            try:
                self.flush()
                backoff = 0.0
            except Exception as exc:
                if not isinstance(exc, FlushError):
                    log.exception("flush failed; the head stays in memory and in the WAL")
                # Retried on the next round, after a growing pause while the fault lasts.
                backoff = min(max(backoff * 2, 1.0), 30.0)
                self._stopping.wait(backoff)

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
        """Files and in-memory tables holding the tenant's data in ``[start_ns, end_ns)``
        (with a shared catalog, also the other writers' unflushed rows)."""
        remote: list[RemoteHead] = []
        for _ in range(_REMOTE_ATTEMPTS):
            if self.remote is not None:
                remote = self.remote.fetch(tenant, start_ns, end_ns)
            with self._view_lock:
                files = self.catalog.files(tenant, start_ns, end_ns)
                lease = self.leases.lease(f.path for f in files)
                heads = [f.head for f in self._flushing] + [self.head]
                tables = [h.table(tenant) for h in heads]
                # Taken with the files: a swap that removes deleted rows also ends their filter.
                deletes = self.deletes(tenant, start_ns, end_ns)
            if not remote or self._still_unflushed(remote):
                break
        else:
            raise ServiceUnavailableError(
                "the writers kept flushing while the query listed the lake: try again"
            )
        streams = self.index.table(tenant)
        for head in remote:
            tables.append(head.rows if head.rows.num_rows else None)
            streams = with_streams(streams, head.streams)
        return StoreView(
            lake=self.lake,
            files=files,
            head_tables=[t for t in tables if t is not None],
            streams=streams,
            deletes=deletes,
            lease=lease,
        )

    def streams(self, tenant: str, start_ns: int, end_ns: int) -> list[StreamInfo]:
        """The tenant's streams with entries in ``[start_ns, end_ns]``: those of the stream
        index, and (with a shared catalog) those of the other writers' unflushed heads."""
        # The heads first: a stream they flush meanwhile is in the catalog read after.
        remote = (
            [] if self.remote is None else self.remote.fetch(tenant, start_ns, end_ns, rows=False)
        )
        found = {
            info.stream_id: info
            for info in self.index.streams(tenant)
            if info.first_ts < end_ns and info.last_ts >= start_ns
        }
        for head in remote:
            for info in stream_infos(head.streams):
                known = found.get(info.stream_id)
                if known is not None:  # (a copy: the index's own record stays as it is)
                    info = dataclasses.replace(
                        known,
                        first_ts=min(known.first_ts, info.first_ts),
                        last_ts=max(known.last_ts, info.last_ts),
                    )
                found[info.stream_id] = info
        return list(found.values())

    def _still_unflushed(self, remote: list[RemoteHead]) -> bool:
        """Whether no writer committed a flush since it sent its head (else its rows may
        be in a listed file as well, or in neither)."""
        marks = self.catalog.watermarks()
        return all(marks.get(head.writer, 0) == head.watermark for head in remote)

    def head_snapshot(self, tenant: str, start_ns: int, end_ns: int, *, rows: bool = True) -> bytes:
        """This writer's unflushed rows of the tenant in ``[start_ns, end_ns)``, their
        streams and its watermark, taken together (what readers fetch); without ``rows``
        only the streams."""
        with self._view_lock:
            heads = [f.head for f in self._flushing] + [self.head]
            tables = [t for t in (h.table(tenant) for h in heads) if t is not None]
            watermark = self.catalog.flushed_wal_seq()
        found = []
        for table in tables:
            in_range = pc.and_(
                pc.greater_equal(table["ts"], pa.scalar(start_ns, pa.int64())),
                pc.less(table["ts"], pa.scalar(end_ns, pa.int64())),
            )
            found.append(table.filter(in_range))
        ids = pa.chunked_array([r["stream_id"] for r in found], pa.int64()).unique()
        streams = self.index.table(tenant)
        streams = streams.filter(pc.is_in(streams["stream_id"], value_set=ids))
        return encode_head(found if rows else [], streams, watermark)

    def deletes(self, tenant: str, start_ns: int, end_ns: int) -> tuple[DeleteFilter, ...]:
        """The delete filters a view of the tenant's ``[start_ns, end_ns)`` applies."""
        if self.delete_filters is None:
            return ()
        return self.delete_filters(tenant, start_ns, end_ns)

    # compaction ----------------------------------------------------------------------

    def swap_files(
        self,
        removed: list[FileEntry],
        added: list[FileEntry],
        summaries: list[FileStreamRow],
        *,
        also: Callable[[CatalogDb], None] | None = None,
        after: Callable[[], None] | None = None,
        delay_seconds: float = 0.0,
    ) -> None:
        """List ``added`` instead of ``removed`` in one catalog transaction (which also
        runs ``also``), then ``after``, with no view taken in between; the removed files
        leave the disk once no view holds them and ``delay_seconds`` have passed. Raises
        FilesChangedError when one of them was unlisted meanwhile (nothing changes then)."""
        if self.catalog.shared:
            delay_seconds = max(delay_seconds, SHARED_REMOVE_DELAY_SECONDS)
        with self._view_lock:
            self.catalog.replace_files([f.path for f in removed], added, summaries, also=also)
            self.lake.settle(f.path for f in added)
            self.leases.retire([f.path for f in removed], delay_seconds)
            if after is not None:
                after()
        self.skip_indexer.request(entry.path for entry in added)
        faults.crash_point("compactor.swapped")

    def remove_retired(self) -> list[str]:
        """Remove the replaced files that are due and no view reads; returns them."""
        removed = []
        directories = set()
        for relative in self.leases.removable():
            faults.crash_point("compactor.removing")
            try:
                self.lake.remove(relative)
            except OSError as exc:
                log.warning("could not remove replaced lake file %s: %s", relative, exc)
                self.leases.retire([relative], 60.0)
                continue
            remove_sidecars(self.lake, [relative])
            if self.lake.local:
                directories.add((self.lake_root / relative).parent)
            removed.append(relative)
        for directory in directories:
            with contextlib.suppress(OSError):
                fsync_directory(directory)
        return removed

    def refresh_streams(self, tenant: str, stream_ids: set[int]) -> list[int]:
        """Recompute the time spans of streams whose entries were removed (from the files'
        summaries and the head); streams with no entry left are forgotten. Returns those."""
        if not stream_ids:
            return []
        spans: dict[int, tuple[int, int] | None] = dict.fromkeys(stream_ids)
        with self._view_lock:
            paths = [f.path for f in self.catalog.files(tenant, -(1 << 63), (1 << 63) - 1)]
            heads = [f.head for f in self._flushing] + [self.head]
            tables = [t for t in (h.table(tenant) for h in heads) if t is not None]
        for row in self.catalog.file_streams(paths):
            if row.stream_id in spans:
                _widen(spans, row.stream_id, row.min_ts, row.max_ts)
        for table in tables:
            wanted = table.filter(
                pc.is_in(table["stream_id"], pa.array(list(stream_ids), pa.int64()))
            )
            if wanted.num_rows:
                grouped = wanted.group_by("stream_id").aggregate([("ts", "min"), ("ts", "max")])
                for sid, low, high in zip(
                    grouped["stream_id"].to_pylist(),
                    grouped["ts_min"].to_pylist(),
                    grouped["ts_max"].to_pylist(),
                    strict=True,
                ):
                    _widen(spans, sid, low, high)
        self.catalog.set_stream_spans(tenant, spans)
        for sid, span in spans.items():
            self.index.set_span(tenant, sid, span)
        return [sid for sid, span in spans.items() if span is None]

    def quarantine_unreadable(self, files: list[FileEntry], error: str) -> list[str]:
        """Find which of ``files`` a failed read choked on, quarantine it; returns the
        paths to leave out (empty: no file is to blame).

        Files the error names are looked at first; a full decode of every page runs
        only when the cheap check finds nothing.
        """
        with self._quarantine_lock:
            named = [f for f in files if self.lake.url(f.path) in error]
            suspects = named or files
            gone = [f.path for f in suspects if not self.catalog.lists(f.path)]
            if gone:  # already quarantined by a concurrent query
                return gone
            bad = self._unusable(suspects, deep=False) or self._unusable(suspects, deep=True)
            self._quarantine(bad)
            return [path for path, _ in bad]

    def _unusable(self, files: list[FileEntry], *, deep: bool) -> list[tuple[str, str]]:
        bad = []
        for f in files:
            url = self.lake.url(f.path)
            reason = read_fully(url) if deep else check_file(url, f.file_bytes)
            if reason is not None:
                bad.append((f.path, reason))
        return bad

    def _quarantine(self, bad: list[tuple[str, str]]) -> None:
        """Move bad files aside, then unlist them (a crash in between leaves a listed
        missing file, which the next start unlists)."""
        if not bad:
            return
        for relative, reason in bad:
            remove_sidecars(self.lake, [relative])
            moved = self.lake.set_aside(relative, self.quarantine_root)
            log.error(
                "lake file %s is unusable (%s): quarantined%s and unlisted; its entries are "
                "no longer served",
                relative,
                reason,
                f" to {moved}" if moved is not None else "",
            )
        self.catalog.remove_files(relative for relative, _ in bad)
        self.quarantined_files_total += len(bad)


def with_streams(known: pa.Table, more: pa.Table) -> pa.Table:
    """``known`` plus the streams of ``more`` it lacks (another writer's new streams)."""
    if not more.num_rows:
        return known
    new = more.filter(pc.invert(pc.is_in(more["stream_id"], value_set=known["stream_id"])))
    return pa.concat_tables([known, new.cast(known.schema)]) if new.num_rows else known


def _widen(spans: dict[int, tuple[int, int] | None], stream_id: int, low: int, high: int) -> None:
    span = spans.get(stream_id)
    spans[stream_id] = (low, high) if span is None else (min(span[0], low), max(span[1], high))


def _remove_files(lake: LakeStorage, entries: list[FileEntry]) -> None:
    """Best-effort removal of a failed flush's files (the startup sweep gets the rest)."""
    for entry in entries:
        with contextlib.suppress(OSError):
            lake.remove(entry.path)


def _count_files(directory: Path) -> int:
    if not directory.is_dir():
        return 0
    return sum(1 for path in directory.rglob("*") if path.is_file())


def _prepared_record(tenant: str, streams: list[PushStream]) -> tuple[_Prepared, bytes]:
    """The rows of a push and its WAL record."""
    return _prepare(streams), _encode_record(WalRecord(tenant, streams))


def _prepare(streams: list[PushStream]) -> _Prepared:
    timestamps: list[int] = []
    stream_ids: list[int] = []
    lines: list[str] = []
    metadata: list[Labels | None] = []
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
            # Arrow reads a tuple of pairs as a map: no copy into lists (it was the
            # costliest line of a push in a profile of the ingest benchmark).
            metadata += [pairs or None for pairs in stream.metadata]
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

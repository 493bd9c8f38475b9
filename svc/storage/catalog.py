"""The catalog: which Parquet files hold a tenant's data, and which streams exist.

SQLite in WAL mode (one node), or PostgreSQL shared by several writers and readers
(``catalog.postgres.dsn``), with the same schema and transactions. The catalog is the
truth: a file it does not list is garbage, and a flush becomes visible only in the
transaction that lists its files, records its streams and advances the writer's own
flushed-WAL watermark (each writer has its own WAL, so its own watermark).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svc.errors import ServiceError
from svc.storage import faults
from svc.storage.catalog_db import CatalogDb, PostgresDb, SqliteDb

__all__ = [
    "CATALOG_FILENAME",
    "BackfillInput",
    "Catalog",
    "CatalogDb",
    "CatalogUnreadableError",
    "FileEntry",
    "FileStreamRow",
    "FilesChangedError",
    "SkipIndexRow",
    "StreamRow",
]

CATALOG_FILENAME = "catalog.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, tenant TEXT NOT NULL, day TEXT NOT NULL,
    min_ts INTEGER NOT NULL, max_ts INTEGER NOT NULL, rows INTEGER NOT NULL,
    line_bytes INTEGER NOT NULL, file_bytes INTEGER NOT NULL, streams INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS files_by_tenant_time ON files (tenant, max_ts, min_ts);
CREATE TABLE IF NOT EXISTS streams (
    tenant TEXT NOT NULL, stream_id INTEGER NOT NULL, key TEXT NOT NULL, labels TEXT NOT NULL,
    first_ts INTEGER NOT NULL, last_ts INTEGER NOT NULL, PRIMARY KEY (tenant, stream_id)
);
CREATE TABLE IF NOT EXISTS state (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS file_streams (
    path TEXT NOT NULL, stream_id INTEGER NOT NULL, rows INTEGER NOT NULL,
    line_bytes INTEGER NOT NULL, min_ts INTEGER NOT NULL, max_ts INTEGER NOT NULL,
    PRIMARY KEY (path, stream_id)
);
CREATE TABLE IF NOT EXISTS skip_indexes (
    path TEXT PRIMARY KEY, bytes INTEGER NOT NULL, checksum INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS backfill_inputs (
    key TEXT PRIMARY KEY, tenant TEXT NOT NULL, name TEXT NOT NULL, rows INTEGER NOT NULL,
    files INTEGER NOT NULL, committed_ns INTEGER NOT NULL
);
"""

_SCHEMA_LOCK = 4242001
"""PostgreSQL advisory lock key taken while schemas are created (concurrent ``CREATE ...
IF NOT EXISTS`` of one table collide)."""
_VERSION = "catalog_version"
"""A shared catalog's commit counter: a reader's cheap test for changes by others."""
_WATERMARK = "flushed_wal_seq"


class CatalogUnreadableError(ServiceError):
    """The catalog database is damaged."""


class FilesChangedError(ServiceError):
    """A file a swap was to replace is no longer listed (quarantined meanwhile)."""


@dataclass(frozen=True)
class FileEntry:
    """One Parquet file of one tenant and day (``path`` relative to the lake root)."""

    path: str
    tenant: str
    day: str
    min_ts: int
    max_ts: int
    rows: int
    line_bytes: int
    file_bytes: int
    streams: int


@dataclass(frozen=True)
class StreamRow:
    """A stream as persisted: tenant, id, canonical key, labels (JSON pairs) and time span."""

    tenant: str
    stream_id: int
    key: str
    labels: str
    first_ts: int
    last_ts: int


@dataclass(frozen=True)
class BackfillInput:
    """One input recorded in the backfill manifest: imported once, never again."""

    key: str
    """Content hash of the input with the tenant and the options that shape its rows."""
    tenant: str
    name: str
    """The input's path (``-`` for stdin) when it was imported."""
    rows: int
    files: int
    committed_ns: int


@dataclass(frozen=True)
class FileStreamRow:
    """One stream's share of one file: its rows, line bytes and time span (index stats)."""

    path: str
    stream_id: int
    rows: int
    line_bytes: int
    min_ts: int
    max_ts: int


@dataclass(frozen=True)
class SkipIndexRow:
    """The skipping index of one listed file: its sidecar's size and CRC-32 (a sidecar
    with other bytes is not trusted)."""

    path: str
    """The lake file's path (the sidecar is named after it)."""
    nbytes: int
    checksum: int


class Catalog:
    """Files and streams of every tenant, persisted in one SQLite or PostgreSQL database."""

    def __init__(self, path: Path) -> None:
        try:
            db = SqliteDb(path)
        except sqlite3.DatabaseError as exc:
            raise _unreadable(path, exc) from exc
        self._setup(db, "")
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.script(_SCHEMA)
            self._db.execute("PRAGMA quick_check").fetchall()
            self._data_version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise _unreadable(path, exc) from exc

    @classmethod
    def postgres(cls, dsn: str, writer: str) -> Catalog:
        """The shared catalog at ``dsn``; ``writer`` names this process's WAL watermark."""
        catalog = cls.__new__(cls)
        catalog._setup(PostgresDb(dsn), writer)
        with catalog._lock:
            catalog._db.begin()
            try:
                catalog._db.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
                catalog._db.script(_SCHEMA)
                catalog._db.execute(
                    "INSERT INTO state VALUES (?, 0) ON CONFLICT (name) DO NOTHING", (_VERSION,)
                )
                catalog._db.commit()
            except BaseException:
                catalog._db.rollback()
                catalog._db.close()
                raise
        catalog._data_version = catalog._version()
        return catalog

    def _setup(self, db: CatalogDb, writer: str) -> None:
        self._db = db
        self._held: set[int] = set()
        self._lock = threading.Lock()
        self._data_version = 0
        self._watermark = f"{_WATERMARK}:{writer}" if writer else _WATERMARK

    @property
    def shared(self) -> bool:
        """Whether other processes write to this catalog too."""
        return self._db.shared

    def hold_lock(self, key: int) -> bool:
        """Take (or keep) a lock that one process of a shared catalog holds at a time,
        until it exits or closes the catalog (PostgreSQL releases a dead session's locks);
        False while another process holds it. A SQLite catalog has one process: True."""
        if not self._db.shared:
            return True
        with self._lock:
            if key in self._held:
                return True
            row = self._db.execute("SELECT pg_try_advisory_lock(?)", (key,)).fetchone()
            if row is not None and bool(row[0]):
                self._held.add(key)
                return True
        return False

    def _version(self) -> int:
        row = self._db.execute("SELECT value FROM state WHERE name=?", (_VERSION,)).fetchone()
        return int(row[0]) if row else 0

    def watermarks(self) -> dict[str, int]:
        """Every writer's flushed-WAL watermark in a shared catalog, by writer name."""
        prefix = f"{_WATERMARK}:"
        rows = self.read("SELECT name, value FROM state WHERE name LIKE ?", (prefix + "%",))
        return {str(name)[len(prefix) :]: int(value) for name, value in rows}

    def flushed_wal_seq(self) -> int:
        """The newest WAL segment whose records are all in listed files."""
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM state WHERE name=?", (self._watermark,)
            ).fetchone()
        return int(row[0]) if row else 0

    @contextmanager
    def transaction(self, *, faulted: bool = True, counted: bool = True) -> Iterator[CatalogDb]:
        """One write transaction on the catalog database (also for the tables of other
        components kept here: delete requests); rolled back on error. ``faulted``: the
        ``catalog.commit`` fault applies to it; ``counted``: it changes what readers of a
        shared catalog cache (files, streams), so they look again."""
        with self._lock:
            self._db.begin()
            try:
                yield self._db
                if faulted:
                    faults.catalog_check()
                if self._db.shared and counted:
                    self._count_commit()
                self._db.commit()
            except BaseException:
                self._db.rollback()
                raise

    def _count_commit(self) -> None:
        """Advance the shared commit counter (inside the transaction). This process's own
        commits do not count as changes made elsewhere."""
        row = self._db.execute(
            "UPDATE state SET value = value + 1 WHERE name=? RETURNING value", (_VERSION,)
        ).fetchone()
        if row is not None and int(row[0]) == self._data_version + 1:
            self._data_version = int(row[0])

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read-only statement."""
        with self._lock:
            return [tuple(row) for row in self._db.execute(sql, params).fetchall()]

    def ensure_schema(self, script: str) -> None:
        """Create another component's tables (``CREATE ... IF NOT EXISTS`` statements)."""
        if not self._db.shared:
            with self._lock:
                self._db.script(script)
            return
        with self.transaction(faulted=False, counted=False) as db:
            db.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
            db.script(script)

    def replace_files(
        self,
        removed: Iterable[str],
        added: Iterable[FileEntry],
        file_streams: Iterable[FileStreamRow] = (),
        also: Callable[[CatalogDb], None] | None = None,
    ) -> None:
        """Unlist ``removed`` and list ``added`` in one transaction (a compaction's swap),
        running ``also`` inside it; raise FilesChangedError, changing nothing, when one of
        ``removed`` is no longer listed."""
        gone = [(path,) for path in removed]
        with self.transaction() as db:
            for (path,) in gone:
                # Deleting is the check: of two concurrent swaps of a file, one deletes it.
                if db.execute("DELETE FROM files WHERE path=?", (path,)).rowcount != 1:
                    raise FilesChangedError(f"lake file {path} is no longer listed")
            db.executemany("DELETE FROM file_streams WHERE path=?", gone)
            db.executemany("DELETE FROM skip_indexes WHERE path=?", gone)
            db.executemany("INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?)", _file_rows(added))
            db.executemany(_UPSERT_FILE_STREAM, _file_stream_rows(file_streams))
            if also is not None:
                also(db)
            faults.crash_point("compactor.swap")  # kill -9 with the transaction open

    def set_stream_spans(self, tenant: str, spans: dict[int, tuple[int, int] | None]) -> None:
        """Record new time spans of a tenant's streams; ``None`` forgets the stream (no
        entry of it is left anywhere)."""
        with self.transaction() as db:
            for stream_id, span in spans.items():
                if span is None:
                    db.execute(
                        "DELETE FROM streams WHERE tenant=? AND stream_id=?", (tenant, stream_id)
                    )
                else:
                    db.execute(
                        "UPDATE streams SET first_ts=?, last_ts=? WHERE tenant=? AND stream_id=?",
                        (span[0], span[1], tenant, stream_id),
                    )

    def commit_flush(
        self,
        files: Iterable[FileEntry],
        streams: Iterable[StreamRow],
        wal_seq: int,
        file_streams: Iterable[FileStreamRow] = (),
        backfills: Iterable[BackfillInput] = (),
    ) -> None:
        """List new files (with their per-stream summaries), upsert their streams and
        advance the watermark, atomically (a rebuild also restores backfill manifest
        rows)."""
        with self.transaction() as db:
            self._insert(files, streams, file_streams)
            db.executemany(
                "INSERT INTO backfill_inputs VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                [(b.key, b.tenant, b.name, b.rows, b.files, b.committed_ns) for b in backfills],
            )
            db.execute(
                "INSERT INTO state VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = "
                "CASE WHEN excluded.value > state.value THEN excluded.value ELSE state.value END",
                (self._watermark, wal_seq),
            )

    def commit_backfill(
        self,
        files: Iterable[FileEntry],
        streams: Iterable[StreamRow],
        file_streams: Iterable[FileStreamRow],
        imported: BackfillInput,
        before_commit: Callable[[], None] = lambda: None,
    ) -> bool:
        """List a backfilled input's files, upsert their streams and record the input in
        the backfill manifest, atomically; returns False (and lists nothing) when the
        manifest already holds that input.

        ``before_commit`` runs inside the transaction, after the manifest check: the
        caller moves the files into the lake there, so that no other writer commits
        between the check and the files appearing.
        """
        with self.transaction() as db:
            done = db.execute("SELECT 1 FROM backfill_inputs WHERE key=?", (imported.key,))
            if done.fetchone() is not None:
                return False
            self._insert(files, streams, file_streams)
            db.execute(
                "INSERT INTO backfill_inputs VALUES (?,?,?,?,?,?)",
                (
                    imported.key,
                    imported.tenant,
                    imported.name,
                    imported.rows,
                    imported.files,
                    imported.committed_ns,
                ),
            )
            before_commit()
        return True

    def backfilled(self, key: str) -> BackfillInput | None:
        """The manifest row of an input already backfilled, or None."""
        with self._lock:
            row = self._db.execute("SELECT * FROM backfill_inputs WHERE key=?", (key,)).fetchone()
        return None if row is None else BackfillInput(*row)

    def changed_elsewhere(self) -> bool:
        """Whether another process committed since the last call (a backfill; in a shared
        catalog, any other writer)."""
        with self._lock:
            if self._db.shared:
                version = self._version()
            else:
                version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
        changed = version != self._data_version
        self._data_version = version
        return changed

    def _insert(
        self,
        files: Iterable[FileEntry],
        streams: Iterable[StreamRow],
        file_streams: Iterable[FileStreamRow],
    ) -> None:
        """List files, upsert streams and add per-stream summaries (inside a transaction)."""
        self._db.executemany("INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?)", _file_rows(files))
        # In key order: concurrent writers upserting the same streams lock them alike.
        ordered = sorted(streams, key=lambda s: (s.tenant, s.stream_id))
        self._db.executemany(
            "INSERT INTO streams VALUES (?,?,?,?,?,?) ON CONFLICT (tenant, stream_id) DO "
            "UPDATE SET first_ts = CASE WHEN excluded.first_ts < streams.first_ts "
            "THEN excluded.first_ts ELSE streams.first_ts END, "
            "last_ts = CASE WHEN excluded.last_ts > streams.last_ts "
            "THEN excluded.last_ts ELSE streams.last_ts END",
            [(s.tenant, s.stream_id, s.key, s.labels, s.first_ts, s.last_ts) for s in ordered],
        )
        self._db.executemany(_UPSERT_FILE_STREAM, _file_stream_rows(file_streams))

    def remove_files(self, paths: Iterable[str]) -> None:
        """Unlist files and their per-stream summaries, atomically."""
        rows = [(path,) for path in paths]
        with self.transaction(faulted=False) as db:
            db.executemany("DELETE FROM files WHERE path=?", rows)
            db.executemany("DELETE FROM file_streams WHERE path=?", rows)
            db.executemany("DELETE FROM skip_indexes WHERE path=?", rows)

    def list_skip_index(self, row: SkipIndexRow) -> bool:
        """List the skipping index of a file, replacing an older listing, while the file
        is listed; False (nothing listed) when it is not."""
        with self.transaction(faulted=False, counted=False) as db:
            # One statement: a swap that unlists the file commits before or after it.
            changed = db.execute(
                "INSERT INTO skip_indexes SELECT ?, ?, ? WHERE EXISTS "
                "(SELECT 1 FROM files WHERE path=?) ON CONFLICT (path) DO UPDATE "
                "SET bytes=excluded.bytes, checksum=excluded.checksum",
                (row.path, row.nbytes, row.checksum, row.path),
            ).rowcount
        return changed == 1

    def skip_indexes(self, paths: Iterable[str]) -> dict[str, SkipIndexRow]:
        """The listed skipping indexes of the given files, by file path."""
        rows = self._where_path_in("SELECT path, bytes, checksum FROM skip_indexes", paths)
        return {row[0]: SkipIndexRow(*row) for row in rows}

    def files_without_skip_index(self) -> list[str]:
        """Paths of the listed files the catalog lists no skipping index for."""
        rows = self.read(
            "SELECT path FROM files WHERE NOT EXISTS "
            "(SELECT 1 FROM skip_indexes WHERE skip_indexes.path = files.path)"
        )
        return [str(row[0]) for row in rows]

    def _where_path_in(self, select: str, paths: Iterable[str]) -> list[Any]:
        """The rows of ``select`` whose ``path`` is one of ``paths``, asked 500 paths at a
        time (SQLite bounds the parameters of one statement)."""
        wanted = list(paths)
        found: list[Any] = []
        with self._lock:
            for offset in range(0, len(wanted), 500):
                chunk = wanted[offset : offset + 500]
                marks = ",".join("?" * len(chunk))
                found += self._db.execute(f"{select} WHERE path IN ({marks})", chunk).fetchall()
        return found

    def lists(self, path: str) -> bool:
        """Whether the file is listed."""
        with self._lock:
            row = self._db.execute("SELECT 1 FROM files WHERE path=?", (path,)).fetchone()
        return row is not None

    def is_empty(self) -> bool:
        """True when nothing was ever committed: no file listed and no watermark."""
        with self._lock:
            files = self._db.execute("SELECT 1 FROM files LIMIT 1").fetchone()
            state = self._db.execute("SELECT 1 FROM state LIMIT 1").fetchone()
        return files is None and state is None

    def files(self, tenant: str, start_ns: int, end_ns: int) -> list[FileEntry]:
        """The tenant's files with data in ``[start_ns, end_ns)``, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM files WHERE tenant=? AND max_ts>=? AND min_ts<? "
                "ORDER BY max_ts DESC",
                (tenant, _int64(start_ns), _int64(end_ns)),
            ).fetchall()
        return [FileEntry(*row) for row in rows]

    def file_streams(self, paths: Iterable[str]) -> list[FileStreamRow]:
        """The per-stream summaries of the given files (files flushed before summaries
        existed have none)."""
        return [
            FileStreamRow(*row) for row in self._where_path_in("SELECT * FROM file_streams", paths)
        ]

    def all_files(self) -> list[FileEntry]:
        """Every listed file."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM files").fetchall()
        return [FileEntry(*row) for row in rows]

    def streams(self) -> list[StreamRow]:
        """Every persisted stream of every tenant."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM streams").fetchall()
        return [StreamRow(*row) for row in rows]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


_UPSERT_FILE_STREAM = (
    "INSERT INTO file_streams VALUES (?,?,?,?,?,?) ON CONFLICT (path, stream_id) DO UPDATE "
    "SET rows=excluded.rows, line_bytes=excluded.line_bytes, min_ts=excluded.min_ts, "
    "max_ts=excluded.max_ts"
)


def _unreadable(path: Path, exc: Exception) -> CatalogUnreadableError:
    return CatalogUnreadableError(
        f"catalog {path} is unreadable ({exc}): stop svc and run `svc catalog "
        "rebuild` to list the lake's files in a new catalog (the old one is kept)"
    )


def _file_stream_rows(rows: Iterable[FileStreamRow]) -> list[tuple[Any, ...]]:
    return [(r.path, r.stream_id, r.rows, r.line_bytes, r.min_ts, r.max_ts) for r in rows]


def _file_rows(files: Iterable[FileEntry]) -> list[tuple[Any, ...]]:
    return [
        (f.path, f.tenant, f.day, f.min_ts, f.max_ts, f.rows, f.line_bytes, f.file_bytes, f.streams)
        for f in files
    ]


def _int64(value: int) -> int:
    """``value`` clamped into SQLite's integer range (timestamps are int64 nanoseconds;
    a range computed past them still means "everything from here on")."""
    return min(max(value, _INT64_MIN), _INT64_MAX)

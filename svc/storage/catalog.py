"""The catalog: which Parquet files hold a tenant's data, and which streams exist.

SQLite in WAL mode. The catalog is the truth: a file it does not list is garbage, and a
flush becomes visible only in the transaction that lists its files, records its streams
and advances the flushed-WAL watermark.
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

__all__ = [
    "CATALOG_FILENAME",
    "Catalog",
    "CatalogUnreadableError",
    "FileEntry",
    "FileStreamRow",
    "FilesChangedError",
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
"""


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
class FileStreamRow:
    """One stream's share of one file: its rows, line bytes and time span (index stats)."""

    path: str
    stream_id: int
    rows: int
    line_bytes: int
    min_ts: int
    max_ts: int


class Catalog:
    """Files and streams of every tenant, persisted in one SQLite database."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            self._db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise CatalogUnreadableError(
                f"catalog {path} is unreadable ({exc}): stop svc and run `svc catalog "
                "rebuild` to list the lake's files in a new catalog (the old one is kept)"
            ) from exc

    def flushed_wal_seq(self) -> int:
        """The newest WAL segment whose records are all in listed files."""
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM state WHERE name='flushed_wal_seq'"
            ).fetchone()
        return int(row[0]) if row else 0

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``) on the catalog database, for the
        tables of other components kept here (delete requests); rolled back on error."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                faults.catalog_check()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read-only statement."""
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def ensure_schema(self, script: str) -> None:
        """Create another component's tables (``CREATE ... IF NOT EXISTS`` statements)."""
        with self._lock:
            self._db.executescript(script)

    def replace_files(
        self,
        removed: Iterable[str],
        added: Iterable[FileEntry],
        file_streams: Iterable[FileStreamRow] = (),
        also: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """Unlist ``removed`` and list ``added`` in one transaction (a compaction's swap),
        running ``also`` inside it; raise FilesChangedError, changing nothing, when one of
        ``removed`` is no longer listed."""
        gone = [(path,) for path in removed]
        with self.transaction() as db:
            for (path,) in gone:
                if db.execute("SELECT 1 FROM files WHERE path=?", (path,)).fetchone() is None:
                    raise FilesChangedError(f"lake file {path} is no longer listed")
            db.executemany("DELETE FROM files WHERE path=?", gone)
            db.executemany("DELETE FROM file_streams WHERE path=?", gone)
            db.executemany("INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?)", _file_rows(added))
            db.executemany(
                "INSERT OR REPLACE INTO file_streams VALUES (?,?,?,?,?,?)",
                [
                    (r.path, r.stream_id, r.rows, r.line_bytes, r.min_ts, r.max_ts)
                    for r in file_streams
                ],
            )
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
    ) -> None:
        """List new files (with their per-stream summaries), upsert their streams and
        advance the watermark, atomically."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT INTO files VALUES (?,?,?,?,?,?,?,?,?)", _file_rows(files)
                )
                self._db.executemany(
                    "INSERT INTO streams VALUES (?,?,?,?,?,?) ON CONFLICT (tenant, stream_id) DO "
                    "UPDATE SET first_ts=min(first_ts, excluded.first_ts), "
                    "last_ts=max(last_ts, excluded.last_ts)",
                    [
                        (s.tenant, s.stream_id, s.key, s.labels, s.first_ts, s.last_ts)
                        for s in streams
                    ],
                )
                self._db.executemany(
                    "INSERT OR REPLACE INTO file_streams VALUES (?,?,?,?,?,?)",
                    [
                        (r.path, r.stream_id, r.rows, r.line_bytes, r.min_ts, r.max_ts)
                        for r in file_streams
                    ],
                )
                self._db.execute(
                    "INSERT INTO state VALUES ('flushed_wal_seq', ?) "
                    "ON CONFLICT (name) DO UPDATE SET value=max(value, excluded.value)",
                    (wal_seq,),
                )
                faults.catalog_check()
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def remove_files(self, paths: Iterable[str]) -> None:
        """Unlist files and their per-stream summaries, atomically."""
        rows = [(path,) for path in paths]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("DELETE FROM files WHERE path=?", rows)
                self._db.executemany("DELETE FROM file_streams WHERE path=?", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

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
        wanted = list(paths)
        found: list[FileStreamRow] = []
        with self._lock:
            for offset in range(0, len(wanted), 500):
                chunk = wanted[offset : offset + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT * FROM file_streams WHERE path IN ({marks})",
                    chunk,
                ).fetchall()
                found += [FileStreamRow(*row) for row in rows]
        return found

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


def _file_rows(files: Iterable[FileEntry]) -> list[tuple[Any, ...]]:
    return [
        (f.path, f.tenant, f.day, f.min_ts, f.max_ts, f.rows, f.line_bytes, f.file_bytes, f.streams)
        for f in files
    ]


def _int64(value: int) -> int:
    """``value`` clamped into SQLite's integer range (timestamps are int64 nanoseconds;
    a range computed past them still means "everything from here on")."""
    return min(max(value, _INT64_MIN), _INT64_MAX)

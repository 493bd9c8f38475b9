"""Delete requests, durable in the catalog database.

Tables next to the catalog's own: ``delete_requests`` (one row per request) and
``delete_shards`` (its pieces; ``processed_at`` set once the compactor removed their
entries). Every change is one transaction; creating or cancelling a request raises the
tenant's cache generation number (``svc.ops.cache_gen``) in the same one. Marking
shards processed runs inside the compactor's file swap (:meth:`mark_processed`), so the
rows leave the files and their filter ends together.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass

from svc.compactor.request_backup import RequestBackup, Snapshot
from svc.compactor.requests import NewDeleteRequest, Shard, request_id, request_status
from svc.ops.cache_gen import CacheGenerations, raise_generation
from svc.storage.catalog import Catalog, CatalogDb

__all__ = ["DeleteRequest", "DeleteRequestStore", "PendingShard"]

log = logging.getLogger(__name__)

_BACKUP_ROUNDS = 5
"""PUTs of the copy per change at most, while other nodes keep changing the requests."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS delete_requests (
    id TEXT PRIMARY KEY, tenant TEXT NOT NULL, query TEXT NOT NULL,
    created_at INTEGER NOT NULL, start_time INTEGER NOT NULL, end_time INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS delete_requests_by_tenant ON delete_requests (tenant);
CREATE TABLE IF NOT EXISTS delete_shards (
    id TEXT NOT NULL, start_time INTEGER NOT NULL, end_time INTEGER NOT NULL,
    processed_at INTEGER, PRIMARY KEY (id, start_time)
);
"""

_SELECT = (
    "SELECT r.id, r.tenant, r.query, r.created_at, min(s.start_time), max(s.end_time), "
    "count(s.processed_at), count(*), max(s.processed_at) "
    "FROM delete_requests r JOIN delete_shards s ON s.id = r.id"
)


@dataclass(frozen=True)
class DeleteRequest:
    """A request with its shards merged, as listed (DELETION.md 3)."""

    request_id: str
    tenant: str
    query: str
    created_ms: int
    start_ms: int
    end_ms: int
    processed_shards: int
    total_shards: int
    completed_ms: int | None

    @property
    def status(self) -> str:
        """``received``, ``processed`` or ``"<N>% Complete"``."""
        return request_status(self.processed_shards, self.total_shards)


@dataclass(frozen=True)
class PendingShard:
    """A shard the compactor still has to process."""

    request_id: str
    tenant: str
    query: str
    created_ms: int
    shard: Shard


class DeleteRequestStore:
    """Delete requests of every tenant (tenant-scoped lookups only)."""

    def __init__(self, catalog: Catalog, backup: RequestBackup | None = None) -> None:
        self.catalog = catalog
        self.backup = backup
        """The copy in the object store, written after every change (None: none)."""
        CacheGenerations(catalog)  # its table, raised in the same transactions
        catalog.ensure_schema(_SCHEMA)

    def restore(self) -> int:
        """Read the requests back from the copy when the catalog has none (it was rebuilt
        from the lake); returns how many were read."""
        if self.backup is None or self.catalog.read("SELECT 1 FROM delete_requests LIMIT 1"):
            return 0
        snapshot = self.backup.load()
        if not snapshot or not snapshot.get("delete_requests"):
            return 0
        requests, shards = snapshot["delete_requests"], snapshot.get("delete_shards", [])
        with self.catalog.transaction() as db:
            db.executemany("INSERT INTO delete_requests VALUES (?,?,?,?,?,?)", requests)
            db.executemany("INSERT INTO delete_shards VALUES (?,?,?,?)", shards)
            for tenant in {str(row[1]) for row in requests}:
                raise_generation(db, tenant)
        return len(requests)

    def backed_up(self) -> None:
        """Write the copy (after a change). Several nodes may change the requests at once
        and their PUTs land in any order, so a node reads the tables again after its PUT
        and writes once more if they moved meanwhile: the last PUT to land is the one
        whose node saw the tables unchanged after it, which holds every change."""
        if self.backup is None:
            return
        snapshot = self._snapshot()
        for _ in range(_BACKUP_ROUNDS):
            self.backup.save(snapshot)
            now = self._snapshot()
            if now == snapshot:
                return
            snapshot = now
        log.warning("delete requests kept changing: their copy may lag until the next change")

    def _snapshot(self) -> Snapshot:
        return {
            table: [
                list(row) for row in self.catalog.read(f"SELECT * FROM {table} ORDER BY {order}")
            ]
            for table, order in (("delete_requests", "1"), ("delete_shards", "1, 2, 3"))
        }

    def add(self, tenant: str, request: NewDeleteRequest) -> str:
        """Store a new request and its shards, raise the cache generation; returns its ID."""
        created = time.time_ns() // 1_000_000
        with self.catalog.transaction() as db:
            identifier = request_id(tenant, request.query)
            while db.execute("SELECT 1 FROM delete_requests WHERE id=?", (identifier,)).fetchone():
                identifier = request_id(tenant, request.query)
            db.execute(
                "INSERT INTO delete_requests VALUES (?,?,?,?,?,?)",
                (identifier, tenant, request.query, created, request.start_ms, request.end_ms),
            )
            db.executemany(
                "INSERT INTO delete_shards VALUES (?,?,?,NULL)",
                [(identifier, s.start_ms, s.end_ms) for s in request.shards],
            )
            raise_generation(db, tenant)
        self.backed_up()
        return identifier

    def get(self, tenant: str, identifier: str) -> DeleteRequest | None:
        """The tenant's request with this ID."""
        rows = self.catalog.read(
            f"{_SELECT} WHERE r.tenant=? AND r.id=? GROUP BY r.id", (tenant, identifier)
        )
        return _record(rows[0]) if rows else None

    def requests(
        self, tenant: str, *, overlapping: tuple[int, int] | None = None, unfinished: bool = False
    ) -> list[DeleteRequest]:
        """The tenant's requests, oldest first; ``overlapping`` keeps those whose range
        meets ``[start_ms, end_ms]``, ``unfinished`` those not fully processed."""
        rows = self.catalog.read(f"{_SELECT} WHERE r.tenant=? GROUP BY r.id", (tenant,))
        found = [_record(row) for row in rows]
        if overlapping is not None:
            low, high = overlapping
            found = [r for r in found if r.start_ms <= high and r.end_ms >= low]
        if unfinished:
            found = [r for r in found if r.processed_shards < r.total_shards]
        return sorted(found, key=lambda r: (r.created_ms, r.request_id))

    def cancel(self, tenant: str, identifier: str) -> None:
        """Remove the request and every shard of it, raise the cache generation."""
        with self.catalog.transaction() as db:
            db.execute("DELETE FROM delete_shards WHERE id=?", (identifier,))
            db.execute("DELETE FROM delete_requests WHERE id=? AND tenant=?", (identifier, tenant))
            raise_generation(db, tenant)
        self.backed_up()

    def pending(self) -> list[PendingShard]:
        """Every unprocessed shard of every tenant, by start time."""
        rows = self.catalog.read(
            "SELECT r.id, r.tenant, r.query, r.created_at, s.start_time, s.end_time "
            "FROM delete_shards s JOIN delete_requests r ON s.id = r.id "
            "WHERE s.processed_at IS NULL ORDER BY s.start_time, r.id"
        )
        return [
            PendingShard(identifier, tenant, query, created, Shard(start, end))
            for identifier, tenant, query, created, start, end in rows
        ]

    def unprocessed(self) -> dict[str, list[tuple[str, str, Shard]]]:
        """Per tenant, the ``(request id, query, shard)`` still to filter at query time."""
        found: dict[str, list[tuple[str, str, Shard]]] = defaultdict(list)
        for shard in self.pending():
            found[shard.tenant].append((shard.request_id, shard.query, shard.shard))
        return dict(found)

    @staticmethod
    def mark_processed(db: CatalogDb, shards: list[PendingShard]) -> None:
        """Set the shards processed, inside the caller's transaction (a file swap)."""
        now = time.time_ns() // 1_000_000
        db.executemany(
            "UPDATE delete_shards SET processed_at=? WHERE id=? AND start_time=?",
            [(now, s.request_id, s.shard.start_ms) for s in shards],
        )

    def mark_processed_now(self, shards: list[PendingShard]) -> None:
        """Set shards processed that need no file rewritten."""
        with self.catalog.transaction() as db:
            self.mark_processed(db, shards)
        self.backed_up()


def _record(row: tuple[object, ...]) -> DeleteRequest:
    identifier, tenant, query, created, start, end, processed, total, completed = row
    return DeleteRequest(
        request_id=str(identifier),
        tenant=str(tenant),
        query=str(query),
        created_ms=int(str(created)),
        start_ms=int(str(start)),
        end_ms=int(str(end)),
        processed_shards=int(str(processed)),
        total_shards=int(str(total)),
        completed_ms=int(str(completed)) if processed == total and completed is not None else None,
    )

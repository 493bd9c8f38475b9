"""The processes of a deployment that shares a catalog: each one registers there.

Every instance on a shared catalog (``catalog.postgres.dsn``) keeps a row of the
``members`` table up to date: its name, target, HTTP address and a heartbeat every few
seconds (``ingester.lifecycler.heartbeat_period``). Readers ask the live writers among them
for their unflushed heads; ``/services`` and the ring pages show them. A member whose
heartbeat is older than ``ingester.lifecycler.ring.heartbeat_timeout`` has left the ring (a
clean shutdown removes its row at once).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from svc.storage.catalog import Catalog

__all__ = ["STALE_SECONDS", "Member", "Members"]

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 2.0
STALE_SECONDS = 10.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS members (
    name TEXT PRIMARY KEY, target TEXT NOT NULL, address TEXT NOT NULL,
    registered_ns INTEGER NOT NULL, heartbeat_ns INTEGER NOT NULL
);
"""


@dataclass(frozen=True)
class Member:
    """One registered process."""

    name: str
    target: str
    address: str
    """Base URL of its HTTP API (``http://host:port``)."""
    registered_ns: int
    heartbeat_ns: int


class Members:
    """This process's registration in the shared catalog, and the others'."""

    def __init__(
        self,
        catalog: Catalog,
        name: str,
        target: str,
        address: str,
        *,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
        stale_seconds: float = STALE_SECONDS,
    ) -> None:
        self.catalog = catalog
        self.heartbeat_seconds = heartbeat_seconds
        self.stale_seconds = stale_seconds
        self.name = name
        self.target = target
        self.address = address
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        catalog.ensure_schema(_SCHEMA)

    def start(self) -> None:
        """Register now, then keep the heartbeat going on a thread."""
        self._stop.clear()
        self._beat(first=True)
        if self.heartbeat_seconds <= 0:  # heartbeats disabled, as the reference reads 0
            return
        self._thread = threading.Thread(target=self._loop, name="members", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the heartbeat and remove this process's row."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self.catalog.transaction(faulted=False, counted=False) as db:
            db.execute("DELETE FROM members WHERE name=?", (self.name,))

    def live(self) -> list[Member]:
        """Members whose heartbeat is recent, by name."""
        # A timeout of 0 keeps every member (the reference's "never unhealthy").
        since = time.time_ns() - int(self.stale_seconds * 1e9) if self.stale_seconds > 0 else 0
        rows = self.catalog.read(
            "SELECT name, target, address, registered_ns, heartbeat_ns FROM members "
            "WHERE heartbeat_ns >= ? ORDER BY name",
            (since,),
        )
        return [Member(*row) for row in rows]

    def _beat(self, *, first: bool = False) -> None:
        now = time.time_ns()
        with self.catalog.transaction(faulted=False, counted=False) as db:
            if first:
                db.execute(
                    "INSERT INTO members VALUES (?,?,?,?,?) ON CONFLICT (name) DO UPDATE SET "
                    "target=excluded.target, address=excluded.address, "
                    "registered_ns=excluded.registered_ns, heartbeat_ns=excluded.heartbeat_ns",
                    (self.name, self.target, self.address, now, now),
                )
            else:
                db.execute("UPDATE members SET heartbeat_ns=? WHERE name=?", (now, self.name))

    def _loop(self) -> None:
        while not self._stop.wait(self.heartbeat_seconds):
            try:
                self._beat()
            except Exception as exc:  # the catalog is away: readers see this member go stale
                log.warning("could not renew the membership heartbeat: %s", exc)

"""DuckDB databases for ad hoc SQL: one per query, locked down before the query runs.

A query gets a database of its own (DuckDB's settings are per database) with the memory
limit and threads of ``sql:``, a spill directory of its own, Python replacement scans off
(a query cannot name a Python variable of the server) and no extension loading. Before
the statement runs, the only files it may read are set to the request's catalog files
(``allowed_paths``), external access is disabled and the configuration locked: whatever
got past the static check can read no other file, URL, tenant or setting change.

Opening a database costs about 15 ms, so a few are prepared ahead on a thread of the
pool (with the engine's functions registered); a used one is closed there too.
"""

from __future__ import annotations

import shutil
import threading
import uuid
from collections import deque
from pathlib import Path

import duckdb

from svc.query.udfs import register_udfs

__all__ = ["Sandbox", "SandboxPool"]


class Sandbox:
    """One query's database, open and unlocked until :meth:`lock`."""

    def __init__(self, *, threads: int, memory_limit: int, spill_root: Path) -> None:
        self.spill_dir = spill_root / uuid.uuid4().hex
        self.connection = duckdb.connect(
            config={
                "threads": threads,
                "memory_limit": f"{memory_limit}B",
                "temp_directory": str(self.spill_dir),
                "python_enable_replacements": False,
                "autoload_known_extensions": False,
                "autoinstall_known_extensions": False,
                "allow_community_extensions": False,
            }
        )
        register_udfs(self.connection)

    def lock(self, paths: list[str]) -> None:
        """Allow reading ``paths`` only, then disable external access and lock the
        configuration (neither can be undone on this database)."""
        con = self.connection
        con.execute("SET allowed_paths = ?", [paths])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")

    def close(self) -> None:
        """Close the database and remove what it spilled."""
        self.connection.close()
        shutil.rmtree(self.spill_dir, ignore_errors=True)


class SandboxPool:
    """Prepared databases, opened and closed on a thread of their own."""

    def __init__(
        self, *, threads: int, memory_limit: int, spill_root: Path, spare: int = 2
    ) -> None:
        self.threads = threads
        self.memory_limit = memory_limit
        self.spill_root = spill_root
        self.spare = spare
        self._ready: deque[Sandbox] = deque()
        self._used: deque[Sandbox] = deque()
        self._wake = threading.Condition()
        self._stopping = False
        self._worker: threading.Thread | None = None

    def _new(self) -> Sandbox:
        return Sandbox(
            threads=self.threads, memory_limit=self.memory_limit, spill_root=self.spill_root
        )

    def take(self) -> Sandbox:
        """A prepared database (opened now when none is ready)."""
        with self._wake:
            self._start()
            found = self._ready.popleft() if self._ready else None
            self._wake.notify()
        return found if found is not None else self._new()

    def give_back(self, sandbox: Sandbox) -> None:
        """Close a used database off the caller's thread."""
        with self._wake:
            if self._stopping:
                sandbox.close()
                return
            self._used.append(sandbox)
            self._wake.notify()

    def _start(self) -> None:
        if self._worker is None and not self._stopping:
            self._worker = threading.Thread(target=self._run, name="sql-sandboxes", daemon=True)
            self._worker.start()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._stopping and not self._used and len(self._ready) >= self.spare:
                    self._wake.wait()
                if self._stopping:
                    return
                used = self._used.popleft() if self._used else None
            if used is not None:
                used.close()
                continue
            sandbox = self._new()
            with self._wake:
                if self._stopping:
                    sandbox.close()
                    return
                self._ready.append(sandbox)

    def close(self) -> None:
        """Stop preparing and close every database not in use."""
        with self._wake:
            self._stopping = True
            waiting = [*self._ready, *self._used]
            self._ready.clear()
            self._used.clear()
            self._wake.notify_all()
            worker = self._worker
        if worker is not None:
            worker.join(10)
        for sandbox in waiting:
            sandbox.close()
        shutil.rmtree(self.spill_root, ignore_errors=True)

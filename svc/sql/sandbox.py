"""DuckDB databases for ad hoc SQL: one per query, locked down before the query runs.

A query gets a database of its own (DuckDB's settings are per database), in a worker
process (:mod:`svc.sql.worker`), with the memory limit and threads of ``sql:``, a spill
directory of its own, Python replacement scans off (a query cannot name a Python variable)
and no extension loading. Before the statement runs, the only files it may read are set
to the request's catalog files (``allowed_paths``), external access is disabled and the
configuration locked: whatever got past the static check can read no other file, URL,
tenant or setting change.

A locked database serves the next query too when that query may read exactly the same
files with the same settings and the statement before changed nothing in it (DuckDB's
catalog version, which every DDL, insert, SET, ATTACH or PREPARE moves, is unchanged):
opening a database costs about 20 ms of CPU (DuckDB builds its catalog of built-in
functions), more than a small query's whole run. Such a database also keeps the Parquet
footers it read (``parquet_metadata_cache``; lake files are written once, and DuckDB
checks a cached footer against the file's modification time) and the Arrow tables
registered for the statement before when the next one reads the same (:meth:`use_tables`):
a ``count(*)`` over three files then takes 1 ms of DuckDB's time instead of 6.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa

from svc.query.udfs import register_udfs

__all__ = ["Sandbox"]


class Sandbox:
    """One query's database, open and unlocked until :meth:`lock`."""

    def __init__(self, *, threads: int, memory_limit: int, spill_root: Path) -> None:
        self.settings = (threads, memory_limit, str(spill_root))
        """What it was opened with: threads, memory limit, spill root."""
        # Named after the process: the server removes what a killed worker left.
        self.spill_dir = spill_root / f"{os.getpid()}-{uuid.uuid4().hex}"
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
        # Not settable at connect: the Parquet reader is loaded then, on first use.
        self.connection.execute("SET parquet_metadata_cache = true")
        register_udfs(self.connection)
        self.tables: dict[str, pa.Table] = {}
        """The Arrow tables registered, by name."""
        self.paths: frozenset[str] | None = None
        """The only files it may read, once locked."""

    def lock(self, paths: list[str]) -> None:
        """Allow reading ``paths`` only, then disable external access and lock the
        configuration (neither can be undone on this database)."""
        con = self.connection
        con.execute("SET allowed_paths = ?", [paths])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        self.paths = frozenset(paths)

    def use_tables(self, tables: dict[str, pa.Table]) -> None:
        """Have exactly ``tables`` registered: those already registered under the same
        name (the same objects) stay, the others are registered, the rest unregistered."""
        con = self.connection
        for name, table in list(self.tables.items()):
            if tables.get(name) is not table:
                del self.tables[name]
                con.unregister(name)
        for name, table in tables.items():
            if name not in self.tables:
                con.register(name, table)
                self.tables[name] = table

    def serves(self, settings: tuple[int, int, str], paths: list[str]) -> bool:
        """Whether it is locked to exactly ``paths`` with ``settings``."""
        return self.paths == frozenset(paths) and self.settings == settings

    def catalog_version(self) -> int | None:
        """DuckDB's count of the statements that changed the database (None where this
        DuckDB does not tell it: the database is then never reused)."""
        version = getattr(self.connection, "_catalog_version", None)
        return int(version()) if callable(version) else None

    def close(self) -> None:
        """Close the database and remove what it spilled."""
        self.connection.close()
        self.tables.clear()
        shutil.rmtree(self.spill_dir, ignore_errors=True)

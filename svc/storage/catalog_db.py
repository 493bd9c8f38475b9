"""The catalog's database connections: SQLite (one node) and PostgreSQL (shared).

Both take the catalog's SQL as written for SQLite, with ``?`` placeholders and upserts
(``ON CONFLICT``), which PostgreSQL also speaks; the PostgreSQL connection turns the
placeholders into its own and widens ``INTEGER`` columns to ``BIGINT`` in schema scripts
(SQLite's integers are 64-bit, PostgreSQL's ``INTEGER`` is not). Transactions are explicit
(``begin``/``commit``/``rollback``) on a connection in autocommit mode.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

__all__ = ["CatalogDb", "PostgresDb", "Rows", "SqliteDb"]


class Rows(Protocol):
    """The result of one statement."""

    @property
    def rowcount(self) -> int:
        """Rows a DELETE, UPDATE or INSERT changed."""

    def fetchone(self) -> Any:
        """The next row, or None."""

    def fetchall(self) -> list[Any]:
        """Every remaining row."""


class CatalogDb(Protocol):
    """One connection to the catalog's database; what the catalog's users execute on."""

    shared: bool
    """Whether other processes write to the same catalog (PostgreSQL)."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        """Run one statement."""

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        """Run one statement once per row of parameters."""

    def script(self, sql: str) -> None:
        """Run several ``;``-separated statements without parameters (schemas)."""

    def begin(self) -> None:
        """Start a write transaction."""

    def commit(self) -> None:
        """Commit the transaction."""

    def rollback(self) -> None:
        """Roll the transaction back."""

    def close(self) -> None:
        """Close the connection."""


class SqliteDb:
    """The catalog in one SQLite file, in WAL mode with full syncs."""

    shared = False

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        return self.connection.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        self.connection.executemany(sql, rows)

    def script(self, sql: str) -> None:
        self.connection.executescript(sql)

    def begin(self) -> None:
        # Takes the write lock at once: two writers never both read, then both write.
        self.connection.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.connection.execute("COMMIT")

    def rollback(self) -> None:
        self.connection.execute("ROLLBACK")

    def close(self) -> None:
        self.connection.close()


_PLACEHOLDER = re.compile(r"\?")
_INTEGER = re.compile(r"\bINTEGER\b")


class PostgresDb:
    """The catalog in a PostgreSQL database shared by every process of a deployment."""

    shared = True

    def __init__(self, dsn: str) -> None:
        import psycopg  # imported here: single-node deployments never load it

        self.connection = psycopg.connect(dsn, autocommit=True)

    @staticmethod
    def _sql(sql: str) -> str:
        # The catalog's statements hold no literal ``%`` or ``?`` of their own.
        return _PLACEHOLDER.sub("%s", sql)

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        return self.connection.execute(self._sql(sql), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        with self.connection.cursor() as cursor:
            cursor.executemany(self._sql(sql), [tuple(r) for r in rows])

    def script(self, sql: str) -> None:
        self.connection.execute(_INTEGER.sub("BIGINT", sql))

    def begin(self) -> None:
        self.connection.execute("BEGIN")

    def commit(self) -> None:
        self.connection.execute("COMMIT")

    def rollback(self) -> None:
        self.connection.execute("ROLLBACK")

    def close(self) -> None:
        self.connection.close()

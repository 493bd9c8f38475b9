"""Per-tenant cache generation numbers: raising one invalidates cached query results.

Numbers are decimal strings of nanosecond times that only grow, kept in the catalog
database (``cache_generations``) so that a change of the data (a delete request created or
cancelled, entries physically removed) raises it in the same transaction.
"""

from __future__ import annotations

import time

from svc.storage.catalog import Catalog, CatalogDb

__all__ = ["CacheGenerations", "raise_generation"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache_generations (tenant TEXT PRIMARY KEY, generation TEXT NOT NULL);
"""


def raise_generation(db: CatalogDb, tenant: str) -> str:
    """Set the tenant's number to the current nanosecond time (always upwards), inside
    the caller's transaction; returns it."""
    row = db.execute(
        "SELECT generation FROM cache_generations WHERE tenant=?", (tenant,)
    ).fetchone()
    previous = int(row[0]) if row and str(row[0]).isdigit() else 0
    number = str(max(time.time_ns(), previous + 1))
    db.execute(
        "INSERT INTO cache_generations VALUES (?, ?) "
        "ON CONFLICT (tenant) DO UPDATE SET generation=excluded.generation",
        (tenant, number),
    )
    return number


class CacheGenerations:
    """Cache generation number of every tenant."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        catalog.ensure_schema(_SCHEMA)

    def get(self, tenant: str) -> str:
        """The tenant's generation number; empty until it is first raised."""
        rows = self.catalog.read(
            "SELECT generation FROM cache_generations WHERE tenant=?", (tenant,)
        )
        return str(rows[0][0]) if rows else ""

    def increase(self, tenant: str) -> str:
        """Raise the tenant's generation number; returns the new number."""
        with self.catalog.transaction() as db:
            return raise_generation(db, tenant)

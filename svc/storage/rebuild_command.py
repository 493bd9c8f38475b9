"""``svc catalog rebuild``: replace a data directory's catalog by one rebuilt from the lake.

The service must be stopped (the command takes the data directory's lock). The old
catalog, if any, is kept next to the new one as ``catalog.sqlite.replaced-<time>``. The
tables other components keep there (delete requests, cache generation numbers) are copied
over when the old catalog still reads: the lake cannot tell them.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from svc.storage.catalog import CATALOG_FILENAME, Catalog
from svc.storage.files import DataDirectoryLock, fsync_directory
from svc.storage.objects import LocalLake
from svc.storage.rebuild import rebuild_catalog
from svc.storage.skip_index import sweep_sidecars
from svc.storage.skip_indexer import build_missing
from svc.storage.wal import WriteAheadLog

__all__ = ["rebuild_data_directory"]


def rebuild_data_directory(root: Path) -> str:
    """Rebuild ``root``'s catalog from its lake; returns a summary for the operator."""
    lock = DataDirectoryLock(root)
    lock.acquire()
    try:
        catalog_path = root / CATALOG_FILENAME
        kept = _set_aside(catalog_path)
        wal = WriteAheadLog(root / "wal", segment_max_bytes=1)
        catalog = Catalog(catalog_path)
        try:
            report = rebuild_catalog(
                catalog, root / "lake", root / "quarantine", {seq for seq, _ in wal.segments()}
            )
            carried = _carry_over(kept, catalog) if kept is not None else []
            listed = catalog.all_files()
            sweep_sidecars(root / "lake", [f.path for f in listed])
            built, kept_indexes = build_missing(LocalLake(root / "lake"), catalog, listed)
        finally:
            catalog.close()
    finally:
        lock.release()
    lines = [
        f"catalog rebuilt: {catalog_path}",
        f"files listed: {len(report.listed)}",
        f"streams: {report.streams}",
        f"flushed WAL segment (watermark): {report.watermark}",
        f"skipping indexes built: {built} (sidecars found and listed: {kept_indexes})",
    ]
    if report.unlisted:
        lines.append(
            f"files left unlisted (their entries replay from the WAL; the next start "
            f"removes them): {len(report.unlisted)}"
        )
    if report.quarantined:
        lines.append(f"unreadable files quarantined: {len(report.quarantined)}")
    if kept is not None:
        lines.append(f"previous catalog kept as: {kept}")
        lines.append(f"tables copied from it: {', '.join(carried) or 'none'}")
    return "\n".join(lines)


def _set_aside(catalog_path: Path) -> Path | None:
    """Rename the catalog and its SQLite side files out of the way; returns the new name."""
    if not catalog_path.exists():
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = catalog_path.with_name(f"{catalog_path.name}.replaced-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        source = catalog_path.with_name(catalog_path.name + suffix)
        if source.exists():
            os.replace(source, kept.with_name(kept.name + suffix))
    fsync_directory(catalog_path.parent)
    return kept


_LAKE_TABLES = frozenset({"files", "streams", "state", "file_streams", "skip_indexes"})


def _carry_over(old: Path, catalog: Catalog) -> list[str]:
    """Copy the old catalog's tables other than the lake's (delete requests, cache
    generation numbers) into the new one; returns their names (none when it is unreadable)."""
    sides = [old.with_name(old.name + suffix) for suffix in ("-wal", "-shm")]
    present = [side.exists() for side in sides]
    try:
        return _copy_tables(old, catalog)
    finally:  # reading a WAL-mode database leaves side files; keep the old one as it was
        for side, existed in zip(sides, present, strict=True):
            if not existed:
                side.unlink(missing_ok=True)


def _copy_tables(old: Path, catalog: Catalog) -> list[str]:
    try:
        source = sqlite3.connect(f"file:{old}?mode=ro", uri=True)
        try:
            tables = source.execute(
                "SELECT name, sql FROM sqlite_master WHERE type='table' ORDER BY name"
            ).fetchall()
            copied = []
            for name, sql in tables:
                if name in _LAKE_TABLES or name.startswith("sqlite_"):
                    continue
                rows = source.execute(f'SELECT * FROM "{name}"').fetchall()
                with catalog.transaction() as db:
                    db.execute(sql.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
                    if rows:
                        marks = ",".join("?" * len(rows[0]))
                        db.executemany(f'INSERT OR REPLACE INTO "{name}" VALUES ({marks})', rows)
                copied.append(name)
        finally:
            source.close()
    except sqlite3.DatabaseError:
        return []
    return copied

"""Whether a source of rows holds any structured metadata at all.

Most streams carry none, and a query then need not read the ``metadata`` column (a map,
the dearest column to scan after ``line``): a source without any reads as NULL instead.
A Parquet file's footer tells it (its map's key column is null in every row); lake files
never change once written, so the answer is kept per path.
"""

from __future__ import annotations

from functools import lru_cache

import pyarrow as pa

from svc.query.tenants import MultiView
from svc.storage.lake_urls import parquet_file
from svc.storage.store import StoreView

__all__ = ["NO_METADATA", "file_has_metadata", "table_has_metadata", "view_has_metadata"]

NO_METADATA = "CAST(NULL AS MAP(VARCHAR, VARCHAR)) AS metadata"
"""The ``metadata`` column of a source that has none."""

_KEY_COLUMN = "metadata.key_value.key"


@lru_cache(maxsize=65536)
def file_has_metadata(path: str) -> bool:
    """Whether any row of the Parquet file at ``path`` has structured metadata (True when
    its footer cannot tell)."""
    try:
        footer = parquet_file(path).metadata
    except (OSError, pa.ArrowInvalid):
        return True
    for group in range(footer.num_row_groups):
        row_group = footer.row_group(group)
        for index in range(row_group.num_columns):
            column = row_group.column(index)
            if column.path_in_schema != _KEY_COLUMN:
                continue
            stats = column.statistics
            if stats is None or not stats.has_null_count or stats.null_count != column.num_values:
                return True
    return False


def table_has_metadata(table: pa.Table) -> bool:
    """Whether any row of an in-memory table has structured metadata."""
    column = table["metadata"]
    if column.null_count == len(column):
        return False
    # A map's offsets count its entries: null and empty maps add none.
    return any(
        len(chunk) and chunk.offsets[-1].as_py() > chunk.offsets[0].as_py()
        for chunk in column.chunks
    )


def view_has_metadata(view: StoreView | MultiView) -> bool:
    """Whether any file or in-memory table of a query's view has structured metadata."""
    views = [part for part, _ in view.parts] if isinstance(view, MultiView) else [view]
    return any(file_has_metadata(path) for v in views for path in v.paths) or any(
        table_has_metadata(table) for table in view.head_tables
    )

"""Arrow / Parquet schema of stored log rows: one row per entry.

Files live under ``<path_prefix>/lake/tenant=<t>/day=<YYYY-MM-DD>/<id>.parquet`` and are
readable by any Parquet engine. The tenant is a partition directory, never a column.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["HEAD_SCHEMA", "LABEL_MAP", "LOG_ROW_SCHEMA"]

LABEL_MAP = pa.map_(pa.string(), pa.string())

LOG_ROW_SCHEMA = pa.schema(
    [
        pa.field("ts", pa.int64(), nullable=False, metadata={"doc": "entry time, Unix ns"}),
        pa.field("stream_id", pa.int64(), nullable=False, metadata={"doc": "hash of the labels"}),
        pa.field("labels", LABEL_MAP, metadata={"doc": "stream labels"}),
        pa.field("line", pa.string(), nullable=False, metadata={"doc": "the log line"}),
        pa.field("metadata", LABEL_MAP, metadata={"doc": "structured metadata, null if none"}),
    ]
)
"""Rows as stored in Parquet files."""

HEAD_SCHEMA = pa.schema([LOG_ROW_SCHEMA.field(n) for n in ("ts", "stream_id", "line", "metadata")])
"""Rows as held in the in-memory head (labels come from the stream index)."""

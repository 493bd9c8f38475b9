"""The ``logs`` and ``streams`` views of an SQL query, over the engine's own relations.

The engine binds ``logs`` (``ts`` in ns, ``stream_id``, ``line``, ``metadata``) to the
request's catalog files and in-memory head, and ``streams`` to the stream index, exactly
as for LogQL (``QueryEngine.bound_sql``: deletions and any later filtering apply alike).
On top of them a query sees:

- ``logs``: ``ts`` (TIMESTAMP_NS), ``ts_ns``, ``stream_id``, ``labels``, ``line``,
  ``metadata`` and, when several tenants are queried, ``tenant``; only the entries in the
  request's range.
- ``streams``: ``stream_id``, ``labels``, ``first_ts``, ``last_ts`` (TIMESTAMP_NS) and
  ``tenant`` likewise, for the streams with entries in the range.

The stream labels come from a table of the streams joined on ``stream_id``, left out when
the query reads neither ``labels`` nor ``tenant`` (a ``count(*)`` then reads no column).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from svc.query.engine import AnyView
from svc.query.tenants import MultiView, tenant_mask

__all__ = [
    "LABELS_TABLE",
    "LOGS_VIEW",
    "STREAMS_VIEW",
    "stream_table",
    "view_definitions",
    "within",
]

LABELS_TABLE = "__svc_labels"
LOGS_VIEW = "__svc_logs"
STREAMS_VIEW = "__svc_streams"

_STREAM_COLUMNS = ["stream_id", "labels", "first_ts", "last_ts"]


def stream_table(view: AnyView, tenants: tuple[str, ...]) -> pa.Table:
    """Every stream of the view with its own labels, first and last entry time, and the
    tenant it belongs to when the view has several (ids as the engine masks them)."""
    if not isinstance(view, MultiView):
        # The index's own table when it has just these columns: the same object from
        # query to query while no stream is added, which a worker keeps (svc.sql.workers).
        if view.streams.column_names == _STREAM_COLUMNS:
            return view.streams
        return view.streams.select(_STREAM_COLUMNS)
    by_mask = {tenant_mask(tenant): tenant for tenant in tenants}
    parts = []
    for part, mask in view.parts:
        table = part.streams.select(_STREAM_COLUMNS)
        ids = pc.bit_wise_xor(table["stream_id"], pa.scalar(mask, pa.int64()))
        table = table.set_column(0, "stream_id", ids)
        tenant = pa.array([by_mask[mask]] * table.num_rows, pa.string())
        parts.append(table.append_column("tenant", tenant))
    return pa.concat_tables(parts)


def within(view: AnyView, start_ns: int, end_ns: int) -> bool:
    """Whether every entry of the view's files and head tables lies in ``[start_ns, end_ns)``."""
    if any(f.min_ts < start_ns or f.max_ts >= end_ns for f in view.files):
        return False
    for table in view.head_tables:
        if table.num_rows:
            bounds = pc.min_max(table["ts"])
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            if low < start_ns or high >= end_ns:
                return False
    return True


def view_definitions(
    table_name: str,
    *,
    start_ns: int,
    end_ns: int,
    labels: bool,
    multi: bool,
    bounded: bool = True,
    read: frozenset[str] = frozenset({LOGS_VIEW, STREAMS_VIEW}),
    keys: frozenset[str] | None = None,
) -> list[str]:
    """The common table expressions of the views, reading the stream table registered as
    ``table_name``; ``labels`` False leaves ``logs`` without ``labels`` and ``tenant``;
    ``bounded`` False leaves out the range filter of ``logs``, for sources known to lie
    inside the range (a ``count(*)`` then reads only Parquet footers). Only the views
    ``read`` names (``LOGS_VIEW``, ``STREAMS_VIEW``, ``LABELS_TABLE``) are defined, with
    what they read: DuckDB parses each definition, read or not. ``keys``: the only label
    keys the query reads, each as ``labels['key']`` (``svc.sql.rewrite.label_keys``); the
    views' ``labels`` are then a STRUCT of just those, which the join to every entry
    carries much more cheaply than the whole map (names as :func:`label_keys` admits them,
    which are safe in a literal)."""
    tenant = ", s.tenant" if multi else ""
    if labels:
        columns = f"l.stream_id, s.labels, l.line, l.metadata{tenant}"
        join = f" LEFT JOIN {LABELS_TABLE} AS s ON l.stream_id = s.stream_id"
    else:
        columns, join = "l.stream_id, l.line, l.metadata", ""
    logs = f"SELECT make_timestamp_ns(l.ts) AS ts, l.ts AS ts_ns, {columns} FROM logs AS l{join}"
    if bounded:
        logs += f" WHERE l.ts >= {int(start_ns)} AND l.ts < {int(end_ns)}"
    streams = (
        "SELECT stream_id, labels, make_timestamp_ns(first_ts) AS first_ts, "
        f"make_timestamp_ns(last_ts) AS last_ts{', tenant' if multi else ''} "
        f"FROM {LABELS_TABLE} WHERE first_ts < {int(end_ns)} AND last_ts >= {int(start_ns)}"
    )
    stream_rows = f"SELECT * FROM {table_name}"
    # DuckDB tells STRUCT fields apart regardless of case, a MAP's keys by case.
    if keys and len({key.lower() for key in keys}) == len(keys):
        fields = ", ".join(f"'{key}': labels['{key}']" for key in sorted(keys))
        stream_rows = f"SELECT * REPLACE ({{{fields}}} AS labels) FROM {table_name}"
    definitions = {
        LABELS_TABLE: f"{LABELS_TABLE} AS NOT MATERIALIZED ({stream_rows})",
        LOGS_VIEW: f"{LOGS_VIEW} AS NOT MATERIALIZED ({logs})",
        STREAMS_VIEW: f"{STREAMS_VIEW} AS NOT MATERIALIZED ({streams})",
    }
    wanted = set(read)
    if STREAMS_VIEW in wanted or (LOGS_VIEW in wanted and labels):
        wanted.add(LABELS_TABLE)
    return [text for name, text in definitions.items() if name in wanted]

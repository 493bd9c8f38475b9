"""Query results as a Parquet file, for clients that send ``Accept: <parquet media type>``.

Streams: one row per entry, ``timestamp`` (ns, UTC), ``labels`` (map), ``line``.
Metrics: one row per sample, ``timestamp`` (ms, UTC), ``labels`` (map), ``value``
(double). Rows keep the order of the JSON result. Timestamps are UTC-adjusted, so
engines read them as TIMESTAMP WITH TIME ZONE.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
from litestar import Request, Response

from svc.query.streams import ResultStream

if TYPE_CHECKING:
    from svc.query.metric_queries import MetricResult

__all__ = [
    "METRIC_SCHEMA",
    "PARQUET_MEDIA_TYPES",
    "STREAM_SCHEMA",
    "metric_result_parquet",
    "metrics_parquet",
    "parquet_media_type",
    "parquet_response",
    "streams_parquet",
]

PARQUET_MEDIA_TYPES = ("application/vnd.columnar.parquet", "application/vnd.apache.parquet")
"""Accepted media types; the first is the canonical one."""

_LABELS = pa.map_(pa.string(), pa.string())

STREAM_SCHEMA = pa.schema(
    [
        pa.field("timestamp", pa.timestamp("ns", tz="UTC"), nullable=False),
        pa.field("labels", _LABELS),
        pa.field("line", pa.string(), nullable=False),
    ]
)
"""Rows of a ``streams`` result."""

METRIC_SCHEMA = pa.schema(
    [
        pa.field("timestamp", pa.timestamp("ms", tz="UTC"), nullable=False),
        pa.field("labels", _LABELS),
        pa.field("value", pa.float64(), nullable=False),
    ]
)
"""Rows of a ``vector`` or ``matrix`` result."""

LabelPairs = Sequence[tuple[str, str]]


def parquet_media_type(request: Request[Any, Any, Any]) -> str | None:
    """The Parquet media type the client accepts, or None when it wants JSON."""
    accept = request.headers.get("accept", "")
    for part in accept.split(","):
        media_type = part.split(";", 1)[0].strip().lower()
        if media_type in PARQUET_MEDIA_TYPES:
            return media_type
    return None


def _write(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def _rows_parquet(
    groups: Iterable[tuple[LabelPairs, Iterable[tuple[int, Any]]]], schema: pa.Schema
) -> bytes:
    """One row per (timestamp, value) of each group, carrying the group's labels."""
    timestamps: list[int] = []
    labels: list[list[tuple[str, str]]] = []
    values: list[Any] = []
    for group_labels, rows in groups:
        pairs = list(group_labels)
        for ts, value in rows:
            timestamps.append(ts)
            labels.append(pairs)
            values.append(value)
    table = pa.table(
        [
            pa.array(timestamps, pa.int64()).cast(schema.field("timestamp").type),
            pa.array(labels, _LABELS),
            pa.array(values, schema.field(2).type),
        ],
        schema=schema,
    )
    return _write(table)


def streams_parquet(streams: Iterable[ResultStream]) -> bytes:
    """A ``streams`` result as Parquet bytes."""
    return _rows_parquet(((s.labels, s.values) for s in streams), STREAM_SCHEMA)


def metrics_parquet(series: Iterable[tuple[LabelPairs, Iterable[tuple[int, float]]]]) -> bytes:
    """A ``vector`` or ``matrix`` result as Parquet bytes.

    ``series`` yields each series' labels with its samples as (Unix ms, value) pairs; a
    vector is a series list with one sample each.
    """
    return _rows_parquet(series, METRIC_SCHEMA)


def metric_result_parquet(result: MetricResult) -> bytes:
    """A metric query's samples (vector, matrix or scalar) as Parquet bytes."""
    grid = result.grid

    def ms(k: int) -> int:
        return (grid.start_ns + k * grid.step_ns) // 1_000_000

    if result.scalar:
        points = result.series[0].points[-1:] if result.series else []
        return metrics_parquet([((), [(ms(k), v) for k, v in points])])
    return metrics_parquet((s.labels, [(ms(k), v) for k, v in s.points]) for s in result.series)


def parquet_response(body: bytes, media_type: str = PARQUET_MEDIA_TYPES[0]) -> Response[bytes]:
    """A 200 answer carrying Parquet bytes."""
    return Response(body, status_code=200, media_type=media_type)

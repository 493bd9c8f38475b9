"""Stream index: per tenant, every stream's labels and the time span it has data in."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import pyarrow as pa

from schemas.log_rows import LABEL_MAP
from svc.model import Labels, label_key

__all__ = ["StreamIndex", "StreamInfo", "stream_id_of", "streams_table"]


def stream_id_of(key: str) -> int:
    """Stable signed 64-bit id of a canonical label string."""
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


@dataclass
class StreamInfo:
    """One stream: its labels, canonical key and the range of its entries' timestamps."""

    stream_id: int
    key: str
    labels: Labels
    first_ts: int
    last_ts: int


def streams_table(infos: Iterable[StreamInfo]) -> pa.Table:
    """Arrow table (stream_id, labels, first_ts, last_ts) of some streams."""
    infos = list(infos)
    return pa.table(
        {
            "stream_id": pa.array([i.stream_id for i in infos], pa.int64()),
            "labels": pa.array([list(i.labels) for i in infos], LABEL_MAP),
            "first_ts": pa.array([i.first_ts for i in infos], pa.int64()),
            "last_ts": pa.array([i.last_ts for i in infos], pa.int64()),
        }
    )


def stream_infos(table: pa.Table) -> list[StreamInfo]:
    """The streams of a table as :func:`streams_table` makes it."""
    infos = []
    for sid, pairs, first, last in zip(
        table["stream_id"].to_pylist(),
        table["labels"].to_pylist(),
        table["first_ts"].to_pylist(),
        table["last_ts"].to_pylist(),
        strict=True,
    ):
        labels = tuple((str(k), str(v)) for k, v in pairs)
        infos.append(StreamInfo(sid, label_key(labels), labels, first, last))
    return infos


class StreamIndex:
    """Thread-safe map tenant -> stream id -> StreamInfo, with an Arrow view for queries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tenants: dict[str, dict[int, StreamInfo]] = {}
        self._tables: dict[str, pa.Table] = {}
        self._ids_by_key: dict[str, int] = {}

    def observe(self, tenant: str, key: str, labels: Labels, first_ts: int, last_ts: int) -> int:
        """Record entries of a stream between two timestamps; returns the stream id."""
        stream_id = self._ids_by_key.get(key)
        if stream_id is None:
            stream_id = stream_id_of(key)
            self._ids_by_key[key] = stream_id
        with self._lock:
            streams = self._tenants.setdefault(tenant, {})
            info = streams.get(stream_id)
            if info is None:
                streams[stream_id] = StreamInfo(stream_id, key, labels, first_ts, last_ts)
                self._tables.pop(tenant, None)
            else:
                info.first_ts = min(info.first_ts, first_ts)
                info.last_ts = max(info.last_ts, last_ts)
        return stream_id

    def set_span(self, tenant: str, stream_id: int, span: tuple[int, int] | None) -> None:
        """Replace a stream's time span after entries were removed; None forgets it."""
        with self._lock:
            streams = self._tenants.get(tenant, {})
            info = streams.get(stream_id)
            if info is None:
                return
            if span is None:
                del streams[stream_id]
                self._ids_by_key.pop(info.key, None)
            else:
                info.first_ts, info.last_ts = span
            self._tables.pop(tenant, None)

    def get(self, tenant: str, stream_id: int) -> StreamInfo | None:
        """The stream with this id, if the tenant has it."""
        return self._tenants.get(tenant, {}).get(stream_id)

    def streams(self, tenant: str) -> list[StreamInfo]:
        """Every stream of the tenant."""
        with self._lock:
            return list(self._tenants.get(tenant, {}).values())

    def tenants(self) -> list[str]:
        """Tenants that have any stream."""
        with self._lock:
            return list(self._tenants)

    def table(self, tenant: str) -> pa.Table:
        """Arrow table (stream_id, labels, first_ts, last_ts) of the tenant's streams."""
        with self._lock:
            cached = self._tables.get(tenant)
            if cached is not None:
                return cached
            table = streams_table(self._tenants.get(tenant, {}).values())
            self._tables[tenant] = table
            return table

"""Queries over several tenants at once (``X-Scope-OrgID: a|b``, SPEC 5.6).

Each tenant's data keeps its partition; the query sees their union with every stream
labelled ``__tenant_id__`` (a stream that already has that label keeps it as
``original___tenant_id__``), so selectors can match on it and aggregations can span
tenants. Stream ids are made distinct per tenant by XOR with a per-tenant mask, applied
to both the rows and the stream table.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import pyarrow as pa

from schemas.log_rows import LABEL_MAP
from svc.storage.catalog import FileEntry
from svc.storage.store import ReadShare, Store, StoreView

__all__ = ["TENANT_LABEL", "MultiView", "tenant_mask", "tenants_view"]

TENANT_LABEL = "__tenant_id__"
RENAMED_TENANT_LABEL = "original_" + TENANT_LABEL


def tenant_mask(tenant: str) -> int:
    """The signed 64-bit mask a tenant's stream ids are XORed with."""
    return int.from_bytes(
        hashlib.blake2b(tenant.encode(), digest_size=8, person=b"svc-tenant").digest(),
        "little",
        signed=True,
    )


@dataclass
class MultiView:
    """Several tenants' views, each with its id mask, and their labelled stream table."""

    parts: list[tuple[StoreView, int]]
    streams: pa.Table
    labels_by_id: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    @property
    def files(self) -> list[FileEntry]:
        """Every tenant's files."""
        return [f for view, _ in self.parts for f in view.files]

    @property
    def head_tables(self) -> list[pa.Table]:
        """Every tenant's in-memory tables."""
        return [t for view, _ in self.parts for t in view.head_tables]

    def share(self, entry: FileEntry) -> ReadShare:
        """What the view reads of one of its files."""
        for view, _ in self.parts:
            if entry.path in view.shares:
                return view.shares[entry.path]
        return ReadShare.whole(entry)


def _labelled(tenant: str, labels: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    renamed = [
        (RENAMED_TENANT_LABEL if name == TENANT_LABEL else name, value) for name, value in labels
    ]
    return tuple(sorted([*renamed, (TENANT_LABEL, tenant)]))


def tenants_view(store: Store, tenants: tuple[str, ...], start_ns: int, end_ns: int) -> MultiView:
    """The union of the tenants' data in ``[start_ns, end_ns)``."""
    parts = []
    ids: list[int] = []
    labels: list[tuple[tuple[str, str], ...]] = []
    for tenant in tenants:
        view = store.view(tenant, start_ns, end_ns)
        mask = tenant_mask(tenant)
        parts.append((view, mask))
        columns = view.streams.select(["stream_id", "labels"]).to_pydict()
        for stream_id, stream_labels in zip(columns["stream_id"], columns["labels"], strict=True):
            ids.append(stream_id ^ mask)
            labels.append(_labelled(tenant, stream_labels))
    streams = pa.table(
        {
            "stream_id": pa.array(ids, pa.int64()),
            "labels": pa.array([list(pairs) for pairs in labels], LABEL_MAP),
        }
    )
    return MultiView(parts, streams, dict(zip(ids, labels, strict=True)))

"""Whether a view can hold one entry twice (:mod:`svc.storage.repeats`).

It cannot when every file it reads says that no two of its own entries share stream,
timestamp and line, no stream's entries in one file overlap in time with that stream's
entries in another (each file's ``svc.file`` metadata gives each stream's first and last
timestamp), and no in-memory rows fall in the queried range (the head keeps what is
pushed, copies included). A log query over such a view needs no DISTINCT. Lake files
never change once written, so what a file says is kept per path.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from functools import lru_cache

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from svc.query.tenants import MultiView
from svc.storage.lake import FILE_METADATA_KEY, decode_file_metadata
from svc.storage.lake_urls import read_metadata
from svc.storage.store import StoreView

__all__ = ["file_stream_spans", "view_entries_unique"]

Spans = tuple[tuple[int, int, int], ...]
"""Per stream of a file: id, first and last timestamp."""


@lru_cache(maxsize=65536)
def file_stream_spans(path: str) -> Spans | None:
    """Each stream's time span in the file at ``path``; None when the file may hold one
    entry twice (or does not say)."""
    try:
        raw = (read_metadata(path).metadata or {}).get(FILE_METADATA_KEY)
        metadata = decode_file_metadata(raw) if raw is not None else None
    except (OSError, pa.ArrowInvalid, msgspec.DecodeError):
        return None
    if metadata is None or not metadata.unique:
        return None
    return tuple((sid, first, last) for sid, _, _, first, last in metadata.streams)


def view_entries_unique(view: StoreView | MultiView, start_ns: int, end_ns: int) -> bool:
    """Whether no two entries the view holds in ``[start_ns, end_ns)`` can be equal."""
    parts = [part for part, _ in view.parts] if isinstance(view, MultiView) else [view]
    return all(_part_unique(part, start_ns, end_ns) for part in parts)


def _part_unique(view: StoreView, start_ns: int, end_ns: int) -> bool:
    if any(_rows_in(table, start_ns, end_ns) for table in view.head_tables):
        return False
    spans: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)
    for path in view.paths:
        found = file_stream_spans(path)
        if found is None:
            return False
        for stream_id, first, last in found:
            spans[stream_id].append((first, last))
    for stream_spans in spans.values():
        if len(stream_spans) > 1:
            stream_spans.sort()
            if any(b[0] <= a[1] for a, b in itertools.pairwise(stream_spans)):
                return False
    return True


def _rows_in(table: pa.Table, start_ns: int, end_ns: int) -> bool:
    if not table.num_rows:
        return False
    bounds = pc.min_max(table["ts"])
    return bool(bounds["min"].as_py() < end_ns and bounds["max"].as_py() >= start_ns)

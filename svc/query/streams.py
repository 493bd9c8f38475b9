"""Log query rows -> result streams, labelled, grouped and ordered as the reference does.

A result stream's labels are the stream labels plus the entry's structured metadata (a
metadata key equal to a stream label becomes ``<key>_extracted``), so one stored stream
can come back as several result streams (LOGQL.md 5.1, 5.8, 8).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from svc.model import Labels, label_key

__all__ = ["ResultStream", "categorized", "group_streams", "merge_metadata"]


@dataclass
class ResultStream:
    """One stream of a log query result (``categories``: per entry, with categorized labels)."""

    labels: Labels
    values: list[tuple[int, str]] = field(default_factory=list)
    categories: list[dict[str, dict[str, str]]] | None = None

    @property
    def key(self) -> str:
        """The label string the reference sorts streams by."""
        return label_key(self.labels)


def merge_metadata(stream_labels: Labels, metadata: list[tuple[str, str]] | None) -> Labels:
    """Stream labels plus metadata, clashing metadata keys renamed ``<key>_extracted``."""
    if not metadata:
        return stream_labels
    names = {name for name, _ in stream_labels}
    merged = dict(stream_labels)
    for name, value in metadata:
        merged[f"{name}_extracted" if name in names else name] = value
    return tuple(sorted(merged.items()))


def group_streams(
    rows: pa.Table,
    labels_of: Callable[[int], Labels],
    *,
    backward: bool,
    categorize: bool = False,
) -> list[ResultStream]:
    """Group ordered rows into result streams; streams sorted by their label string.

    Rows carry either ``metadata`` (merged into the stream's labels) or ``labels``, the
    final label map the pipeline computed.
    """
    groups: dict[Labels, ResultStream] = {}
    final = "labels" in rows.column_names
    data = rows.to_pydict()
    finals = data["labels"] if final else [None] * rows.num_rows
    for ts, stream_id, line, metadata, labelled in zip(
        data["ts"], data["stream_id"], data["line"], data["metadata"], finals, strict=True
    ):
        stream_labels = labels_of(stream_id)
        labels = (
            tuple(sorted(labelled))
            if labelled is not None
            else merge_metadata(stream_labels, metadata)
        )
        if categorize:
            real, category = categorized(stream_labels, metadata, labels)
            stream = groups.get(real)
            if stream is None:
                stream = groups[real] = ResultStream(real, categories=[])
            assert stream.categories is not None
            stream.categories.append(category)
        else:
            stream = groups.get(labels)
            if stream is None:
                stream = groups[labels] = ResultStream(labels)
        stream.values.append((ts, line))
    for stream in groups.values():
        if stream.categories is not None:
            paired = sorted(
                zip(stream.values, stream.categories, strict=True),
                key=lambda item: item[0][0],
                reverse=backward,
            )
            stream.values = [value for value, _ in paired]
            stream.categories = [category for _, category in paired]
        else:
            stream.values.sort(key=lambda value: value[0], reverse=backward)
    return sorted(groups.values(), key=lambda s: s.key.encode())


def categorized(
    stream_labels: Labels, metadata: list[tuple[str, str]] | None, final: Labels
) -> tuple[Labels, dict[str, dict[str, str]]]:
    """Split an entry's final labels into real stream labels, structured metadata and
    parsed labels (the ``categorize-labels`` encoding; empty parts are left out)."""
    labels = dict(final)
    real = tuple((k, v) for k, v in stream_labels if labels.get(k) == v)
    names = {k for k, _ in stream_labels}
    structured: dict[str, str] = {}
    for key, value in metadata or ():
        name = f"{key}_extracted" if key in names else key
        if labels.get(name) == value:
            structured[name] = value
    taken = {k for k, _ in real} | set(structured)
    parsed = {k: v for k, v in labels.items() if k not in taken}
    category: dict[str, dict[str, str]] = {}
    if structured:
        category["structuredMetadata"] = structured
    if parsed:
        category["parsed"] = parsed
    return real, category

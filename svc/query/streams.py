"""Log query rows -> result streams, labelled, grouped and ordered as the reference does.

A result stream's labels are the stream labels plus the entry's structured metadata (a
metadata key equal to a stream label becomes ``<key>_extracted``), so one stored stream
can come back as several result streams (LOGQL.md 5.1, 5.8, 8).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa

from svc.ingest.labels import label_key

__all__ = ["ResultStream", "group_streams", "merge_metadata"]

Labels = tuple[tuple[str, str], ...]


@dataclass
class ResultStream:
    """One stream of a log query result."""

    labels: Labels
    values: list[tuple[int, str]] = field(default_factory=list)

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
    rows: pa.Table, labels_of: Callable[[int], Labels], *, backward: bool
) -> list[ResultStream]:
    """Group ordered rows into result streams; streams sorted by their label string.

    Rows carry either ``metadata`` (merged into the stream's labels) or ``labels``, the
    final label map the pipeline computed.
    """
    groups: dict[Labels, ResultStream] = {}
    final = "labels" in rows.column_names
    columns = rows.select(["ts", "stream_id", "line", "labels" if final else "metadata"])
    data = columns.to_pydict()
    extra = data["labels" if final else "metadata"]
    for ts, stream_id, line, more in zip(
        data["ts"], data["stream_id"], data["line"], extra, strict=True
    ):
        labels = tuple(sorted(more)) if final else merge_metadata(labels_of(stream_id), more)
        stream = groups.get(labels)
        if stream is None:
            stream = groups[labels] = ResultStream(labels)
        stream.values.append((ts, line))
    for stream in groups.values():
        stream.values.sort(key=lambda value: value[0], reverse=backward)
    return sorted(groups.values(), key=lambda s: s.key.encode())

"""What the reference's distributor adds to pushed streams: ``service_name`` and ``detected_level``.

* ``service_name``: a stream without one gets the value of the first label of
  ``limits_config.discover_service_name`` it carries with a non-empty value, else
  ``unknown_service``; an empty list turns this off. Internal streams (aggregated metrics,
  patterns) are left alone. This happens before validation, so messages about the stream
  name it with its ``service_name``, as the reference's do.
* ``detected_level``: with ``limits_config.discover_log_levels`` (and structured metadata
  allowed), every entry of a validated stream gets a ``detected_level`` structured metadata
  pair as :class:`~svc.levels.LevelDetector` finds it; a ``detected_level`` the entry
  already carries is normalised in place instead.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from svc.levels import LEVEL_LABEL, LevelDetector, normalize_level
from svc.model import Labels, PushStream, label_key

if TYPE_CHECKING:
    from collections.abc import Sequence

    from svc.ingest.model import PushLimits

__all__ = [
    "SERVICE_NAME",
    "UNKNOWN_SERVICE",
    "add_levels",
    "service_name_key",
    "with_service_name",
]

SERVICE_NAME = "service_name"
UNKNOWN_SERVICE = "unknown_service"
_INTERNAL = frozenset({"__aggregated_metric__", "__pattern__"})


def with_service_name(labels: Labels, names: Sequence[str]) -> Labels:
    """``labels`` (sorted pairs) with a discovered ``service_name`` added when it has none."""
    if not names:
        return labels
    present = dict(labels)
    if SERVICE_NAME in present or not _INTERNAL.isdisjoint(present):
        return labels
    value = next((present[name] for name in names if present.get(name)), UNKNOWN_SERVICE)
    return tuple(sorted((*labels, (SERVICE_NAME, value))))


def service_name_key(raw: str, key: str, labels: Labels) -> tuple[str, str]:
    """The (raw, canonical) label strings of ``labels`` after discovery.

    ``raw`` is the label text as sent and ``key`` the canonical string before discovery:
    when discovery added nothing they are kept, otherwise both become the new canonical
    string, as the reference rewrites a stream's labels to their canonical form.
    """
    new_key = label_key(labels)
    if new_key == key:
        return raw, key
    return new_key, new_key


@lru_cache(maxsize=16)
def _detector(fields: tuple[str, ...], depth: int) -> LevelDetector:
    return LevelDetector(fields, depth)


def add_levels(stream: PushStream, limits: PushLimits) -> PushStream:
    """``stream`` with each entry's ``detected_level`` in its structured metadata."""
    if not (limits.discover_log_levels and limits.allow_structured_metadata):
        return stream
    detector = _detector(limits.log_level_fields, limits.log_level_from_json_max_depth)
    labels_level = detector.from_labels(stream.labels)
    old = stream.metadata
    metadata: list[Labels]
    if old is None:
        if labels_level is not None:
            pair: Labels = ((LEVEL_LABEL, labels_level),)
            metadata = [pair] * len(stream.lines)
        else:
            # One metadata tuple per level, shared by the entries that have it.
            shared: dict[str, Labels] = {}
            metadata = [
                shared.get(level) or shared.setdefault(level, ((LEVEL_LABEL, level),))
                for level in map(detector.from_line, stream.lines)
            ]
    else:
        metadata = [
            _entry_metadata(detector, pairs, line, labels_level)
            for pairs, line in zip(old, stream.lines, strict=True)
        ]
    return PushStream(stream.labels, stream.key, stream.timestamps, stream.lines, metadata)


def _entry_metadata(
    detector: LevelDetector, pairs: Labels, line: str, labels_level: str | None
) -> Labels:
    for index, (name, value) in enumerate(pairs):
        if name == LEVEL_LABEL:
            normal = normalize_level(value)
            if normal == value:
                return pairs
            return (*pairs[:index], (LEVEL_LABEL, normal), *pairs[index + 1 :])
    level = detector.detect(pairs, line, labels_level)
    return pairs if level is None else (*pairs, (LEVEL_LABEL, level))

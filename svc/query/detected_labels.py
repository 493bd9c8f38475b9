"""``detected_labels``: the stream labels worth offering as filters, with their cardinality.

As the reference's querier chooses them: a label is left out when it has no value, or
when every value is an ID (a number or a UUID), except that a label whose values are all
``0`` and ``1`` (at most two) counts as a boolean and stays, and the static labels
``cluster``, ``namespace``, ``instance`` and ``pod`` stay whatever their values. The
cardinality is the exact number of distinct values (the reference's HyperLogLog sketch is
exact at the sizes where Grafana shows the number).

>>> detected_labels([(("app", "web"), ("id", "17")), (("app", "api"), ("id", "18"))])
[('app', 2)]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from gocompat.strconv import parse_float
from svc.model import Labels

__all__ = ["STATIC_LABELS", "detected_labels", "is_id"]

STATIC_LABELS = frozenset({"cluster", "namespace", "instance", "pod"})
_BOOLEANS = frozenset({"0", "1"})
_DASHED = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_BARE = re.compile(r"[0-9a-fA-F]{32}")


def is_id(value: str) -> bool:
    """Whether ``value`` reads as a number (Go's ``ParseFloat``) or a UUID (``uuid.Parse``)."""
    return parse_float(value) is not None or _is_uuid(value)


def _is_uuid(value: str) -> bool:
    # Go's uuid.Parse: dashed, the same inside any two wrapping characters, with a
    # case-insensitive ``urn:uuid:`` prefix, or 32 bare hex digits.
    size = len(value.encode())
    if size == 36:
        return _DASHED.fullmatch(value) is not None
    if size == 38:
        return _DASHED.fullmatch(value[1:-1]) is not None
    if size == 45:
        return value[:9].lower() == "urn:uuid:" and _DASHED.fullmatch(value[9:]) is not None
    return size == 32 and _BARE.fullmatch(value) is not None


def _rejected(values: set[str]) -> bool:
    if not values:
        return True
    if len(values) <= 2 and values <= _BOOLEANS:
        return False
    return all(map(is_id, values))


def detected_labels(label_sets: Iterable[Labels]) -> list[tuple[str, int]]:
    """``(label, cardinality)`` of the labels worth filtering on, sorted by name."""
    values: dict[str, set[str]] = {}
    for labels in label_sets:
        for name, value in labels:
            values.setdefault(name, set()).add(value)
    return [
        (name, len(found))
        for name, found in sorted(values.items())
        if (name in STATIC_LABELS and found) or not _rejected(found)
    ]

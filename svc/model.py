"""Types every layer of the service shares: a label set, and one decoded push stream.

Ingest produces :class:`PushStream`, storage writes it and queries read label sets back,
so they live below all three.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec

from gocompat.fmt import go_quote

__all__ = ["Labels", "PushStream", "label_key"]

Labels: TypeAlias = tuple[tuple[str, str], ...]
"""A label set: (name, value) pairs sorted by name."""


def label_key(labels: Labels) -> str:
    """The canonical label string of sorted ``labels``: ``{a="b", c="d"}``."""
    return "{" + ", ".join(f"{name}={go_quote(value)}" for name, value in labels) + "}"


class PushStream(msgspec.Struct, frozen=True):
    """One decoded, validated stream of a push request.

    The three per-entry lists are parallel: entry ``i`` is ``timestamps[i]``,
    ``lines[i]`` and, when ``metadata`` is not None, ``metadata[i]``. Two streams of
    one request may share a ``key``: decoders do not merge them.
    """

    labels: Labels
    """Label pairs sorted by name; labels with an empty value are dropped."""
    key: str
    """Canonical label string, ``{a="b", c="d"}``: names sorted, values Go-quoted."""
    timestamps: list[int]
    """Unix nanoseconds, one per entry."""
    lines: list[str]
    """Log lines, one per entry."""
    metadata: list[Labels] | None
    """Structured metadata pairs per entry (empty values dropped), or None when no
    entry of this stream has any."""

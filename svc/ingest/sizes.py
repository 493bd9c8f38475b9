"""Sizes of entries as the reference counts them: UTF-8 bytes of the line plus the names and
values of the structured metadata, ``detected_level`` excepted (``pkg/util/entry_size.go``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["entry_size", "stream_sizes", "text_bytes"]

_EXCLUDED_METADATA = "detected_level"

Pairs = tuple[tuple[str, str], ...]


def text_bytes(text: str) -> int:
    """UTF-8 length of ``text``."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _metadata_bytes(pairs: Iterable[tuple[str, str]]) -> int:
    return sum(
        text_bytes(name) + text_bytes(value) for name, value in pairs if name != _EXCLUDED_METADATA
    )


def entry_size(line: str, pairs: Pairs | None) -> int:
    """Size of one entry."""
    return text_bytes(line) + (_metadata_bytes(pairs) if pairs else 0)


def stream_sizes(lines: Sequence[str], metadata: Sequence[Pairs] | None) -> list[int]:
    """Size of each entry of a stream."""
    if metadata is None:
        return list(map(text_bytes, lines))
    return [entry_size(line, pairs) for line, pairs in zip(lines, metadata, strict=True)]

"""The order in which a limited log query reads its files, in pieces it can stop between.

Files are read newest first (oldest first going forward), small ones together in groups of
about ``group_rows`` rows. A file in the compacted layout (rows sorted by time bucket, so
each row group covers a short time range) is read in time windows instead, starting at its
end of the query's direction: a predicate on ``ts`` lets DuckDB skip the other row groups,
so "the last 100 lines" of a day's compacted file reads its last hour or so, as it would
read the newest small flushed file. The windows grow geometrically, so a query that has to
read the whole file (a rare needle) runs a few more statements, never more rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from svc.storage.catalog import FileEntry
from svc.storage.lake import time_bucketed

__all__ = ["WINDOW_ROWS", "Piece", "next_group", "pieces"]

WINDOW_ROWS = 262_144
"""Estimated rows of a compacted file's first window (two row groups of the writer)."""


@dataclass(frozen=True)
class Piece:
    """A file, or the rows of one file within ``window`` (inclusive bounds)."""

    entry: FileEntry
    window: tuple[int, int] | None = None
    first: bool = True
    """The file's first piece (its scan is counted once)."""

    @property
    def min_ts(self) -> int:
        """The oldest entry the piece can hold."""
        return self.window[0] if self.window else self.entry.min_ts

    @property
    def max_ts(self) -> int:
        """The newest entry the piece can hold."""
        return self.window[1] if self.window else self.entry.max_ts

    @property
    def rows(self) -> int:
        """Its rows, estimated for a window (entries spread evenly over the file's span)."""
        if self.window is None:
            return self.entry.rows
        span = self.entry.max_ts - self.entry.min_ts + 1
        return self.entry.rows * (self.window[1] - self.window[0] + 1) // span


def pieces(files: list[FileEntry], backward: bool, window_rows: int = WINDOW_ROWS) -> list[Piece]:
    """``files`` in reading order: newest first when ``backward``, compacted files larger
    than a window split into windows."""
    ordered = sorted(files, key=(lambda f: -f.max_ts) if backward else (lambda f: f.min_ts))
    found: list[Piece] = []
    for entry in ordered:
        if entry.rows <= 2 * window_rows or not time_bucketed(entry.path):
            found.append(Piece(entry))
            continue
        span = entry.max_ts - entry.min_ts + 1
        width = max(1, span * window_rows // entry.rows)
        done = 0
        while done < span:
            width = min(width, span - done)
            if backward:
                window = (entry.max_ts - done - width + 1, entry.max_ts - done)
            else:
                window = (entry.min_ts + done, entry.min_ts + done + width - 1)
            found.append(Piece(entry, window, first=not done))
            done += width
            width *= 2
    return found


def next_group(remaining: list[Piece], group_rows: int) -> tuple[list[Piece], list[Piece]]:
    """The next pieces to scan in one statement, and the rest: a window alone, else whole
    files up to about ``group_rows`` rows (at least one, if any)."""
    if remaining and remaining[0].window is not None:
        return remaining[:1], remaining[1:]
    rows = 0
    for index, piece in enumerate(remaining):
        if piece.window is not None:
            return remaining[:index], remaining[index:]
        rows += piece.rows
        if rows >= group_rows:
            return remaining[: index + 1], remaining[index + 1 :]
    return remaining, []

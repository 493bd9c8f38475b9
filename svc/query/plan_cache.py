"""Plans compiled once per query shape and reused with each request's own time range.

Dashboards repeat the same queries over a moving range. A plan is compiled with stand-in
numbers where the range goes (the start and end of a log query, the grid start of a
metric query, which the compiler keeps as one literal); each run puts its own values
into the rendered text. A query that itself contains a stand-in is never cached.
"""

from __future__ import annotations

START = 9_111_111_111_111_111_111
END = 9_122_222_222_222_222_222


def mentions_stand_in(query: object) -> bool:
    """Whether the stand-ins occur in ``query`` (its ``repr``), so text replacement could
    change the query's own numbers."""
    text = repr(query)
    return str(START) in text or str(END) in text


def with_range(text: str, start_ns: int, end_ns: int | None = None) -> str:
    """``text`` of a plan compiled with the stand-ins, for the given range."""
    text = text.replace(str(START), str(start_ns))
    return text if end_ns is None else text.replace(str(END), str(end_ns))

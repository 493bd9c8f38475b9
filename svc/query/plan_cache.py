"""Plans compiled once per query shape and reused with each request's own time range.

Dashboards repeat the same queries over a moving range. A plan is compiled with stand-in
numbers where the range goes (the start and end of a log query, the grid start of a
metric query, which the compiler keeps as one literal); each run puts its own values
into the rendered text. A query that itself contains a stand-in is never cached.

Why text and not prepared-statement parameters (measured for #14): the stand-ins can
instead become sqlglot placeholders rendered as ``$start``/``$end`` and passed to
``cursor.execute(sql, parameters)``. DuckDB then binds the values as constants (the
Parquet scan still prunes row groups by time), so execution is the same, but a run costs
a little more, growing with the statement's size (a separate prepare step, it seems).
Over the eleven shapes of ``benchmarks.query`` on a small store, 201 alternating runs
each, the median paired difference was 0 to +0.6 ms per statement against the text, +5 ms
over the eleven medians (324 ms against 319 ms), and no shape was reliably faster; on
the 300 MB corpus the difference is lost in the noise. Replacing two numbers in a string
costs microseconds.
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

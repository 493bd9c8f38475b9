"""The labels every stream of a query's view has.

A parser's key named like a label every stream has can only land in ``<key>_extracted``
(LOGQL.md 5.1); when that name is not needed either, the compiled pipeline skips the key
(``compile_metric_query``'s ``common``). Grouping by a stream label after a parser (``by
(env)`` after ``| logfmt``) is the usual case: it then costs no lookup per line.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["common_labels"]


def common_labels(streams: pa.Table) -> frozenset[str]:
    """Names present in the ``labels`` map of every row of ``streams`` (none without rows)."""
    rows = streams.num_rows
    if rows == 0:
        return frozenset()
    maps = streams["labels"].combine_chunks()
    # A stream's label names are distinct (a label set), so a name on every stream occurs
    # once per row. The maps as lists of their entries: list kernels do not take maps.
    names = pc.list_flatten(pa.ListArray.from_arrays(maps.offsets, maps.values)).field("key")
    counts = pc.value_counts(names)
    every = pc.equal(counts.field("counts"), rows)
    return frozenset(str(name) for name in counts.field("values").filter(every).to_pylist())

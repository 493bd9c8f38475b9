"""Narrows a query's view to the row groups that may hold its needles.

The literals of the query's line filters (``needles.py``) are looked up in each file's
skipping index (``svc/storage/skip_index.py``): a file none of whose row groups may match
is left out of the view, a file some of whose row groups may match is read through
``file_row_number`` ranges (DuckDB then skips the other row groups unread), a file without
an index is read whole and its index asked for. Never a false negative: a row group is
left out only when every selector of the query has a line filter none of whose
alternatives the row group can hold.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from logql_to_sql import ast
from svc.query.needles import Condition, query_conditions
from svc.query.tenants import MultiView
from svc.storage.objects import LocalLake
from svc.storage.skip_index import Needle, SkipIndex, load, needle
from svc.storage.skip_indexer import SkipIndexer
from svc.storage.store import StoreView

__all__ = ["narrowed_to_needles"]

_Alternative = tuple[Needle, ...]
_Clause = tuple[_Alternative, ...]
_Lookups = tuple[tuple[_Clause, ...], ...]
"""Per selector, its clauses as needles; a selector with no clause is absent."""


def narrowed_to_needles(
    view: StoreView | MultiView, expr: ast.Expr, indexer: SkipIndexer
) -> StoreView | MultiView:
    """``view`` without the files and row groups that cannot hold a line of ``expr``."""
    lookups = _lookups(expr)
    if lookups is None:
        return view
    if isinstance(view, MultiView):
        parts = [(_narrowed(part, lookups, indexer), mask) for part, mask in view.parts]
        return dataclasses.replace(view, parts=parts)
    return _narrowed(view, lookups, indexer)


@lru_cache(maxsize=1024)
def _lookups(expr: ast.Expr) -> _Lookups | None:
    """The needles of ``expr``'s conditions, without those the index cannot answer;
    None when some selector keeps no clause."""
    conditions = query_conditions(expr)
    if conditions is None:
        return None
    found = []
    for condition in conditions:
        clauses = _clauses(condition)
        if not clauses:
            return None
        found.append(clauses)
    return tuple(found)


def _clauses(condition: Condition) -> tuple[_Clause, ...]:
    clauses = []
    for clause in condition:
        alternatives = []
        for alternative in clause:
            needles = tuple(n for n in map(needle, alternative) if n.answerable)
            if not needles:
                break  # this alternative may hold anywhere: so may the clause
            alternatives.append(needles)
        else:
            clauses.append(tuple(alternatives))
    return tuple(clauses)


def _narrowed(view: StoreView, lookups: _Lookups, indexer: SkipIndexer) -> StoreView:
    if not isinstance(view.lake, LocalLake):
        return view  # a lake in object storage has no sidecars: it is scanned
    files = []
    ranges = dict(view.row_ranges)
    missing = []
    for entry in view.files:
        index = load(view.lake.root / entry.path, entry.rows)
        if index is None:
            missing.append(entry.path)
            files.append(entry)
            continue
        kept = [group for group in range(len(index.rows)) if _may_hold(index, group, lookups)]
        if not kept:
            continue
        files.append(entry)
        if len(kept) < len(index.rows):
            ranges[entry.path] = _row_ranges(index.rows, kept)
    indexer.request(missing)
    return dataclasses.replace(view, files=files, row_ranges=ranges)


def _may_hold(index: SkipIndex, group: int, lookups: _Lookups) -> bool:
    return any(
        all(
            any(all(index.may_hold(group, n) for n in alternative) for alternative in clause)
            for clause in clauses
        )
        for clauses in lookups
    )


def _row_ranges(rows: tuple[int, ...], kept: list[int]) -> tuple[tuple[int, int], ...]:
    """(first row, rows) of the kept row groups, neighbours merged."""
    starts = [0]
    for count in rows:
        starts.append(starts[-1] + count)
    merged: list[tuple[int, int]] = []
    for group in kept:
        first, count = starts[group], rows[group]
        if merged and merged[-1][0] + merged[-1][1] == first:
            merged[-1] = (merged[-1][0], merged[-1][1] + count)
        else:
            merged.append((first, count))
    return tuple(merged)

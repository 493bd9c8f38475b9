"""Narrows a query's view to the row groups that may hold its needles.

What the index answers (the needles of ``needles.py``), for log, metric and export
queries, over stream-filtered and unfiltered selectors alike:

* line filters ``|= "x"`` whose literal has a whole token or a 5-byte run of token bytes;
* the case-sensitive literals of ``|~`` regexes, read from the regex syntax;
* ``or`` of those (``|= "a" or "b"``), and several filters in a row;
* structured metadata: ``| name="value"`` (exact, non-empty value; ``and``/``or``/``,`` of
  such), when no stream of the view has a label ``name`` (its value would answer instead).

They count only at the head of the pipeline, before any parser, formatter or label filter
that may fail. Everything else is scanned: ``!=``, ``!~``, ``|>``, case-insensitive regexes,
needles shorter than 5 bytes without a whole token, ``name!=``, ``name=~``, ``name=""``.

The needles are looked up in each file's skipping index as the catalog lists it
(``svc/storage/skip_index.py``; a local lake or a bucket): a file none of whose row groups
may match is left out of the view, a file some of whose row groups may match is read
through ``file_row_number`` ranges (DuckDB then skips the other row groups unread, and the
query's statistics count only those row groups), a file without a listed index, or whose
sidecar is not the one listed, is read whole and an index is asked for. Never a false
negative: a row group is left out only when every selector of the query has a clause none
of whose alternatives the row group can hold.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import pyarrow.compute as pc

from logql_to_sql import ast
from svc.query.needles import Condition, MetadataValue, query_conditions
from svc.query.tenants import MultiView
from svc.storage.skip_index import Needle, SkipIndex, needle, pair_needle
from svc.storage.skip_indexer import SkipIndexer, listed_indexes
from svc.storage.store import ReadShare, StoreView

__all__ = ["narrowed_to_needles"]

_Alternative = tuple[Needle, ...]
_Clause = tuple[_Alternative, ...]
_Lookups = tuple[tuple[_Clause, ...], ...]
"""Per selector, its clauses as needles; a selector with no clause is absent."""


def narrowed_to_needles(
    view: StoreView | MultiView, exprs: tuple[ast.Expr, ...], indexer: SkipIndexer
) -> StoreView | MultiView:
    """``view`` without the files and row groups that cannot hold an entry of any of
    ``exprs`` (the queries that read the view)."""
    if not exprs or any(query_conditions(expr) is None for expr in exprs):
        return view
    if isinstance(view, MultiView):
        parts = [(_narrowed(part, exprs, indexer), mask) for part, mask in view.parts]
        return dataclasses.replace(view, parts=parts)
    return _narrowed(view, exprs, indexer)


def _metadata_names(exprs: tuple[ast.Expr, ...]) -> frozenset[str]:
    return frozenset(
        item.name
        for expr in exprs
        for condition in query_conditions(expr) or ()
        for clause in condition
        for alternative in clause
        for item in alternative
        if isinstance(item, MetadataValue)
    )


def _stream_label_names(view: StoreView) -> frozenset[str]:
    labels = view.streams["labels"]
    if not len(labels):
        return frozenset()
    return frozenset(pc.unique(labels.combine_chunks().keys).to_pylist())


@lru_cache(maxsize=1024)
def _lookups(exprs: tuple[ast.Expr, ...], shadowed: frozenset[str]) -> _Lookups | None:
    """The needles of the conditions of ``exprs``, without those the index cannot answer
    (and metadata values of the ``shadowed`` names, which stream labels answer); None when
    some selector keeps no clause."""
    found = []
    for expr in exprs:
        conditions = query_conditions(expr)
        if conditions is None:
            return None
        for condition in conditions:
            clauses = _clauses(condition, shadowed)
            if not clauses:
                return None
            found.append(clauses)
    return tuple(found)


def _needle(item: str | MetadataValue, shadowed: frozenset[str]) -> Needle:
    if isinstance(item, str):
        return needle(item)
    if item.name in shadowed:
        return Needle((), ())
    return pair_needle(item.name, item.value)


def _clauses(condition: Condition, shadowed: frozenset[str]) -> tuple[_Clause, ...]:
    clauses = []
    for clause in condition:
        alternatives = []
        for alternative in clause:
            needles = tuple(
                n for n in (_needle(item, shadowed) for item in alternative) if n.answerable
            )
            if not needles:
                break  # this alternative may hold anywhere: so may the clause
            alternatives.append(needles)
        else:
            clauses.append(tuple(alternatives))
    return tuple(clauses)


def _narrowed(view: StoreView, exprs: tuple[ast.Expr, ...], indexer: SkipIndexer) -> StoreView:
    names = _metadata_names(exprs)
    shadowed = names & _stream_label_names(view) if names else frozenset()
    lookups = _lookups(exprs, shadowed)
    if lookups is None or not view.files:
        return view
    indexes, missing = listed_indexes(view.lake, indexer.catalog, view.files)
    files = []
    ranges = dict(view.row_ranges)
    shares = dict(view.shares)
    for entry in view.files:
        index = indexes.get(entry.path)
        if index is None:
            files.append(entry)
            continue
        kept = [group for group in range(len(index.rows)) if _may_hold(index, group, lookups)]
        if not kept:
            continue
        files.append(entry)
        if len(kept) < len(index.rows):
            ranges[entry.path] = _row_ranges(index.rows, kept)
            shares[entry.path] = ReadShare(
                rows=sum(index.groups[g].rows for g in kept),
                line_bytes=sum(index.groups[g].line_bytes for g in kept),
                file_bytes=sum(index.groups[g].file_bytes for g in kept),
            )
    indexer.request(missing)
    return dataclasses.replace(view, files=files, row_ranges=ranges, shares=shares)


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

"""A view's files cut into groups of about equal bytes, one statement each (#23).

A distributed engine runs a metric query's partial aggregates once per group, each group
on a worker of its own, and merges them (``metric_queries``): the groups come from the
view's own catalog listing, so every file is read by exactly one group.

A view of several tenants is cut the same way, over all its tenants' files at once: each
group is again a view of every tenant (most with few or no files), so each tenant's
files keep their stream id mask and delete filters, and every group sees the same
labelled stream table (``__tenant_id__``) as the whole.
"""

from __future__ import annotations

import dataclasses

from svc.query.tenants import MultiView
from svc.storage.catalog import FileEntry
from svc.storage.store import StoreView

__all__ = ["file_groups", "with_files", "without_sources"]


def file_groups(view: StoreView | MultiView, groups: int) -> list[StoreView | MultiView] | None:
    """``view`` as at most ``groups`` views, each with some of its files (balanced by the
    bytes each reads, largest first onto the lightest group) and the in-memory tables with
    the lightest; None when there is nothing to split (fewer than two sources)."""
    if groups < 2:
        return None
    tenants = view.parts if isinstance(view, MultiView) else [(view, 0)]
    files = [
        (number, index, entry)
        for number, (part, _) in enumerate(tenants)
        for index, entry in enumerate(part.files)
    ]
    heads = any(part.head_tables for part, _ in tenants)
    sources = len(files) + (1 if heads else 0)
    if sources < 2:
        return None
    loads = [0] * min(groups, sources)
    members: list[list[tuple[int, int, FileEntry]]] = [[] for _ in loads]
    # Ties broken by path: the same listing always gives the same groups.
    for number, index, entry in sorted(
        files, key=lambda f: (-view.share(f[2]).file_bytes, f[2].path)
    ):
        lightest = min(range(len(loads)), key=lambda g: (loads[g], g))
        members[lightest].append((number, index, entry))
        loads[lightest] += max(view.share(entry).file_bytes, 1)
    heads_with = min(range(len(loads)), key=lambda g: (loads[g], g))
    groups_found: list[StoreView | MultiView] = []
    for group, chosen in enumerate(members):
        with_heads = heads and group == heads_with
        if not chosen and not with_heads:
            continue
        parts = [
            dataclasses.replace(
                part,
                files=[entry for owner, _, entry in sorted(chosen) if owner == number],
                head_tables=part.head_tables if with_heads else [],
            )
            for number, (part, _) in enumerate(tenants)
        ]
        if isinstance(view, MultiView):
            masked = [(part, mask) for part, (_, mask) in zip(parts, view.parts, strict=True)]
            groups_found.append(dataclasses.replace(view, parts=masked))
        else:
            groups_found.append(parts[0])
    return groups_found if len(groups_found) > 1 else None


def without_sources(view: StoreView | MultiView) -> StoreView:
    """A view of no file and no in-memory table with ``view``'s streams: what a statement
    reading only merged partial aggregates (and ``streams``) is bound to."""
    if isinstance(view, MultiView):
        lake = view.parts[0][0].lake
        return StoreView(lake, [], [], view.streams)
    return dataclasses.replace(view, files=[], head_tables=[], row_ranges={}, shares={})


def with_files(
    view: StoreView | MultiView,
    files: list[FileEntry],
    *,
    heads: bool,
    window: tuple[int, int] | None = None,
) -> StoreView | MultiView:
    """``view`` reading only ``files`` (some of its own; of a view of several tenants, each
    tenant's part gets its own), its in-memory tables only with ``heads``, and the files'
    entries only within ``window`` (``StoreView.window``)."""
    if not isinstance(view, MultiView):
        tables = view.head_tables if heads else []
        return dataclasses.replace(view, files=files, head_tables=tables, window=window)
    owner = {
        entry.path: number for number, (part, _) in enumerate(view.parts) for entry in part.files
    }
    parts = [
        (
            dataclasses.replace(
                part,
                files=[entry for entry in files if owner[entry.path] == number],
                head_tables=part.head_tables if heads else [],
                window=window,
            ),
            mask,
        )
        for number, (part, mask) in enumerate(view.parts)
    ]
    return dataclasses.replace(view, parts=parts)

"""A view's files cut into groups of about equal bytes, one statement each (#23).

A distributed engine runs a metric query's partial aggregates once per group, each group
on a worker of its own, and merges them (``metric_queries``): the groups come from the
view's own catalog listing, so every file is read by exactly one group.
"""

from __future__ import annotations

import dataclasses

from svc.query.tenants import MultiView
from svc.storage.store import StoreView

__all__ = ["file_groups"]


def file_groups(view: StoreView | MultiView, groups: int) -> list[StoreView] | None:
    """``view`` as at most ``groups`` views, each with some of its files (balanced by the
    bytes each reads, largest first onto the lightest group) and the in-memory tables with
    the lightest; None when there is nothing to split (fewer than two sources).

    A view of several tenants is not split: its parts carry per-tenant stream masks and
    delete filters that the union is built with.
    """
    if isinstance(view, MultiView) or groups < 2:
        return None
    sources = len(view.files) + (1 if view.head_tables else 0)
    if sources < 2:
        return None
    loads = [0] * min(groups, sources)
    members: list[list[int]] = [[] for _ in loads]
    # Ties broken by path: the same listing always gives the same groups.
    order = sorted(
        range(len(view.files)),
        key=lambda i: (-view.share(view.files[i]).file_bytes, view.files[i].path),
    )
    for index in order:
        lightest = min(range(len(loads)), key=lambda g: (loads[g], g))
        members[lightest].append(index)
        loads[lightest] += max(view.share(view.files[index]).file_bytes, 1)
    heads_with = min(range(len(loads)), key=lambda g: (loads[g], g))
    parts = []
    for number, chosen in enumerate(members):
        heads = view.head_tables if number == heads_with else []
        if not chosen and not heads:
            continue
        files = [view.files[i] for i in sorted(chosen)]
        parts.append(dataclasses.replace(view, files=files, head_tables=heads))
    return parts if len(parts) > 1 else None

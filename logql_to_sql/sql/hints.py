"""Which labels each pipeline stage needs, so parsers can extract only those.

A parser stage only has to produce the labels that later stages read or the result keeps.
``None`` means "every label" (a log query's output, a template reading the whole map, a
metric without ``by``). Extraction by path is an order of magnitude cheaper than building
the full label map of every line, which is what this buys.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from logql_to_sql.syntax import ast

__all__ = ["Needed", "needed_after", "stage_reads", "template_fields"]

Needed = frozenset[str] | None

_FIELD = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)")
_WHOLE_MAP = re.compile(r"\{\{-?\s*\.\s*-?\}\}|\$|\(\s*\.\s*\)|\s\.\s|\s\.\}\}|index\s+\.")


def template_fields(template: str) -> Needed:
    """Label names a Go template reads, or None when it may read any of them."""
    if _WHOLE_MAP.search(template):
        return None
    return frozenset(_FIELD.findall(template))


def _filter_reads(node: ast.LabelFilter) -> frozenset[str]:
    if isinstance(node, ast.AndLabelFilter | ast.OrLabelFilter):
        return _filter_reads(node.left) | _filter_reads(node.right)
    if isinstance(node, ast.StringLabelFilter):
        return frozenset({node.matcher.name})
    return frozenset({node.name})


def stage_reads(stage: ast.Stage) -> Needed:
    """Label names a stage reads (None: possibly all)."""
    if isinstance(stage, ast.LABEL_FILTERS):
        return _filter_reads(stage)
    if isinstance(stage, ast.LineFormat):
        return template_fields(stage.template)
    if isinstance(stage, ast.LabelFormat):
        names: set[str] = set()
        for op in stage.operations:
            if not op.template:
                names.add(op.value)
                continue
            fields = template_fields(op.value)
            if fields is None:
                return None
            names |= fields
        return frozenset(names)
    if isinstance(stage, ast.Drop | ast.Keep):
        return frozenset(item.name for item in stage.labels if isinstance(item, ast.Matcher))
    return frozenset()


def needed_after(stages: Sequence[ast.Stage], wanted: Needed) -> list[Needed]:
    """For each stage, the labels the stages after it (and the result) need."""
    out: list[Needed] = [None] * len(stages)
    need = wanted
    for index in range(len(stages) - 1, -1, -1):
        out[index] = need
        reads = stage_reads(stages[index])
        need = None if need is None or reads is None else need | reads
    return out

"""Tree rewrites applied before compiling, each one function."""

from __future__ import annotations

from logql_to_sql.syntax import ast

__all__ = ["hoist_line_filters", "split_leading_line_filters"]

# Stages a line filter is moved in front of: they neither read nor change the line in a
# way the filter could observe (decolorize excepted: the reference hoists past it anyway).
_HOISTABLE = (
    ast.JsonParser,
    ast.LogfmtParser,
    ast.RegexpParser,
    ast.PatternParser,
    ast.Drop,
    ast.Keep,
    ast.LabelFormat,
    ast.Decolorize,
)


def hoist_line_filters(stages: tuple[ast.Stage, ...]) -> tuple[ast.Stage, ...]:
    """Move each line filter ahead of earlier parsers, drop, keep, label_format and
    decolorize stages, as the reference does (never past a label filter, line_format or
    unpack); line filters keep their relative order.

    >>> from logql_to_sql import parse
    >>> [type(s).__name__ for s in hoist_line_filters(parse('{a="b"} | json |= "x"').stages)]
    ['LineFilter', 'JsonParser']
    """
    out: list[ast.Stage] = []
    for stage in stages:
        if not isinstance(stage, ast.LineFilter):
            out.append(stage)
            continue
        position = len(out)
        while position > 0 and isinstance(out[position - 1], _HOISTABLE):
            position -= 1
        out.insert(position, stage)
    return tuple(out)


def split_leading_line_filters(
    stages: tuple[ast.Stage, ...],
) -> tuple[list[ast.LineFilter], tuple[ast.Stage, ...]]:
    """The hoisted pipeline's leading line filters (they can run on the scan) and the rest."""
    hoisted = hoist_line_filters(stages)
    leading: list[ast.LineFilter] = []
    for stage in hoisted:
        if not isinstance(stage, ast.LineFilter):
            break
        leading.append(stage)
    return leading, hoisted[len(leading) :]

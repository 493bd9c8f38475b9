"""Semantic validation with the messages of LOGQL.md section 3.

Three passes, in Loki's order: checks Loki makes while building AST nodes (regexes,
aggregation parameters, grouping and unwrap rules, binary operands), then the
empty-compatible selector rule, then the errors raised when pipeline stages are
built (reported as ``stage '<text>' : <cause>``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gocompat.fmt import go_quote
from gocompat.regex_syntax import RegexSyntaxError, capture_names, matches_empty
from logql_to_sql.errors import ParseError
from logql_to_sql.syntax import ast as a
from logql_to_sql.syntax.cursor import parse_number
from logql_to_sql.syntax.printer import group_stages, stage_text
from logql_to_sql.syntax.regex_check import check_regex
from logql_to_sql.syntax.stagecheck import (
    check_ip,
    check_json_path,
    check_line_filter,
    check_template,
    pattern_parser_error,
)

__all__ = ["EMPTY_SELECTOR_MESSAGE", "validate"]

EMPTY_SELECTOR_MESSAGE = (
    "queries require at least one regexp or equality matcher that does not have an "
    'empty-compatible value. For instance, app=~".*" does not meet this requirement, '
    'but app=~".+" will'
)
R = a.RangeOp
UNWRAP_REQUIRED = frozenset(
    {R.SUM_OVER_TIME, R.AVG_OVER_TIME, R.MIN_OVER_TIME, R.MAX_OVER_TIME, R.STDVAR_OVER_TIME,
     R.STDDEV_OVER_TIME, R.QUANTILE_OVER_TIME, R.FIRST_OVER_TIME, R.LAST_OVER_TIME,
     R.RATE_COUNTER}
)  # fmt: skip
UNWRAP_FORBIDDEN = frozenset({R.COUNT_OVER_TIME, R.BYTES_OVER_TIME, R.BYTES_RATE})
GROUPING_ALLOWED = frozenset(
    {R.AVG_OVER_TIME, R.STDDEV_OVER_TIME, R.STDVAR_OVER_TIME, R.QUANTILE_OVER_TIME,
     R.MAX_OVER_TIME, R.MIN_OVER_TIME, R.FIRST_OVER_TIME, R.LAST_OVER_TIME}
)  # fmt: skip
K_OPS = frozenset({a.VectorOp.TOPK, a.VectorOp.BOTTOMK, a.VectorOp.APPROX_TOPK})
PARSER_STAGES = (a.JsonParser, a.LogfmtParser, a.RegexpParser, a.PatternParser, a.Unpack)


def validate(expr: a.Expr, *, stages: bool = True) -> None:
    """Raise :class:`ParseError` (no position) if ``expr`` breaks a section 3 rule.

    ``stages=False`` skips the third pass: Loki raises those errors only when it builds a
    pipeline to run the query, so requests that only parse (``format_query``) accept them.
    """
    _check_node(expr)
    for selector in _selectors(expr):
        if not any(not _matches_empty(m) for m in selector.matchers):
            raise ParseError(EMPTY_SELECTOR_MESSAGE)
    if stages:
        for pipeline, metric in _pipelines(expr, False):
            _check_stages(pipeline, metric)


# ---------------------------------------------------------------- pass 1: node rules


def _check_node(node: Any) -> None:
    if isinstance(node, a.LogQuery):
        _check_pipeline(node.selector, node.stages, None)
    elif isinstance(node, a.RangeAggregation):
        r = node.range
        _check_pipeline(r.selector, r.stages, r.unwrap)
        _check_range_aggregation(node)
    elif isinstance(node, a.VectorAggregation):
        _check_node(node.expr)
        _check_vector_aggregation(node)
    elif isinstance(node, a.BinaryOp):
        _check_node(node.left)
        _check_node(node.right)
        _check_binary(node)
    elif isinstance(node, a.LabelReplace):
        _check_node(node.expr)
        _check_label_replace(node)


def _check_pipeline(
    selector: a.StreamSelector, stages: tuple[a.Stage, ...], unwrap: a.Unwrap | None
) -> None:
    _check_matchers(selector.matchers)
    for stage in stages:
        _check_stage_node(stage)
    for f in unwrap.post_filters if unwrap else ():
        _check_stage_node(f)


def _check_matchers(matchers: Any) -> None:
    for m in matchers:
        if isinstance(m, a.Matcher) and m.op in (a.MatchOp.RE, a.MatchOp.NRE):
            check_regex(m.value)


def _check_stage_node(stage: a.Stage) -> None:
    if isinstance(stage, a.Drop | a.Keep):
        _check_matchers(stage.labels)
    elif isinstance(stage, a.RegexpParser):
        _check_regexp_parser(stage.regex)
    elif isinstance(stage, a.PatternParser):
        err = pattern_parser_error(stage.pattern)
        if err is not None:
            raise ParseError(err)
    else:
        for leaf in _filter_leaves(stage):
            if isinstance(leaf, a.StringLabelFilter):
                _check_matchers((leaf.matcher,))


def _check_regexp_parser(regex: str) -> None:
    names = [n for n in check_regex(regex) if n is not None]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise ParseError(f"duplicate extracted label name '{n}'")
        seen.add(n)
    if not names:
        raise ParseError("invalid regexp parser: at least one named capture must be supplied")


def _check_range_aggregation(e: a.RangeAggregation) -> None:
    op = e.op.value
    if e.param_text is not None and e.op is not R.QUANTILE_OVER_TIME:
        raise ParseError(f"parameter {e.param_text} not supported for operation {op}")
    if e.param_text is not None:
        try:
            parse_number(e.param_text)
        except ParseError:
            raise ParseError(
                f"invalid parameter for operation {op}: strconv.ParseFloat: "
                f"parsing {go_quote(e.param_text)}: invalid syntax"
            ) from None
    if e.param_text is None and e.op is R.QUANTILE_OVER_TIME:
        raise ParseError(f"parameter required for operation {op}")
    if e.grouping is not None and e.op not in GROUPING_ALLOWED:
        raise ParseError(f"grouping not allowed for {op} aggregation")
    if e.range.unwrap is not None and e.op in UNWRAP_FORBIDDEN:
        raise ParseError(f"invalid aggregation {op} with unwrap")
    if e.range.unwrap is None and e.op in UNWRAP_REQUIRED:
        raise ParseError(f"invalid aggregation {op} without unwrap")


def _check_vector_aggregation(e: a.VectorAggregation) -> None:
    op, text = e.op.value, e.param_text
    if e.op in K_OPS:
        if text is None:
            raise ParseError(f"parameter required for operation {op}")
        if e.param is None:
            raise ParseError(f"invalid parameter {op}({text},")
        if e.param <= 0:
            raise ParseError(f"invalid parameter (must be greater than 0) {op}({text}")
    elif text is not None:
        raise ParseError(f"unsupported parameter for operation {op}({text},")
    g = e.grouping
    grouped = g is not None and (bool(g.labels) or g.without)
    if grouped and e.op is a.VectorOp.APPROX_TOPK:
        raise ParseError(f"grouping not allowed for {op} aggregation")
    if grouped and e.op in (a.VectorOp.SORT, a.VectorOp.SORT_DESC):
        raise ParseError("sort and sort_desc doesn't allow grouping by ")


def _check_binary(e: a.BinaryOp) -> None:
    op = e.op.value
    for side, leg in (("left", e.left), ("right", e.right)):
        if isinstance(leg, a.LogQuery):
            kind = "*syntax.PipelineExpr" if leg.stages else "*syntax.MatchersExpr"
            raise ParseError(f"unexpected type for {side} leg of binary operation ({op}): {kind}")
    if e.op.is_set:
        for side, leg in (("left", e.left), ("right", e.right)):
            if isinstance(leg, a.Literal):
                raise ParseError(
                    f"unexpected literal for {side} leg of logical/set binary operation "
                    f"({op}): {_go_percent_f(leg.value)}"
                )


def _go_percent_f(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:f}"


def _check_label_replace(e: a.LabelReplace) -> None:
    try:
        capture_names(f"^(?:{e.regex})$")
    except RegexSyntaxError as exc:
        raise ParseError(f"invalid regex in label_replace: {exc}") from None


# ---------------------------------------------------------------- pass 2: selectors


def _matches_empty(m: a.Matcher) -> bool:
    if m.op is a.MatchOp.EQ:
        return m.value == ""
    if m.op is a.MatchOp.NEQ:
        return m.value != ""
    result = matches_empty(m.value)
    if result is None:
        return False
    return result if m.op is a.MatchOp.RE else not result


def _selectors(node: Any) -> Iterator[a.StreamSelector]:
    if isinstance(node, a.LogQuery):
        yield node.selector
    elif isinstance(node, a.RangeAggregation):
        yield node.range.selector
    elif isinstance(node, a.VectorAggregation | a.LabelReplace):
        yield from _selectors(node.expr)
    elif isinstance(node, a.BinaryOp):
        yield from _selectors(node.left)
        yield from _selectors(node.right)


# ---------------------------------------------------------------- pass 3: stages


def _pipelines(node: Any, metric: bool) -> Iterator[tuple[tuple[a.Stage, ...], bool]]:
    if isinstance(node, a.LogQuery):
        yield node.stages, metric
    elif isinstance(node, a.RangeAggregation):
        r = node.range
        post: tuple[a.Stage, ...] = r.unwrap.post_filters if r.unwrap else ()
        keep_format = node.op in (R.BYTES_OVER_TIME, R.BYTES_RATE)
        yield r.stages + post, not keep_format
    elif isinstance(node, a.VectorAggregation | a.LabelReplace):
        yield from _pipelines(node.expr, True)
    elif isinstance(node, a.BinaryOp):
        yield from _pipelines(node.left, True)
        yield from _pipelines(node.right, True)


def _check_stages(stages: tuple[a.Stage, ...], metric: bool) -> None:
    groups = list(group_stages(stages))
    for i, group in enumerate(groups):
        if metric and isinstance(group[0], a.LineFormat) and not _read_later(groups[i + 1 :]):
            continue
        err = _stage_error(group)
        if err is not None:
            raise ParseError(f"stage '{stage_text(group)}' : {err}")


def _read_later(groups: list[tuple[a.Stage, ...]]) -> bool:
    return any(isinstance(g[0], (a.LineFilter, *PARSER_STAGES)) for g in groups)


def _stage_error(group: tuple[a.Stage, ...]) -> str | None:
    first = group[0]
    if isinstance(first, a.LineFilter):
        for f in group:
            assert isinstance(f, a.LineFilter)
            err = check_line_filter(f)
            if err is not None:
                return err
        return None
    if isinstance(first, a.JsonParser):
        return next(filter(None, (check_json_path(x.expression) for x in first.extractions)), None)
    if isinstance(first, a.LineFormat):
        err = check_template(first.template, "line")
        return None if err is None else f"invalid line template: {err}"
    if isinstance(first, a.LabelFormat):
        return _label_format_error(first)
    for leaf in _filter_leaves(first):
        if isinstance(leaf, a.IpLabelFilter):
            err = check_ip(leaf.pattern)
            if err is not None:
                return err
    return None


def _label_format_error(stage: a.LabelFormat) -> str | None:
    seen: set[str] = set()
    for op in stage.operations:
        if op.name in seen:
            return f"multiple label name '{op.name}' not allowed in a single format operation"
        seen.add(op.name)
        if op.name == "__error__":
            return "__error__ cannot be formatted"
        if op.template:
            err = check_template(op.value, "label")
            if err is not None:
                return f"invalid template for label '{op.name}': {err}"
    return None


def _filter_leaves(node: Any) -> Iterator[Any]:
    if isinstance(node, a.AndLabelFilter | a.OrLabelFilter):
        yield from _filter_leaves(node.left)
        yield from _filter_leaves(node.right)
    else:
        yield node

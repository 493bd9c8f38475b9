"""Canonical text ``T`` and pretty form ``P`` of an AST (LOGQL.md section 10).

``to_text`` mirrors Loki's ``String()`` methods: one line, Go-quoted strings, Go
duration text for offsets and duration filters, Prometheus text for ranges.
``pretty`` mirrors Loki's ``format_query`` prettifier (100-byte line limit).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from gocompat.durations import format_go_duration, format_humanize_bytes, format_prom_duration
from gocompat.fmt import go_format_f, go_format_v, go_quote
from logql_to_sql.syntax import ast as a

__all__ = ["group_stages", "pretty", "stage_text", "to_text"]

MAX_LINE = 100
_LITERAL_RE = re.compile(r"(?:\\[^A-Za-z0-9]|[^\\.+*?()|\[\]{}^$])+")


def to_text(node: a.Expr) -> str:
    """The canonical one-line text ``T`` of an expression."""
    return _text(node)


def _text(node: Any) -> str:
    fn: Callable[[Any], str] = _TEXT[type(node)]
    return fn(node)


def _matcher(m: a.Matcher) -> str:
    return f"{m.name}{m.op.value}{go_quote(m.value)}"


def _selector(s: a.StreamSelector) -> str:
    return "{" + ", ".join(_matcher(m) for m in s.matchers) + "}"


def _pipeline(selector: a.StreamSelector, stages: tuple[a.Stage, ...]) -> str:
    if not stages:
        return _selector(selector)
    return _selector(selector) + " " + " ".join(_text(s) for s in stages)


def _operand(op: str, x: str | a.IpOperand) -> str:
    if isinstance(x, a.IpOperand):
        return f"ip({go_quote(x.pattern)})"
    return go_quote(x)


def _line_filter(f: a.LineFilter) -> str:
    op = f.op.value
    if f.op.negative:
        return " ".join(f"{op} {_operand(op, x)}" for x in f.operands)
    return f"{op} " + " or ".join(_operand(op, x) for x in f.operands)


def _extractions(items: tuple[a.LabelExtraction, ...]) -> str:
    return ",".join(f"{e.name}={go_quote(e.expression)}" for e in items)


def _json(p: a.JsonParser) -> str:
    return "| json" + (" " + _extractions(p.extractions) if p.extractions else "")


def _logfmt(p: a.LogfmtParser) -> str:
    out = "| logfmt"
    if p.strict:
        out += " --strict"
    if p.keep_empty:
        out += " --keep-empty"
    return out + (" " + _extractions(p.extractions) if p.extractions else "")


def _label_format(p: a.LabelFormat) -> str:
    ops = (f"{o.name}={go_quote(o.value) if o.template else o.value}" for o in p.operations)
    return "| label_format " + ",".join(ops)


def _names(items: tuple[str | a.Matcher, ...]) -> str:
    return ",".join(i if isinstance(i, str) else _matcher(i) for i in items)


def _simplifiable(regex: str) -> bool:
    body = regex[4:] if regex.startswith("(?i)") else regex
    if body in (".*", ".+", ""):
        return True
    core = body.removeprefix(".*").removesuffix(".*")
    if core.startswith("(") and core.endswith(")") and "(" not in core[1:]:
        core = core[1:-1]
    return all(_LITERAL_RE.fullmatch(part) for part in core.split("|"))


def _string_filter(f: a.StringLabelFilter) -> str:
    m = f.matcher
    raw_ok = "`" not in m.value and m.value.isprintable()
    if m.op is a.MatchOp.RE and raw_ok and not _simplifiable(m.value):
        return f"{m.name}=~`{m.value}`"
    return _matcher(m)


def _label_filter(f: a.LabelFilter) -> str:
    return "| " + _filter(f)


def _filter(f: a.LabelFilter) -> str:
    if isinstance(f, a.AndLabelFilter):
        return f"( {_filter(f.left)} , {_filter(f.right)} )"
    if isinstance(f, a.OrLabelFilter):
        return f"( {_filter(f.left)} or {_filter(f.right)} )"
    if isinstance(f, a.StringLabelFilter):
        return _string_filter(f)
    if isinstance(f, a.IpLabelFilter):
        return f"{f.name}{f.op.value}ip({go_quote(f.pattern)})"
    if isinstance(f, a.NumericLabelFilter):
        value = go_format_f(f.value)
    elif isinstance(f, a.DurationLabelFilter):
        value = format_go_duration(f.value_ns)
    else:
        value = format_humanize_bytes(f.value)
    return f"{f.name}{f.op.value}{value}"


def _unwrap(u: a.Unwrap) -> str:
    label = f"{u.conversion.value}({u.label})" if u.conversion else u.label
    return f" | unwrap {label}" + "".join(f" | {_filter(f)}" for f in u.post_filters)


def _log_range(r: a.LogRange) -> str:
    out = _pipeline(r.selector, r.stages)
    if r.unwrap is not None:
        out += _unwrap(r.unwrap)
    out += f"[{format_prom_duration(r.range_ns)}]"
    if r.offset_ns:
        out += f" offset {format_go_duration(r.offset_ns)}"
    return out


def _grouping(g: a.Grouping | None, vector: bool, separator: str = ",") -> str:
    if g is None or (vector and not g.labels and not g.without):
        return ""
    return f" {'without' if g.without else 'by'} ({separator.join(g.labels)})"


def _range_agg(e: a.RangeAggregation) -> str:
    param = "" if e.param is None else go_format_f(e.param) + ","
    return f"{e.op.value}({param}{_log_range(e.range)}){_grouping(e.grouping, False)}"


def _vector_agg(e: a.VectorAggregation) -> str:
    param = "" if e.param is None else f"{e.param},"
    return f"{e.op.value}{_grouping(e.grouping, True)}({param}{_text(e.expr)})"


def _binary_op_text(e: a.BinaryOp, sep: str = ",") -> str:
    op = e.op.value + (" bool" if e.return_bool else "")
    m = e.matching
    if m is None or not (m.on or m.labels or m.cardinality is not a.Cardinality.ONE_TO_ONE):
        return op
    group = "" if m.cardinality is a.Cardinality.ONE_TO_ONE else m.cardinality.value
    if m.include:
        group += f" ({sep.join(m.include)})"
    return f"{op} {'on' if m.on else 'ignoring'} ({sep.join(m.labels)}) {group}"


def _binary(e: a.BinaryOp) -> str:
    op, right = _binary_op_text(e), _text(e.right)
    if op.endswith(("group_left", "group_right")) and right.startswith("("):
        op += " ()"  # else the right operand's "(" would read as the include list
    return f"({_text(e.left)} {op} {right})"


def _label_replace(e: a.LabelReplace) -> str:
    args = ",".join(go_quote(x) for x in (e.dst, e.replacement, e.src, e.regex))
    return f"label_replace({_text(e.expr)},{args})"


_TEXT: dict[type, Callable[[Any], str]] = {
    a.StreamSelector: _selector,
    a.LogQuery: lambda q: _pipeline(q.selector, q.stages),
    a.LineFilter: _line_filter,
    a.JsonParser: _json,
    a.LogfmtParser: _logfmt,
    a.RegexpParser: lambda p: f"| regexp {go_quote(p.regex)}",
    a.PatternParser: lambda p: f"| pattern {go_quote(p.pattern)}",
    a.Unpack: lambda _: "| unpack",
    a.Decolorize: lambda _: "| decolorize",
    a.LineFormat: lambda p: f"| line_format {go_quote(p.template)}",
    a.LabelFormat: _label_format,
    a.Drop: lambda p: "| drop " + _names(p.labels),
    a.Keep: lambda p: "| keep " + _names(p.labels),
    **dict.fromkeys(
        (
            a.StringLabelFilter,
            a.NumericLabelFilter,
            a.DurationLabelFilter,
            a.BytesLabelFilter,
            a.IpLabelFilter,
            a.AndLabelFilter,
            a.OrLabelFilter,
        ),
        _label_filter,
    ),
    a.LogRange: _log_range,
    a.RangeAggregation: _range_agg,
    a.VectorAggregation: _vector_agg,
    a.BinaryOp: _binary,
    a.Literal: lambda e: go_format_v(e.value),
    a.VectorLiteral: lambda e: f"vector({e.value:f})",
    a.LabelReplace: _label_replace,
}


# ---------------------------------------------------------------- pretty form


def group_stages(stages: tuple[a.Stage, ...]) -> Iterator[tuple[a.Stage, ...]]:
    """Group consecutive line filters into one stage, as Loki's AST does."""
    run: list[a.Stage] = []
    for s in stages:
        if isinstance(s, a.LineFilter):
            run.append(s)
            continue
        if run:
            yield tuple(run)
            run = []
        yield (s,)
    if run:
        yield tuple(run)


def stage_text(group: tuple[a.Stage, ...]) -> str:
    """Canonical text of one (grouped) pipeline stage."""
    return " ".join(_text(s) for s in group)


def _fits(text: str) -> bool:
    return len(text.encode("utf-8", "surrogatepass")) <= MAX_LINE


def _ind(level: int) -> str:
    return "  " * level


def pretty(node: a.Expr, level: int = 0) -> str:
    """The pretty multi-line form ``P`` returned by ``format_query``."""
    text = to_text(node)
    if _fits(text) or isinstance(node, a.Literal | a.VectorLiteral):
        return _ind(level) + text
    fn: Callable[[Any, int], str] = _PRETTY[type(node)]
    return fn(node, level)


def _pretty_stage(group: tuple[a.Stage, ...], level: int) -> str:
    if isinstance(group[0], a.Decolorize):
        return _text(group[0])
    text = stage_text(group)
    if _fits(text) or not isinstance(group[0], a.LineFilter):
        return _ind(level) + text
    singles = [
        a.LineFilter(f.op, (x,)) if f.op.negative else f
        for f in group
        if isinstance(f, a.LineFilter)
        for x in (f.operands if f.op.negative else f.operands[:1])
    ]
    return "\n".join(_ind(level) + _text(f) for f in singles)


def _pretty_pipeline(selector: a.StreamSelector, stages: tuple[a.Stage, ...], level: int) -> str:
    if _fits(_pipeline(selector, stages)):
        return _ind(level) + _pipeline(selector, stages)
    lines = [_ind(level) + _selector(selector)]
    lines += [_pretty_stage(g, level + 1) for g in group_stages(stages)]
    return "\n".join(lines)


def _pretty_range(r: a.LogRange, level: int) -> str:
    out = _pretty_pipeline(r.selector, r.stages, level)
    if r.unwrap is not None:
        u = r.unwrap
        label = f"{u.conversion.value}({u.label})" if u.conversion else u.label
        out += f"\n{_ind(level + 1)}| unwrap {label}"
        out += "".join(f"\n{_ind(level + 1)}| {_filter(f)}" for f in u.post_filters)
    out += f" [{format_prom_duration(r.range_ns)}]"
    if r.offset_ns:
        out += f" offset {format_prom_duration(r.offset_ns)}"
    return out


def _pretty_range_agg(e: a.RangeAggregation, level: int) -> str:
    out = f"{_ind(level)}{e.op.value}(\n"
    if e.param is not None:
        out += f"{_ind(level + 1)}{go_format_v(e.param)},\n"
    out += _pretty_range(e.range, level + 1)
    return out + f"\n{_ind(level)}){_grouping(e.grouping, False, ', ')}"


def _pretty_vector_agg(e: a.VectorAggregation, level: int) -> str:
    out = f"{_ind(level)}{e.op.value}{_grouping(e.grouping, True, ', ')}(\n"
    if e.param is not None:
        out += f"{_ind(level + 1)}{e.param},\n"
    return out + pretty(e.expr, level + 1) + f"\n{_ind(level)})"


def _pretty_binary(e: a.BinaryOp, level: int) -> str:
    op = e.op.value + (" bool" if e.return_bool else "")
    m = e.matching
    if m is not None and m.labels:
        op += f" {'on' if m.on else 'ignoring'} ({', '.join(m.labels)})"
        if m.cardinality is not a.Cardinality.ONE_TO_ONE:
            op += " " + m.cardinality.value
        if m.include:
            op += f" ({', '.join(m.include)})"
    return f"{pretty(e.left, level + 1)}\n{_ind(level)}{op}\n{pretty(e.right, level + 1)}"


def _pretty_label_replace(e: a.LabelReplace, level: int) -> str:
    args = [pretty(e.expr, level + 1)]
    args += [_ind(level + 1) + go_quote(x) for x in (e.dst, e.replacement, e.src, e.regex)]
    return f"{_ind(level)}label_replace(\n" + ",\n".join(args) + f"\n{_ind(level)})"


_PRETTY: dict[type, Callable[[Any, int], str]] = {
    a.LogQuery: lambda q, lvl: _pretty_pipeline(q.selector, q.stages, lvl),
    a.RangeAggregation: _pretty_range_agg,
    a.VectorAggregation: _pretty_vector_agg,
    a.BinaryOp: _pretty_binary,
    a.LabelReplace: _pretty_label_replace,
}

"""Pipeline stages -> frames: one ``visit_<Node>`` per stage kind (LOGQL.md 5).

A stage gets the current frame and the labels later stages need (``Needed``) and returns
the next frame. Parsers merge their output into ``LABELS`` with the reference's rules: a name
clashing with a stream or metadata label becomes ``<name>_extracted``; a name a parser or
label_format already wrote is not overwritten (first write wins).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import ClassVar

from sqlglot import exp

from logql_to_sql.errors import UnsupportedError
from logql_to_sql.sql.dialect import (
    UDF_IP_MATCH,
    UDF_TEMPLATE,
    contains,
    query_id,
    regex_search,
    sql,
)
from logql_to_sql.sql.frame import (
    BASE_NAMES,
    ERROR,
    ERROR_DETAILS,
    JSON_LOOKUP,
    JSON_PARTIAL,
    LABELS,
    LINE,
    PARSE_DETAILS,
    PARSE_ERROR,
    PARSED_ENTRIES,
    PARSED_NAMES,
    RENDERED,
    SNAPSHOT,
    TS,
    Frame,
    with_entries,
)
from logql_to_sql.sql.hints import Needed
from logql_to_sql.sql.label_filters import compile_label_filter, filtered
from logql_to_sql.sql.parser_stages import (
    Parsed,
    first_wins,
    json_all,
    json_hinted,
    json_paths,
    logfmt,
    logfmt_hinted,
    pattern,
    regexp,
    unpack_entries,
)
from logql_to_sql.syntax import ast

__all__ = [
    "ANSI_ESCAPES",
    "StageCompiler",
    "decolorized",
    "line_filter_condition",
    "matcher_condition",
    "pattern_filter_regex",
]

ANSI_ESCAPES = r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]"
_SIMPLE_TEMPLATE = re.compile(r"\{\{-?\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}")


def pattern_filter_regex(text: str) -> str:
    """RE2 regex of a ``|>`` pattern: ``<_>`` is one or more characters, the leading literal
    is not anchored and the pattern must reach the end of the line."""
    if text == "":
        return "^$"
    pieces = re.split(r"<_>", text)
    body = ".+?".join(re.escape(piece) for piece in pieces)
    if pieces[-1] == "":
        body = body[: -len(".+?")] + ".+" if len(pieces) > 1 else body
    return "(?s)" + body + "$"


def line_filter_condition(node: ast.LineFilter, line: exp.Expr) -> exp.Expr:
    """Whether ``line`` passes one line filter (an ``or`` chain of operands)."""
    tests = []
    for operand in node.operands:
        if isinstance(operand, ast.IpOperand):
            test: exp.Expr = exp.Anonymous(
                this=UDF_IP_MATCH, expressions=[line.copy(), exp.Literal.string(operand.pattern)]
            )
        elif node.op in (ast.LineFilterOp.CONTAINS, ast.LineFilterOp.NOT_CONTAINS):
            test = contains(line.copy(), exp.Literal.string(operand))
        elif node.op in (ast.LineFilterOp.MATCH, ast.LineFilterOp.NOT_MATCH):
            test = regex_search(line.copy(), exp.Literal.string(operand))
        else:
            test = regex_search(line.copy(), exp.Literal.string(pattern_filter_regex(operand)))
        tests.append(test)
    either = exp.paren(exp.or_(*tests))
    return exp.Not(this=either) if node.op.negative else either


def _labels_with_errors() -> exp.Expr:
    return sql(
        "CASE WHEN :error IS NULL THEN :labels ELSE :with_errors END",
        error=exp.column(ERROR),
        labels=exp.column(LABELS),
        with_errors=with_entries(
            exp.column(LABELS),
            sql(
                "[{'key': '__error__', 'value': :error}, "
                "{'key': '__error_details__', 'value': coalesce(:error_details, '')}]",
                error=exp.column(ERROR),
                error_details=exp.column(ERROR_DETAILS),
            ),
        ),
    )


def _simple_template(template: str, field: Callable[[str], exp.Expr]) -> exp.Expr | None:
    """Concatenation SQL for a template of only text and ``{{.label}}`` actions."""
    rest = _SIMPLE_TEMPLATE.sub("", template)
    if "{{" in rest or "}}" in rest:
        return None
    parts: list[exp.Expr] = []
    position = 0
    for match in _SIMPLE_TEMPLATE.finditer(template):
        if match.start() > position:
            parts.append(exp.Literal.string(template[position : match.start()]))
        parts.append(field(match.group(1)))
        position = match.end()
    if position < len(template):
        parts.append(exp.Literal.string(template[position:]))
    if not parts:
        return exp.Literal.string("")
    return exp.Concat(expressions=parts, safe=True, coalesce=True)


def _line_field(name: str) -> exp.Expr:
    if name == "__error__":
        return sql("coalesce(:error, '')", error=exp.column(ERROR))
    if name == "__error_details__":
        return sql("coalesce(:error_details, '')", error_details=exp.column(ERROR_DETAILS))
    return sql("coalesce(:labels[:n], '')", labels=exp.column(LABELS), n=name)


def _snapshot_field(name: str) -> exp.Expr:
    return sql("coalesce(:snapshot[:n], '')", snapshot=exp.column(SNAPSHOT), n=name)


def _render(template: str, kind: str, labels: exp.Expr) -> exp.Expr:
    return exp.Anonymous(
        this=UDF_TEMPLATE,
        expressions=[
            exp.Literal.string(template),
            exp.Literal.string(kind),
            labels,
            exp.column(LINE),
            exp.column(TS),
            query_id(),
        ],
    )


def _rendered(field: str) -> exp.Expr:
    """A field of the template output ``RENDERED``: ``text`` or ``error``."""
    return exp.column(field, table=RENDERED)


def _template_failed() -> exp.Expr:
    return sql(":error IS NOT NULL", error=_rendered("error"))


def _template_error(failed: exp.Expr) -> dict[str, exp.Expr]:
    """The error columns after a template: ``TemplateFormatErr`` where it ``failed``."""
    return {
        ERROR: sql(
            "CASE WHEN :f THEN 'TemplateFormatErr' ELSE :error END",
            f=failed,
            error=exp.column(ERROR),
        ),
        ERROR_DETAILS: sql(
            "CASE WHEN :f THEN :message ELSE :error_details END",
            f=failed.copy(),
            message=_rendered("error"),
            error_details=exp.column(ERROR_DETAILS),
        ),
    }


def matcher_condition(matcher: ast.Matcher, value: exp.Expr) -> exp.Expr:
    """Whether a label value satisfies ``name op value`` (regexes anchored)."""
    literal = exp.Literal.string(matcher.value)
    if matcher.op is ast.MatchOp.EQ:
        return exp.EQ(this=value, expression=literal)
    if matcher.op is ast.MatchOp.NEQ:
        return exp.NEQ(this=value, expression=literal)
    test = sql("regexp_full_match(:v, :re)", v=value, re=matcher.value)
    return test if matcher.op is ast.MatchOp.RE else exp.Not(this=test)


class StageCompiler:
    """Compiles one stage at a time onto a frame."""

    PARSERS: ClassVar[dict[type, Callable[..., Parsed]]] = {}

    def visit(self, frame: Frame, stage: ast.Stage, needed: Needed) -> Frame:
        method = getattr(self, f"visit_{type(stage).__name__}", None)
        if method is None:
            raise UnsupportedError(type(stage).__name__)
        result: Frame = method(frame, stage, needed)
        return result

    # line ----------------------------------------------------------------------------

    def visit_LineFilter(self, frame: Frame, stage: ast.LineFilter, needed: Needed) -> Frame:
        return frame.filter(line_filter_condition(stage, exp.column(LINE)))

    def visit_Decolorize(self, frame: Frame, stage: ast.Decolorize, needed: Needed) -> Frame:
        return frame.next({LINE: decolorized()})

    def visit_LineFormat(self, frame: Frame, stage: ast.LineFormat, needed: Needed) -> Frame:
        simple = _simple_template(stage.template, _line_field)
        if simple is not None:
            return frame.next({LINE: simple})
        rendered = frame.next(
            extras={RENDERED: _render(stage.template, "line", _labels_with_errors())}
        )
        failed = _template_failed()
        line = sql(
            "CASE WHEN :f THEN :line ELSE :text END",
            f=failed,
            line=exp.column(LINE),
            text=_rendered("text"),
        )
        return rendered.next({LINE: line, **_template_error(failed.copy())})

    # labels --------------------------------------------------------------------------

    def _label_filter(self, frame: Frame, stage: ast.LabelFilter, needed: Needed) -> Frame:
        return filtered(frame, compile_label_filter(stage))

    visit_StringLabelFilter = _label_filter
    visit_NumericLabelFilter = _label_filter
    visit_DurationLabelFilter = _label_filter
    visit_BytesLabelFilter = _label_filter
    visit_IpLabelFilter = _label_filter
    visit_AndLabelFilter = _label_filter
    visit_OrLabelFilter = _label_filter

    def visit_Drop(self, frame: Frame, stage: ast.Drop, needed: Needed) -> Frame:
        conditions = []
        err: exp.Expr = exp.column(ERROR)
        errd: exp.Expr = exp.column(ERROR_DETAILS)
        for item in stage.labels:
            name = item if isinstance(item, str) else item.name
            if name in ("__error__", "__error_details__"):
                target = ERROR if name == "__error__" else ERROR_DETAILS
                value = exp.column(target)
                cleared = (
                    sql("CAST(NULL AS VARCHAR)")
                    if isinstance(item, str)
                    else sql(
                        "CASE WHEN :m THEN NULL ELSE :v END",
                        m=matcher_condition(item, value),
                        v=value,
                    )
                )
                if target == ERROR:
                    err = cleared
                else:
                    errd = cleared
                continue
            test = sql("e.key = :n", n=name)
            if not isinstance(item, str):
                test = exp.and_(test, matcher_condition(item, sql("e.value")))
            conditions.append(test)
        labels: exp.Expr = exp.column(LABELS)
        if conditions:
            labels = sql(
                "map_from_entries(list_filter(map_entries(:labels), e -> NOT (:c)))",
                labels=labels,
                c=exp.or_(*conditions),
            )
        return frame.next({LABELS: labels, ERROR: err, ERROR_DETAILS: errd})

    def visit_Keep(self, frame: Frame, stage: ast.Keep, needed: Needed) -> Frame:
        conditions = []
        for item in stage.labels:
            if isinstance(item, str):
                conditions.append(sql("e.key = :n", n=item))
            else:
                conditions.append(
                    exp.and_(
                        sql("e.key = :n", n=item.name), matcher_condition(item, sql("e.value"))
                    )
                )
        labels = sql(
            "map_from_entries(list_filter(map_entries(:labels), e -> :c))",
            labels=exp.column(LABELS),
            c=exp.or_(*conditions),
        )
        return frame.next({LABELS: labels})

    def visit_LabelFormat(self, frame: Frame, stage: ast.LabelFormat, needed: Needed) -> Frame:
        snapshot_taken = False
        written = []
        for op in stage.operations:
            written.append(op.name)
            if not op.template:
                source = sql(":labels[:b]", labels=exp.column(LABELS), b=op.value)
                renamed = sql(
                    "map_concat(map_from_entries(list_filter(map_entries(:labels), "
                    "e -> e.key <> :b)), map_from_entries([{'key': :a, 'value': :v}]))",
                    labels=exp.column(LABELS),
                    b=op.value,
                    a=op.name,
                    v=source,
                )
                labels = sql(
                    "CASE WHEN :v IS NULL THEN :labels ELSE :r END",
                    v=source.copy(),
                    labels=exp.column(LABELS),
                    r=renamed,
                )
                frame = frame.next(
                    {LABELS: labels},
                    extras={SNAPSHOT: exp.column(SNAPSHOT)} if snapshot_taken else None,
                )
                continue
            if not snapshot_taken:
                frame = frame.next(extras={SNAPSHOT: _labels_with_errors()})
                snapshot_taken = True
            frame = self._label_template(frame, op)
        names = sql(
            "list_concat(:parsed_names, :w)", parsed_names=exp.column(PARSED_NAMES), w=written
        )
        return frame.next({PARSED_NAMES: names})

    def _label_template(self, frame: Frame, op: ast.LabelFormatOp) -> Frame:
        simple = _simple_template(op.value, _snapshot_field)
        keep: dict[str, exp.Expr] = {SNAPSHOT: exp.column(SNAPSHOT)}
        if simple is not None:
            labels = with_entries(
                exp.column(LABELS), sql("[{'key': :a, 'value': :v}]", a=op.name, v=simple)
            )
            return frame.next({LABELS: labels}, extras=keep)
        rendered = frame.next(
            extras={**keep, RENDERED: _render(op.value, "label", exp.column(SNAPSHOT))}
        )
        failed = _template_failed()
        labels = sql(
            "CASE WHEN :f THEN :labels ELSE :set END",
            f=failed,
            labels=exp.column(LABELS),
            set=with_entries(
                exp.column(LABELS),
                sql("[{'key': :a, 'value': :text}]", a=op.name, text=_rendered("text")),
            ),
        )
        return rendered.next({LABELS: labels, **_template_error(failed.copy())}, extras=keep)

    # parsers -------------------------------------------------------------------------

    def _merge(self, frame: Frame, parsed: Parsed, line: exp.Expr | None = None) -> Frame:
        entries = parsed.entries
        if parsed.skip_empty_base:
            entries = sql(
                "list_filter(:e, x -> NOT (x.value = '' AND list_contains(:base_names, x.key)))",
                e=entries,
                base_names=exp.column(BASE_NAMES),
            )
        extras = {PARSED_ENTRIES: entries, PARSE_ERROR: parsed.error, PARSE_DETAILS: parsed.details}
        staged = frame.next({LINE: line} if line is not None else None, extras=extras)
        renamed = sql(
            "list_filter(:fw, x -> NOT list_contains(:parsed_names, x.key))",
            fw=first_wins(
                sql(
                    "list_transform(:parsed, x -> {'key': CASE WHEN "
                    "list_contains(:base_names, x.key) THEN x.key || '_extracted' ELSE x.key END, "
                    "'value': x.value})",
                    parsed=exp.column(PARSED_ENTRIES),
                    base_names=exp.column(BASE_NAMES),
                )
            ),
            parsed_names=exp.column(PARSED_NAMES),
        )
        fresh = staged.next(
            extras={
                PARSED_ENTRIES: renamed,
                PARSE_ERROR: exp.column(PARSE_ERROR),
                PARSE_DETAILS: exp.column(PARSE_DETAILS),
            }
        )
        return fresh.next(
            {
                LABELS: with_entries(exp.column(LABELS), exp.column(PARSED_ENTRIES)),
                PARSED_NAMES: sql(
                    "list_concat(:parsed_names, list_transform(:parsed, x -> x.key))",
                    parsed_names=exp.column(PARSED_NAMES),
                    parsed=exp.column(PARSED_ENTRIES),
                ),
                ERROR: _parse_error(ERROR, PARSE_ERROR),
                ERROR_DETAILS: _parse_error(ERROR_DETAILS, PARSE_DETAILS),
            }
        )

    def visit_JsonParser(self, frame: Frame, stage: ast.JsonParser, needed: Needed) -> Frame:
        if stage.extractions:
            return self._merge(frame, json_paths(stage.extractions))
        if needed is None:
            return self._merge(frame, json_all())
        keys = _source_keys(needed)
        hinted = json_hinted(keys)
        staged = frame.next(extras={JSON_LOOKUP: hinted.lookup, JSON_PARTIAL: hinted.partial})
        return self._merge(staged, hinted.parsed)

    def visit_LogfmtParser(self, frame: Frame, stage: ast.LogfmtParser, needed: Needed) -> Frame:
        if needed is None or stage.extractions or stage.strict:
            return self._merge(frame, logfmt(stage))
        return self._merge(frame, logfmt_hinted(_source_keys(needed), keep_empty=stage.keep_empty))

    def visit_RegexpParser(self, frame: Frame, stage: ast.RegexpParser, needed: Needed) -> Frame:
        return self._merge(frame, regexp(stage))

    def visit_PatternParser(self, frame: Frame, stage: ast.PatternParser, needed: Needed) -> Frame:
        return self._merge(frame, pattern(stage))

    def visit_Unpack(self, frame: Frame, stage: ast.Unpack, needed: Needed) -> Frame:
        new_line, _, parsed = unpack_entries()
        return self._merge(frame, parsed, line=new_line)


def _parse_error(current: str, parsed: str) -> exp.Expr:
    """Column ``current`` after a parser: its ``parsed`` counterpart when the parser failed."""
    return sql(
        "CASE WHEN :parse_error IS NULL THEN :current ELSE :parsed END",
        parse_error=exp.column(PARSE_ERROR),
        current=exp.column(current),
        parsed=exp.column(parsed),
    )


def decolorized() -> exp.Expr:
    """``LINE`` without ANSI escape sequences (``| decolorize``)."""
    return sql("regexp_replace(:line, :re, '', 'g')", line=exp.column(LINE), re=ANSI_ESCAPES)


def _source_keys(needed: frozenset[str]) -> tuple[str, ...]:
    """Parser keys that can produce the needed names (``x_extracted`` comes from ``x``)."""
    keys = set(needed)
    keys |= {name[: -len("_extracted")] for name in needed if name.endswith("_extracted")}
    keys -= {"__error__", "__error_details__"}
    return tuple(sorted(keys))

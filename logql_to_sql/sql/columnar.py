"""Pipelines evaluated with one column per needed label instead of a label map.

When the labels that matter are known in advance (the labels a log query's filters read,
or a metric's ``by`` labels), each gets a value column (``frame.tracked_value``) and a
"written by a parser" flag (``frame.written_flag``); parsers extract only those keys by
path or regex. This avoids
building a map per entry, which dominates the cost of the general (map) pipeline.
The rules are those of ``stages`` (LOGQL.md 5.1): a parsed key clashing with a stream or
metadata label lands in ``<key>_extracted``; the first parser to write a label wins.

``columnar_pipeline`` returns None for pipelines with stages it does not support
(line_format, label_format, unpack, strict logfmt); callers then use the map pipeline.

``tests/svc/query/test_columnar_differential.py`` holds it to the map pipeline entry by
entry. One difference remains: a json or logfmt line holding both ``x`` and
``x_extracted`` where ``x`` clashes with a stream or metadata label gives
``x_extracted`` the value of whichever comes first in the line on the map pipeline, and
``x``'s value here (regexp and pattern captures, whose order is fixed, agree).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from gocompat.regex_syntax import capture_names
from logql_to_sql.sql.dialect import opaque, sql
from logql_to_sql.sql.frame import (
    ERROR,
    ERROR_DETAILS,
    JSON_ERROR_DETAILS,
    JSON_PATH_PAIRS,
    LINE,
    METADATA,
    PARSE_DETAILS,
    PARSE_ERROR,
    REGEX_CAPTURES,
    STORED_LINE,
    STORED_METADATA,
    STREAM_ID,
    TS,
    Frame,
    parsed_value,
    stream_value,
    tracked_value,
    written_flag,
)
from logql_to_sql.sql.label_filters import compile_label_filter, filtered
from logql_to_sql.sql.logfmt import logfmt_lookup
from logql_to_sql.sql.parser_stages import (
    group_names,
    json_error,
    json_lookup,
    json_paths,
    pattern_names,
    pattern_steps,
    sanitize,
)
from logql_to_sql.sql.stages import decolorized, line_filter_condition, matcher_condition
from logql_to_sql.syntax import ast

__all__ = ["ColumnarLabels", "columnar_pipeline", "columnar_supported", "stream_lookups"]

_SUFFIX = "_extracted"
_SUPPORTED = (
    ast.LineFilter,
    *ast.LABEL_FILTERS,
    ast.JsonParser,
    ast.LogfmtParser,
    ast.RegexpParser,
    ast.PatternParser,
    ast.Drop,
    ast.Keep,
    ast.Decolorize,
)


@dataclass(frozen=True, kw_only=True)
class ColumnarLabels:
    """Which column holds which label."""

    names: tuple[str, ...]
    lookups: tuple[str, ...] = ()
    """Stream label names read per entry; the source provides them as ``stream_value(i)``."""
    opaque: bool = True
    """Parsed values are computed once, hidden from DuckDB's filter pushdown (``opaque``)."""
    common: frozenset[str] = frozenset()
    """Labels every queried stream has: a parsed key of such a name can only land in
    ``<key>_extracted``."""

    def shadowed(self, key: str) -> bool:
        """Whether a parser's value of ``key`` cannot reach any tracked label: every stream
        has ``key`` (the value would be ``<key>_extracted``) and that name is not tracked."""
        return key in self.common and key + _SUFFIX not in self.names

    def stream(self, name: str) -> exp.Expr:
        """The entry's stream label ``name`` (NULL when the stream has none)."""
        if name not in self.lookups:
            return sql("CAST(NULL AS VARCHAR)")
        return exp.column(stream_value(self.lookups.index(name)))

    def in_base(self, key: str) -> exp.Expr:
        """Whether ``key`` is a stream label or a metadata key of the entry (a metadata key
        named like a stream label counts as ``<key>_extracted``)."""
        present = sql(
            "(:s IS NOT NULL OR :metadata[:k] IS NOT NULL)",
            s=self.stream(key),
            metadata=exp.column(METADATA),
            k=key,
        )
        if not key.endswith(_SUFFIX):
            return present
        base = key[: -len(_SUFFIX)]
        return sql(
            "(:present OR (:s IS NOT NULL AND :metadata[:b] IS NOT NULL))",
            present=present,
            s=self.stream(base),
            metadata=exp.column(METADATA),
            b=base,
        )

    def value(self, name: str) -> exp.Expr:
        """The current value of ``name`` (NULL when absent)."""
        if name == "__error__":
            return exp.column(ERROR)
        if name == "__error_details__" or name not in self.names:
            return sql("CAST(NULL AS VARCHAR)")
        return exp.column(tracked_value(self.names.index(name)))

    def labels(self) -> exp.Expr:
        """The set labels as a sorted ``LIST(STRUCT(key, value))``, errors included."""
        items = [
            sql("{'key': :k, 'value': :v}", k=name, v=self.value(name))
            for name in sorted({*self.names, "__error__"})
        ]
        return sql(
            "list_filter(:items, e -> e.value IS NOT NULL)", items=exp.Array(expressions=items)
        )


def columnar_supported(stages: tuple[ast.Stage, ...]) -> bool:
    """Whether every stage can run with label columns."""
    return all(
        isinstance(stage, _SUPPORTED) and not (isinstance(stage, ast.LogfmtParser) and stage.strict)
        for stage in stages
    )


def stream_lookups(names: frozenset[str]) -> tuple[str, ...]:
    """The stream labels a columnar pipeline tracking ``names`` reads for each entry: the
    caller's source must provide them, in this order, as ``stream_value(0)``, ...."""
    tracked = names - {"__error__", "__error_details__"}
    bases = {n[: -len(_SUFFIX)] for n in tracked if n.endswith(_SUFFIX)}
    return tuple(sorted(tracked | bases))


def columnar_pipeline(
    source: exp.Select,
    stages: tuple[ast.Stage, ...],
    *,
    names: frozenset[str],
    opaque: bool = True,
    common: frozenset[str] = frozenset(),
) -> tuple[Frame, ColumnarLabels] | None:
    """The pipeline over ``source`` tracking only ``names``; None if unsupported.
    ``common``: labels every stream of the source has (parsers then skip those keys
    unless their ``_extracted`` name is tracked).

    ``source`` rows are ``(ts, stream_id, line, metadata, stream_value(0), ...)`` with the
    stream labels of ``stream_lookups(names)``. ``opaque=False`` leaves the parsed values
    visible to DuckDB (see ``filtering_pipeline``).
    """
    if not columnar_supported(stages):
        return None
    tracked = ColumnarLabels(
        names=tuple(sorted(names - {"__error__", "__error_details__"})),
        lookups=stream_lookups(names),
        opaque=opaque,
        common=common,
    )
    frame = _base(source, tracked)
    for stage in stages:
        frame = _stage(frame, stage, tracked)
    return frame, tracked


def _columns(tracked: ColumnarLabels) -> tuple[str, ...]:
    count = len(tracked.names)
    return (
        TS,
        STREAM_ID,
        LINE,
        ERROR,
        ERROR_DETAILS,
        STORED_LINE,
        STORED_METADATA,
        METADATA,
        *(stream_value(i) for i in range(len(tracked.lookups))),
        *(tracked_value(i) for i in range(count)),
        *(written_flag(i) for i in range(count)),
    )


def _initial(name: str, tracked: ColumnarLabels) -> exp.Expr:
    """A label's value before any stage: stream label, else metadata (clash: _extracted)."""
    if name.endswith(_SUFFIX):
        base = name[: -len(_SUFFIX)]
        return sql(
            "CASE WHEN :sb IS NOT NULL AND :metadata[:b] IS NOT NULL THEN :metadata[:b] "
            "WHEN :sn IS NOT NULL THEN :sn ELSE :metadata[:n] END",
            sb=tracked.stream(base),
            metadata=exp.column(METADATA),
            b=base,
            sn=tracked.stream(name),
            n=name,
        )
    return sql(
        "coalesce(:s, :metadata[:n])", s=tracked.stream(name), metadata=exp.column(METADATA), n=name
    )


def _base(source: exp.Select, tracked: ColumnarLabels) -> Frame:
    lookups = [exp.column(stream_value(i)) for i in range(len(tracked.lookups))]
    inner = exp.select(
        "ts",
        "stream_id",
        "line",
        exp.column("line").as_(STORED_LINE),
        exp.column("metadata").as_(STORED_METADATA),
        exp.column("metadata").as_(METADATA),
        *lookups,
    ).from_(source.subquery("src", copy=False), copy=False)
    columns: list[exp.Expr] = [
        exp.column(TS),
        exp.column(STREAM_ID),
        exp.column(LINE),
        sql("CAST(NULL AS VARCHAR)").as_(ERROR),
        sql("CAST(NULL AS VARCHAR)").as_(ERROR_DETAILS),
        exp.column(STORED_LINE),
        exp.column(STORED_METADATA),
        exp.column(METADATA),
        *[c.copy() for c in lookups],
    ]
    columns += [
        _initial(name, tracked).as_(tracked_value(i)) for i, name in enumerate(tracked.names)
    ]
    columns += [exp.false().as_(written_flag(i)) for i in range(len(tracked.names))]
    outer = exp.select(*columns).from_(inner.subquery("base", copy=False), copy=False)
    return Frame(select=outer, depth=1, columns=_columns(tracked))


def _stage(frame: Frame, stage: ast.Stage, tracked: ColumnarLabels) -> Frame:
    if isinstance(stage, ast.LineFilter):
        return frame.filter(line_filter_condition(stage, exp.column(LINE)))
    if isinstance(stage, ast.Decolorize):
        return frame.next({LINE: decolorized()})
    if isinstance(stage, ast.Drop | ast.Keep):
        return _drop_keep(frame, stage, tracked)
    if isinstance(stage, ast.JsonParser | ast.LogfmtParser | ast.RegexpParser | ast.PatternParser):
        return _parse(frame, stage, tracked)
    return filtered(frame, compile_label_filter(stage, tracked.value))  # type: ignore[arg-type]


def _drop_keep(frame: Frame, stage: ast.Drop | ast.Keep, tracked: ColumnarLabels) -> Frame:
    changes: dict[str, exp.Expr] = {}
    for index, name in enumerate(tracked.names):
        column = exp.column(tracked_value(index))
        hits: list[exp.Expr] = []
        for item in stage.labels:
            if isinstance(item, str):
                if item == name:
                    hits.append(exp.true())
            elif item.name == name:
                hits.append(matcher_condition(item, column))
        hit = exp.or_(*hits) if hits else exp.false()
        removed = hit if isinstance(stage, ast.Drop) else exp.Not(this=exp.paren(hit))
        changes[tracked_value(index)] = sql(
            "CASE WHEN :r THEN NULL ELSE :c END", r=removed, c=column
        )
    if isinstance(stage, ast.Drop):
        for item in stage.labels:
            name = item if isinstance(item, str) else item.name
            if name in ("__error__", "__error_details__"):
                target = ERROR if name == "__error__" else ERROR_DETAILS
                test = (
                    exp.true()
                    if isinstance(item, str)
                    else matcher_condition(item, exp.column(target))
                )
                changes[target] = sql(
                    "CASE WHEN :t THEN NULL ELSE :c END", t=test, c=exp.column(target)
                )
    return frame.next(changes)


@dataclass
class _Extraction:
    """Columns to compute first (one frame per step, later steps may read earlier ones),
    then each key's value and the error, all over those columns."""

    steps: list[dict[str, exp.Expr]]
    values: dict[str, exp.Expr]
    error: exp.Expr
    details: exp.Expr
    skip_empty_base: bool = False
    """An empty value of a key named like a stream or metadata label is not written (as
    ``Parsed.skip_empty_base``: listed logfmt keys)."""
    order: tuple[str, ...] = ()
    """The keys in the order the parser writes them, when that order is fixed (regexp and
    pattern captures); empty when it follows the line (json, logfmt)."""


def _source_keys(tracked: ColumnarLabels) -> list[str]:
    """The keys a parser must extract: the tracked names and the bases of their
    ``_extracted`` names, except keys whose value cannot reach a tracked label."""
    keys = set(tracked.names)
    keys |= {n[: -len(_SUFFIX)] for n in tracked.names if n.endswith(_SUFFIX)}
    return sorted(key for key in keys if not tracked.shadowed(key))


def _parse(frame: Frame, stage: ast.Stage, tracked: ColumnarLabels) -> Frame:
    # Every heavy expression is computed once, in its own frame, and read as a column after:
    # DuckDB does not share repeated subexpressions across CASE branches.
    extraction = _extract(stage, _source_keys(tracked), tracked)
    carried: dict[str, exp.Expr] = {}
    for step in extraction.steps:
        carried = {**{name: exp.column(name) for name in carried}, **step}
        frame = frame.next(extras=carried)
    parsed = {
        index: value
        for index, name in enumerate(tracked.names)
        if (value := _parsed_for(name, extraction, tracked)) is not None
    }
    frame = frame.next(
        extras={
            **{parsed_value(index): value for index, value in parsed.items()},
            PARSE_ERROR: extraction.error,
            PARSE_DETAILS: extraction.details,
        }
    )
    if tracked.opaque:
        # A frame of its own that makes the parsed values opaque to the filters after it.
        frame = frame.next(
            extras={
                **{parsed_value(i): opaque(exp.column(parsed_value(i))) for i in parsed},
                PARSE_ERROR: exp.column(PARSE_ERROR),
                PARSE_DETAILS: exp.column(PARSE_DETAILS),
            }
        )
    changes: dict[str, exp.Expr] = {}
    for index in parsed:
        written, current, new = written_flag(index), tracked_value(index), parsed_value(index)
        changes[current] = sql(
            # :p mentioned once: a later filter on the label inlines it at each mention.
            "CASE WHEN :w THEN :v ELSE coalesce(:p, :v) END",
            w=exp.column(written),
            v=exp.column(current),
            p=exp.column(new),
        )
        changes[written] = sql(":w OR :p IS NOT NULL", w=exp.column(written), p=exp.column(new))
    pq = exp.column(PARSE_ERROR)
    changes[ERROR] = sql("coalesce(:parse_error, :error)", parse_error=pq, error=exp.column(ERROR))
    changes[ERROR_DETAILS] = sql(
        "CASE WHEN :parse_error IS NOT NULL THEN :parse_details ELSE :error_details END",
        parse_error=pq.copy(),
        parse_details=exp.column(PARSE_DETAILS),
        error_details=exp.column(ERROR_DETAILS),
    )
    return frame.next(changes)


def _parsed_for(name: str, extraction: _Extraction, tracked: ColumnarLabels) -> exp.Expr | None:
    """What a parser writes into label ``name`` (keys clashing with base go to _extracted)."""
    values = extraction.values
    own = values.get(name)
    if name.endswith(_SUFFIX):
        base = name[: -len(_SUFFIX)]
        moved = values.get(base)
        if moved is None:
            return (
                None
                if own is None
                else sql("CASE WHEN :b THEN NULL ELSE :o END", b=tracked.in_base(name), o=own)
            )
        # The key ``base`` moves here when it clashes and the parser wrote it.
        written = "<> ''" if extraction.skip_empty_base else "IS NOT NULL"
        clash = sql(":b AND :m " + written, b=tracked.in_base(base), m=moved.copy())
        if own is None:
            return sql("CASE WHEN :b THEN :m END", b=clash, m=moved)
        order = extraction.order
        if order and order.index(name) < order.index(base):
            # Both keys land here; the first the parser writes wins.
            return sql(
                "CASE WHEN NOT :nb AND :o IS NOT NULL THEN :o WHEN :b THEN :m END",
                nb=tracked.in_base(name),
                o=own,
                b=clash,
                m=moved,
            )
        return sql(
            "CASE WHEN :b THEN :m WHEN NOT :nb THEN :o END",
            b=clash,
            m=moved,
            nb=tracked.in_base(name),
            o=own,
        )
    if own is None:
        return None
    return sql("CASE WHEN :b THEN NULL ELSE :o END", b=tracked.in_base(name), o=own)


def _worth_parsing(label: str, tracked: ColumnarLabels) -> exp.Expr | None:
    """When a parsed ``label`` can matter: a tracked name clashing with a stream or metadata
    label takes the parsed value only as ``<label>_extracted``, so lines whose stream has
    ``label`` need not be searched unless that name is tracked too."""
    if label in tracked.names and label + _SUFFIX not in tracked.names:
        return sql("NOT :b", b=tracked.in_base(label))
    return None


def _extract(stage: ast.Stage, keys: list[str], tracked: ColumnarLabels) -> _Extraction:
    none = sql("CAST(NULL AS VARCHAR)")
    if isinstance(stage, ast.JsonParser):
        return _json(stage, keys)
    if isinstance(stage, ast.LogfmtParser):
        wanted = {e.name: e.expression for e in stage.extractions} or {k: k for k in keys}
        chosen = {label: key for label, key in wanted.items() if label in keys}
        guards: dict[str, exp.Expr] = {}
        for key in set(chosen.values()):
            labels = [label for label, source in chosen.items() if source == key]
            tests = [_worth_parsing(label, tracked) for label in labels]
            if all(test is not None for test in tests):
                guards[key] = exp.or_(*tests)
        keep_empty = stage.keep_empty or bool(stage.extractions)
        steps, found = logfmt_lookup(
            list(dict.fromkeys(chosen.values())), keep_empty=keep_empty, wanted=guards
        )
        values = {
            label: sql("coalesce(:v, '')", v=found[key].copy())
            if stage.extractions
            else found[key].copy()
            for label, key in chosen.items()
        }
        return _Extraction(
            steps, values, none, none.copy(), skip_empty_base=bool(stage.extractions)
        )
    if isinstance(stage, ast.PatternParser):
        stepped = pattern_steps(stage.pattern, keys)
        values = {sanitize(name): value for name, value in stepped.values.items()}
        # The pattern's captures in their order (duplicates are refused when parsing).
        order = tuple(sanitize(n) for n in pattern_names(stage.pattern) if n != "_")
        return _Extraction(stepped.steps, values, none, none.copy(), order=order)
    assert isinstance(stage, ast.RegexpParser)
    regex, names = stage.regex, [n for n in capture_names(stage.regex) if n]
    wanted_groups = [n for n in names if sanitize(n) in keys]
    if not wanted_groups:
        return _Extraction([], {}, none, none.copy())
    groups = group_names(regex)
    extras = {
        REGEX_CAPTURES: sql(
            "CASE WHEN regexp_matches(line, :re) THEN regexp_extract(line, :re, :names) END",
            re=regex,
            names=groups,
        )
    }
    values = {}
    for name in wanted_groups:
        if sanitize(name) not in values:  # two groups named alike: the first wins
            values[sanitize(name)] = sql(
                ":captures[:n]", captures=exp.column(REGEX_CAPTURES), n=name
            )
    order = tuple(dict.fromkeys(sanitize(name) for name in names))
    return _Extraction([extras], values, none, none.copy(), order=order)


def _json(stage: ast.JsonParser, keys: list[str]) -> _Extraction:
    if stage.extractions:
        wanted = tuple(e for e in stage.extractions if e.name in keys)
        parsed = json_paths(wanted)
        values = {
            extraction.name: sql(
                "list_filter(:e, x -> x.key = :k)[1].value",
                e=exp.column(JSON_PATH_PAIRS),
                k=extraction.name,
            )
            for extraction in wanted
        }
        steps = [{JSON_PATH_PAIRS: parsed.entries}] if wanted else []
        return _Extraction(steps, values, parsed.error, parsed.details)
    steps, values = json_lookup(tuple(keys))
    details = exp.column(JSON_ERROR_DETAILS)
    return _Extraction(steps, values, json_error(details), details.copy())

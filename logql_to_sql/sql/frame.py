"""The row frame a log pipeline threads through its stages, and the names of its columns.

Each stage wraps the previous SELECT in a new one that recomputes some columns and may
filter rows. Every column name the compiler gives a frame is a constant (or, for numbered
columns, a function) of this module, so the SQL and the code read the same: ``LABELS`` is
the column ``lbl``. The generic (label map) pipeline carries ``COLUMNS``; the columnar
pipeline (``columnar``) carries one value column per tracked label instead of ``LABELS``.

SQL fragments (``dialect.sql``) take these columns as placeholders bound to
``exp.column(NAME)``, named after the constant (``:labels``, ``:error``), except ``line``
and ``ts``, which they name directly: those are also the names in the source relation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlglot import exp

from logql_to_sql.sql.dialect import sql

__all__ = [
    "BASE_NAMES",
    "COLUMNS",
    "ERROR",
    "ERROR_DETAILS",
    "JSON_ERROR_DETAILS",
    "JSON_EXACT",
    "JSON_LOOKUP",
    "JSON_PATH_PAIRS",
    "JSON_READ_ALIKE",
    "LABELS",
    "LINE",
    "LOGFMT_QUOTE",
    "LOGFMT_TOKENS",
    "METADATA",
    "PARSED_ENTRIES",
    "PARSED_NAMES",
    "PARSE_DETAILS",
    "PARSE_ERROR",
    "REGEX_CAPTURES",
    "RENDERED",
    "SNAPSHOT",
    "STORED_LINE",
    "STORED_METADATA",
    "STREAM_ID",
    "TS",
    "UNWRAPPED",
    "UNWRAPPED_UNIT",
    "Frame",
    "base_frame",
    "entry_labels",
    "group_key",
    "logfmt_after",
    "logfmt_position",
    "logfmt_quick",
    "parsed_value",
    "pattern_at",
    "pattern_rest",
    "pattern_skip",
    "stream_value",
    "tracked_value",
    "with_entries",
    "written_flag",
]

# Entry identity and content ---------------------------------------------------------------

TS = "ts"
"""BIGINT: the entry's timestamp in nanoseconds."""

STREAM_ID = "stream_id"
"""BIGINT: the entry's stream."""

LINE = "line"
"""VARCHAR: the current line (line_format, unpack and decolorize change it)."""

STORED_LINE = "line0"
"""VARCHAR: the line as stored, which stages never change (a log query returns it)."""

STORED_METADATA = "md0"
"""MAP(VARCHAR, VARCHAR): the structured metadata as stored, unchanged."""

METADATA = "md"
"""MAP(VARCHAR, VARCHAR): columnar pipeline only, the metadata its label lookups read."""

# Labels and errors ------------------------------------------------------------------------

LABELS = "lbl"
"""MAP(VARCHAR, VARCHAR): the visible label set, stream + metadata + parsed (LOGQL.md 5.1)."""

BASE_NAMES = "base"
"""VARCHAR[]: names of the stream and metadata labels, for the ``_extracted`` rule."""

PARSED_NAMES = "pn"
"""VARCHAR[]: names written by parsers and label_format so far (the first write wins)."""

ERROR = "err"
"""VARCHAR: the ``__error__`` label, NULL when unset."""

ERROR_DETAILS = "errd"
"""VARCHAR: the ``__error_details__`` label, NULL when unset."""

COLUMNS = (
    TS,
    STREAM_ID,
    LINE,
    LABELS,
    BASE_NAMES,
    PARSED_NAMES,
    ERROR,
    ERROR_DETAILS,
    STORED_LINE,
    STORED_METADATA,
)
"""The columns of the generic pipeline's frame, in order."""

# Columns one stage computes for the next (extras) -----------------------------------------

PARSED_ENTRIES = "pe"
"""LIST(STRUCT(key, value)): what a parser extracted, before it merges into ``LABELS``."""

PARSE_ERROR = "pq"
"""VARCHAR: the error a parser stage sets on this entry (NULL: none)."""

PARSE_DETAILS = "pd"
"""VARCHAR: the details of ``PARSE_ERROR``."""

JSON_LOOKUP = "hj"
"""JSON[]: the values a json parser reads by path, computed once, indexed by position in
the parser's path list (NULL when DuckDB cannot read the line)."""

JSON_READ_ALIKE = "jr"
"""BOOLEAN: whether DuckDB reads the line as the reference's JSON library does."""

JSON_ERROR_DETAILS = "jd"
"""VARCHAR: ``| json``'s error details for the line (NULL: none)."""

JSON_EXACT = "jx"
"""LIST(STRUCT(key, value)): the line's fields read by the engine's exact function, for the
lines where DuckDB's reading would differ (NULL elsewhere)."""

JSON_PATH_PAIRS = "jp"
"""LIST(STRUCT(key, value)): columnar pipeline, what ``| json a="path"`` sets."""

LOGFMT_QUOTE = "lfq"
"""INTEGER: a logfmt key lookup, where the line's first ``"`` is (0: none); a key found
before it starts a token."""

LOGFMT_TOKENS = "lfx"
"""The pairs of a line tokenized as the logfmt decoder reads it, for the lines a quick look
for the wanted keys cannot decide (NULL elsewhere)."""

REGEX_CAPTURES = "rx"
"""STRUCT: columnar regexp and pattern parsers, the groups of the line's match (NULL: no
match)."""

RENDERED = "r"
"""STRUCT(text, error): a Go template's output (line_format, label_format)."""

SNAPSHOT = "snap"
"""MAP(VARCHAR, VARCHAR): label_format's templates read the labels as they were before the
stage (errors included), not as its earlier operations left them."""

UNWRAPPED = "uv"
"""DOUBLE: the sample value taken from the unwrapped label."""

UNWRAPPED_UNIT = "uvu"
"""BIGINT: ``unwrap duration()``, nanoseconds of the unit the unwrapped label ends with
(computed once, before the value, which reads it several times)."""


def stream_value(index: int) -> str:
    """VARCHAR: the value of the ``index``-th stream label looked up per entry (NULL when
    the stream has none); the source rows provide it."""
    return f"sv{index}"


def tracked_value(index: int) -> str:
    """VARCHAR: columnar pipeline, the current value of the ``index``-th tracked label
    (NULL when absent); it takes the place of ``LABELS``."""
    return f"v{index}"


def written_flag(index: int) -> str:
    """BOOLEAN: columnar pipeline, whether a parser has written the ``index``-th tracked
    label (the first write wins)."""
    return f"w{index}"


def parsed_value(index: int) -> str:
    """VARCHAR: columnar pipeline, what the current parser writes into the ``index``-th
    tracked label (NULL: nothing)."""
    return f"p{index}"


def logfmt_position(index: int) -> str:
    """A logfmt key lookup: the line before the ``index``-th wanted key's first ``key=``
    (or, for keys a regex looks for, that regex's match)."""
    return f"lf{index}"


def logfmt_after(index: int) -> str:
    """A logfmt key lookup: the line between the ``index``-th wanted key's first ``key=``
    and its next one (or the line's end)."""
    return f"lf{index}a"


def logfmt_quick(index: int) -> str:
    """A logfmt key lookup: the ``index``-th wanted key's value found without tokenizing."""
    return f"lf{index}v"


def pattern_rest(index: int) -> str:
    """VARCHAR: ``| pattern``, the text from the ``index``-th wanted capture on (NULL once
    a literal before it was missing)."""
    return f"pat_r{index}"


def pattern_at(index: int) -> str:
    """INTEGER: ``| pattern``, where the literal closing the ``index``-th wanted capture
    starts in ``pattern_rest(index)`` (0: missing)."""
    return f"pat_p{index}"


def pattern_skip(index: int) -> str:
    """VARCHAR: ``| pattern``, the text before the ``index``-th wanted capture with the
    literals up to it cut off by a regex (unchanged when one is missing)."""
    return f"pat_s{index}"


def group_key(index: int) -> str:
    """VARCHAR: a range aggregation grouped on columns, the value of its ``index``-th
    ``by`` label."""
    return f"g{index}"


@dataclass(frozen=True, kw_only=True)
class Frame:
    """A SELECT producing the frame columns (plus any named extras)."""

    select: exp.Select
    extras: tuple[str, ...] = ()
    """Columns of this SELECT beyond ``columns``, read by the next stage only."""
    depth: int = 0
    """How many SELECTs are nested below this one (names the next subquery)."""
    columns: tuple[str, ...] = COLUMNS
    """The columns every frame of this pipeline carries."""

    def next(
        self,
        changes: Mapping[str, exp.Expr] | None = None,
        *,
        where: exp.Expr | None = None,
        extras: Mapping[str, exp.Expr] | None = None,
    ) -> Frame:
        """A new frame over this one: ``changes`` replace columns, ``extras`` add columns
        (for the next frame only), ``where`` filters rows."""
        alias = f"f{self.depth}"
        replaced = changes or {}
        # The stage hands its expressions over: aliased in place, not copied.
        columns = [
            replaced.get(name, exp.column(name)).as_(name, copy=False) for name in self.columns
        ]
        added = extras or {}
        columns += [value.as_(name, copy=False) for name, value in added.items()]
        # Frames only ever grow: wrap the previous SELECT in place instead of copying the
        # whole nested tree at every stage (which made compiling quadratic).
        select = exp.select(*columns, copy=False).from_(
            self.select.subquery(alias, copy=False), copy=False
        )
        if where is not None:
            select = select.where(where, copy=False)
        return Frame(select=select, extras=tuple(added), depth=self.depth + 1, columns=self.columns)

    def filter(self, condition: exp.Expr) -> Frame:
        """Only the rows where ``condition`` holds; columns unchanged."""
        return self.next(where=condition)


def with_entries(labels: exp.Expr, entries: exp.Expr) -> exp.Expr:
    """The label map ``labels`` with ``entries`` (a list of unique keys) set: what
    ``map_concat(labels, map_from_entries(entries))`` gives, built as one list, which
    DuckDB does about twice as fast (map_concat costs some 4 us a row)."""
    return sql(
        "CASE WHEN len(:p) = 0 THEN :m ELSE map_from_entries(list_concat(list_filter("
        "map_entries(:m), e -> NOT list_contains(list_transform(:p, y -> y.key), e.key)), :p)) "
        "END",
        m=labels,
        p=entries,
    )


def entry_labels(labels: exp.Expr, metadata: exp.Expr) -> exp.Expr:
    """An entry's labels before its pipeline: the stream ``labels`` joined by the
    structured ``metadata``, a metadata key equal to a stream label becoming
    ``<key>_extracted``."""
    renamed = sql(
        "list_transform(map_entries(:metadata), e -> {'key': CASE WHEN "
        "list_contains(map_keys(:labels), e.key) THEN e.key || '_extracted' ELSE e.key END, "
        "'value': e.value})",
        metadata=metadata,
        labels=labels,
    )
    return sql(
        "CASE WHEN :metadata IS NULL THEN :labels ELSE :merged END",
        metadata=metadata.copy(),
        labels=labels.copy(),
        merged=with_entries(labels.copy(), renamed),
    )


def base_frame(source: exp.Select) -> Frame:
    """The first frame, over ``source`` rows (ts, stream_id, line, metadata, labels).

    ``labels`` are the stream labels.

    Structured metadata joins the stream labels; a metadata key equal to a stream label
    becomes ``<key>_extracted``.
    """
    labels = entry_labels(exp.column("labels"), exp.column("metadata"))
    columns = [
        exp.column(TS),
        exp.column(STREAM_ID),
        exp.column(LINE),
        labels.as_(LABELS),
        sql("map_keys(:labels)", labels=labels.copy()).as_(BASE_NAMES),
        sql("CAST([] AS VARCHAR[])").as_(PARSED_NAMES),
        sql("CAST(NULL AS VARCHAR)").as_(ERROR),
        sql("CAST(NULL AS VARCHAR)").as_(ERROR_DETAILS),
        exp.column("line").as_(STORED_LINE),
        exp.column("metadata").as_(STORED_METADATA),
    ]
    select = exp.select(*columns).from_(source.subquery("src", copy=False), copy=False)
    return Frame(select=select, depth=1)

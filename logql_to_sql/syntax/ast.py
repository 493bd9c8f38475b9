"""The typed, immutable LogQL syntax tree.

Every node is a frozen, slotted dataclass holding tuples (never lists), so nodes are
hashable and compare by value. Durations are integer nanoseconds. Parentheses are not
represented: they only shape the tree.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TypeAlias

__all__ = [
    "LABEL_FILTERS",
    "AndLabelFilter",
    "BinaryOp",
    "BinaryOpType",
    "BytesLabelFilter",
    "Cardinality",
    "CompareOp",
    "Decolorize",
    "Drop",
    "DurationLabelFilter",
    "Expr",
    "Grouping",
    "IpLabelFilter",
    "IpOperand",
    "JsonParser",
    "Keep",
    "LabelExtraction",
    "LabelFilter",
    "LabelFormat",
    "LabelFormatOp",
    "LabelReplace",
    "LineFilter",
    "LineFilterOp",
    "LineFormat",
    "Literal",
    "LogQuery",
    "LogRange",
    "LogfmtParser",
    "MatchOp",
    "Matcher",
    "MetricExpr",
    "NumericLabelFilter",
    "OrLabelFilter",
    "PatternParser",
    "RangeAggregation",
    "RangeOp",
    "RegexpParser",
    "Stage",
    "StreamSelector",
    "StringLabelFilter",
    "Unpack",
    "Unwrap",
    "UnwrapConversion",
    "VectorAggregation",
    "VectorLiteral",
    "VectorMatching",
    "VectorOp",
]


class MatchOp(enum.Enum):
    """Operator of a label matcher."""

    EQ = "="
    NEQ = "!="
    RE = "=~"
    NRE = "!~"


class LineFilterOp(enum.Enum):
    """Operator of a line filter."""

    CONTAINS = "|="
    NOT_CONTAINS = "!="
    MATCH = "|~"
    NOT_MATCH = "!~"
    PATTERN = "|>"
    NOT_PATTERN = "!>"

    @property
    def negative(self) -> bool:
        """True for the operators that keep lines that do not match."""
        return self in (LineFilterOp.NOT_CONTAINS, LineFilterOp.NOT_MATCH, LineFilterOp.NOT_PATTERN)


class CompareOp(enum.Enum):
    """Comparison of a numeric, duration or bytes label filter (``=`` parses as EQ)."""

    EQ = "=="
    NEQ = "!="
    GT = ">"
    GTE = ">="
    LT = "<"
    LTE = "<="


class UnwrapConversion(enum.Enum):
    """Conversion function applied by ``| unwrap``."""

    BYTES = "bytes"
    DURATION = "duration"
    DURATION_SECONDS = "duration_seconds"


class RangeOp(enum.Enum):
    """Range aggregation operators."""

    RATE = "rate"
    RATE_COUNTER = "rate_counter"
    COUNT_OVER_TIME = "count_over_time"
    BYTES_RATE = "bytes_rate"
    BYTES_OVER_TIME = "bytes_over_time"
    AVG_OVER_TIME = "avg_over_time"
    SUM_OVER_TIME = "sum_over_time"
    MIN_OVER_TIME = "min_over_time"
    MAX_OVER_TIME = "max_over_time"
    STDVAR_OVER_TIME = "stdvar_over_time"
    STDDEV_OVER_TIME = "stddev_over_time"
    QUANTILE_OVER_TIME = "quantile_over_time"
    FIRST_OVER_TIME = "first_over_time"
    LAST_OVER_TIME = "last_over_time"
    ABSENT_OVER_TIME = "absent_over_time"


class VectorOp(enum.Enum):
    """Vector aggregation operators."""

    SUM = "sum"
    AVG = "avg"
    MIN = "min"
    MAX = "max"
    COUNT = "count"
    STDDEV = "stddev"
    STDVAR = "stdvar"
    TOPK = "topk"
    BOTTOMK = "bottomk"
    SORT = "sort"
    SORT_DESC = "sort_desc"
    APPROX_TOPK = "approx_topk"


class BinaryOpType(enum.Enum):
    """Binary operators, arithmetic, comparison and set."""

    OR = "or"
    AND = "and"
    UNLESS = "unless"
    EQ = "=="
    NEQ = "!="
    GT = ">"
    GTE = ">="
    LT = "<"
    LTE = "<="
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    POW = "^"

    @property
    def is_set(self) -> bool:
        """True for ``and``, ``or`` and ``unless``."""
        return self in (BinaryOpType.OR, BinaryOpType.AND, BinaryOpType.UNLESS)

    @property
    def is_comparison(self) -> bool:
        """True for ``== != > >= < <=``."""
        return self.value in ("==", "!=", ">", ">=", "<", "<=")


class Cardinality(enum.Enum):
    """Vector matching cardinality: none, ``group_left`` or ``group_right``."""

    ONE_TO_ONE = "one-to-one"
    MANY_TO_ONE = "group_left"
    ONE_TO_MANY = "group_right"


# ---------------------------------------------------------------- selectors


@dataclass(frozen=True, slots=True)
class Matcher:
    """A label matcher ``name op "value"``; ``value`` is already unescaped."""

    name: str
    op: MatchOp
    value: str


@dataclass(frozen=True, slots=True)
class StreamSelector:
    """A stream selector ``{a="b", c=~"d"}``."""

    matchers: tuple[Matcher, ...]


# ---------------------------------------------------------------- line filters


@dataclass(frozen=True, slots=True)
class IpOperand:
    """An ``ip("...")`` operand of a line filter; ``pattern`` is the quoted text."""

    pattern: str


@dataclass(frozen=True, slots=True)
class LineFilter:
    """A line filter; ``|= "a" or "b"`` is one filter with two operands."""

    op: LineFilterOp
    operands: tuple[str | IpOperand, ...]


# ---------------------------------------------------------------- label filters


@dataclass(frozen=True, slots=True)
class StringLabelFilter:
    """A label filter with a string matcher: ``level="error"``, ``x=~"a.*"``."""

    matcher: Matcher


@dataclass(frozen=True, slots=True)
class NumericLabelFilter:
    """A numeric comparison: ``status >= 500``."""

    name: str
    op: CompareOp
    value: float


@dataclass(frozen=True, slots=True)
class DurationLabelFilter:
    """A duration comparison: ``took > 1m30s`` (value in nanoseconds)."""

    name: str
    op: CompareOp
    value_ns: int


@dataclass(frozen=True, slots=True)
class BytesLabelFilter:
    """A byte-size comparison: ``size > 1KiB`` (value in bytes)."""

    name: str
    op: CompareOp
    value: int


@dataclass(frozen=True, slots=True)
class IpLabelFilter:
    """An IP filter on a label: ``addr = ip("10.0.0.0/8")`` (op is EQ or NEQ)."""

    name: str
    op: MatchOp
    pattern: str


@dataclass(frozen=True, slots=True)
class AndLabelFilter:
    """Both filters must pass (``and``, ``,`` or juxtaposition)."""

    left: LabelFilter
    right: LabelFilter


@dataclass(frozen=True, slots=True)
class OrLabelFilter:
    """Either filter must pass."""

    left: LabelFilter
    right: LabelFilter


LabelFilter: TypeAlias = (
    StringLabelFilter
    | NumericLabelFilter
    | DurationLabelFilter
    | BytesLabelFilter
    | IpLabelFilter
    | AndLabelFilter
    | OrLabelFilter
)

LABEL_FILTERS = (
    StringLabelFilter,
    NumericLabelFilter,
    DurationLabelFilter,
    BytesLabelFilter,
    IpLabelFilter,
    AndLabelFilter,
    OrLabelFilter,
)
"""The label filter node types, for ``isinstance`` checks."""


# ---------------------------------------------------------------- parsers and formatters


@dataclass(frozen=True, slots=True)
class LabelExtraction:
    """One ``name="expression"`` parameter of ``json``/``logfmt`` (bare ``name`` = itself)."""

    name: str
    expression: str


@dataclass(frozen=True, slots=True)
class JsonParser:
    """``| json`` with optional extractions."""

    extractions: tuple[LabelExtraction, ...] = ()


@dataclass(frozen=True, slots=True)
class LogfmtParser:
    """``| logfmt`` with its flags and optional extractions."""

    strict: bool = False
    keep_empty: bool = False
    extractions: tuple[LabelExtraction, ...] = ()


@dataclass(frozen=True, slots=True)
class RegexpParser:
    """``| regexp "re"`` (named groups become labels)."""

    regex: str


@dataclass(frozen=True, slots=True)
class PatternParser:
    """``| pattern "<a> <b>"``."""

    pattern: str


@dataclass(frozen=True, slots=True)
class Unpack:
    """``| unpack``."""


@dataclass(frozen=True, slots=True)
class LineFormat:
    """``| line_format "template"``."""

    template: str


@dataclass(frozen=True, slots=True)
class LabelFormatOp:
    """One ``label_format`` operation: a rename ``a=b`` or a template ``a="t"``."""

    name: str
    value: str
    template: bool


@dataclass(frozen=True, slots=True)
class LabelFormat:
    """``| label_format a=b, c="{{.x}}"``."""

    operations: tuple[LabelFormatOp, ...]


@dataclass(frozen=True, slots=True)
class Drop:
    """``| drop a, b="v"``: bare names or matchers."""

    labels: tuple[str | Matcher, ...]


@dataclass(frozen=True, slots=True)
class Keep:
    """``| keep a, b="v"``: bare names or matchers."""

    labels: tuple[str | Matcher, ...]


@dataclass(frozen=True, slots=True)
class Decolorize:
    """``| decolorize``."""


Stage: TypeAlias = (
    LineFilter
    | LabelFilter
    | JsonParser
    | LogfmtParser
    | RegexpParser
    | PatternParser
    | Unpack
    | LineFormat
    | LabelFormat
    | Drop
    | Keep
    | Decolorize
)


@dataclass(frozen=True, slots=True)
class LogQuery:
    """A log query: a selector and its pipeline stages."""

    selector: StreamSelector
    stages: tuple[Stage, ...] = ()


# ---------------------------------------------------------------- metric queries


@dataclass(frozen=True, slots=True)
class Unwrap:
    """``| unwrap [conv(]label[)]`` plus the label filters that follow it."""

    label: str
    conversion: UnwrapConversion | None = None
    post_filters: tuple[LabelFilter, ...] = ()


@dataclass(frozen=True, slots=True)
class LogRange:
    """The range argument of a range aggregation: selector, pipeline, unwrap, window."""

    selector: StreamSelector
    stages: tuple[Stage, ...]
    range_ns: int
    offset_ns: int = 0
    unwrap: Unwrap | None = None

    @property
    def query(self) -> LogQuery:
        """The log query (selector and pipeline) this range reads."""
        return LogQuery(self.selector, self.stages)


@dataclass(frozen=True, slots=True)
class Grouping:
    """``by (a, b)`` or ``without (a, b)``."""

    labels: tuple[str, ...]
    without: bool = False


@dataclass(frozen=True, slots=True)
class RangeAggregation:
    """``rate(...)``, ``quantile_over_time(0.9, ...) by (x)`` and friends."""

    op: RangeOp
    range: LogRange
    param: float | None = None
    grouping: Grouping | None = None
    param_text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class VectorAggregation:
    """``sum by (a) (...)``, ``topk(5, ...)`` and friends (param is an integer k)."""

    op: VectorOp
    expr: Expr
    param: int | None = None
    grouping: Grouping | None = None
    param_text: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class VectorMatching:
    """``on``/``ignoring`` label list and ``group_left``/``group_right`` include list."""

    on: bool
    labels: tuple[str, ...] = ()
    cardinality: Cardinality = Cardinality.ONE_TO_ONE
    include: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class BinaryOp:
    """``left op [bool] [matching] right``."""

    op: BinaryOpType
    left: Expr
    right: Expr
    return_bool: bool = False
    matching: VectorMatching | None = None


@dataclass(frozen=True, slots=True)
class Literal:
    """A number literal (scalar); ``1+1`` is folded to ``Literal(2.0)``."""

    value: float


@dataclass(frozen=True, slots=True)
class VectorLiteral:
    """``vector(2)``: one series without labels."""

    value: float


@dataclass(frozen=True, slots=True)
class LabelReplace:
    """``label_replace(expr, "dst", "replacement", "src", "regex")``."""

    expr: Expr
    dst: str
    replacement: str
    src: str
    regex: str


MetricExpr: TypeAlias = (
    RangeAggregation | VectorAggregation | BinaryOp | Literal | VectorLiteral | LabelReplace
)
Expr: TypeAlias = LogQuery | MetricExpr

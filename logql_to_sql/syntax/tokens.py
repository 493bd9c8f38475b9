"""Token types and the :class:`Token` record produced by the lexer.

Members are declared in the order Loki's grammar declares its tokens, because that
order decides how the ``expecting A or B`` list of a syntax error is sorted. A
member's value is the name used in error messages.
"""

from __future__ import annotations

import enum

__all__ = ["FUNCTIONS", "KEYWORDS", "RANGE_OPS", "VECTOR_OPS", "Token", "TokenType"]


class TokenType(enum.Enum):
    """Every kind of token; the value is the name shown in syntax errors."""

    BYTES = "BYTES"
    IDENTIFIER = "IDENTIFIER"
    STRING = "STRING"
    NUMBER = "NUMBER"
    FUNCTION_FLAG = "FUNCTION_FLAG"
    DURATION = "DURATION"
    RANGE = "RANGE"
    EQ = "="
    RE = "=~"
    NRE = "!~"
    NPA = "!>"
    L_BRACE = "{"
    R_BRACE = "}"
    R_BRACKET = "]"
    COMMA = ","
    DOT = "."
    PIPE_MATCH = "|~"
    PIPE_EXACT = "|="
    PIPE_PATTERN = "|>"
    L_PAREN = "("
    R_PAREN = ")"
    BY = "by"
    WITHOUT = "without"
    COUNT_OVER_TIME = "COUNT_OVER_TIME"
    RATE = "RATE"
    RATE_COUNTER = "RATE_COUNTER"
    SUM = "SUM"
    SORT = "SORT"
    SORT_DESC = "SORT_DESC"
    AVG = "AVG"
    MAX = "MAX"
    MIN = "MIN"
    COUNT = "COUNT"
    STDDEV = "STDDEV"
    STDVAR = "STDVAR"
    BOTTOMK = "BOTTOMK"
    TOPK = "TOPK"
    APPROX_TOPK = "APPROX_TOPK"
    BYTES_OVER_TIME = "BYTES_OVER_TIME"
    BYTES_RATE = "BYTES_RATE"
    BOOL = "bool"
    JSON = "json"
    REGEXP = "regexp"
    LOGFMT = "logfmt"
    PIPE = "|"
    LINE_FMT = "line_format"
    LABEL_FMT = "label_format"
    UNWRAP = "unwrap"
    AVG_OVER_TIME = "AVG_OVER_TIME"
    SUM_OVER_TIME = "SUM_OVER_TIME"
    MIN_OVER_TIME = "MIN_OVER_TIME"
    MAX_OVER_TIME = "MAX_OVER_TIME"
    STDVAR_OVER_TIME = "STDVAR_OVER_TIME"
    STDDEV_OVER_TIME = "STDDEV_OVER_TIME"
    QUANTILE_OVER_TIME = "QUANTILE_OVER_TIME"
    BYTES_CONV = "BYTES_CONV"
    DURATION_CONV = "DURATION_CONV"
    DURATION_SECONDS_CONV = "DURATION_SECONDS_CONV"
    FIRST_OVER_TIME = "FIRST_OVER_TIME"
    LAST_OVER_TIME = "LAST_OVER_TIME"
    ABSENT_OVER_TIME = "ABSENT_OVER_TIME"
    VECTOR = "VECTOR"
    LABEL_REPLACE = "LABEL_REPLACE"
    UNPACK = "unpack"
    OFFSET = "offset"
    PATTERN = "pattern"
    IP = "ip"
    ON = "on"
    IGNORING = "ignoring"
    GROUP_LEFT = "group_left"
    GROUP_RIGHT = "group_right"
    DECOLORIZE = "decolorize"
    DROP = "drop"
    KEEP = "keep"
    OR = "or"
    AND = "and"
    UNLESS = "unless"
    CMP_EQ = "=="
    NEQ = "!="
    LT = "<"
    LTE = "<="
    GT = ">"
    GTE = ">="
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    POW = "^"
    EOF = "$end"


_T = TokenType

#: Reserved words (matched case-insensitively, never identifiers).
KEYWORDS: dict[str, TokenType] = {
    t.value: t
    for t in (
        _T.BY, _T.WITHOUT, _T.BOOL, _T.ON, _T.IGNORING, _T.GROUP_LEFT, _T.GROUP_RIGHT,
        _T.OFFSET, _T.OR, _T.AND, _T.UNLESS, _T.UNWRAP, _T.JSON, _T.LOGFMT, _T.REGEXP,
        _T.UNPACK, _T.PATTERN, _T.LINE_FMT, _T.LABEL_FMT, _T.DECOLORIZE, _T.DROP, _T.KEEP,
    )
}  # fmt: skip

#: Range aggregation operator names.
RANGE_OPS: dict[str, TokenType] = {
    "rate": _T.RATE, "rate_counter": _T.RATE_COUNTER, "count_over_time": _T.COUNT_OVER_TIME,
    "bytes_rate": _T.BYTES_RATE, "bytes_over_time": _T.BYTES_OVER_TIME,
    "avg_over_time": _T.AVG_OVER_TIME, "sum_over_time": _T.SUM_OVER_TIME,
    "min_over_time": _T.MIN_OVER_TIME, "max_over_time": _T.MAX_OVER_TIME,
    "stdvar_over_time": _T.STDVAR_OVER_TIME, "stddev_over_time": _T.STDDEV_OVER_TIME,
    "quantile_over_time": _T.QUANTILE_OVER_TIME, "first_over_time": _T.FIRST_OVER_TIME,
    "last_over_time": _T.LAST_OVER_TIME, "absent_over_time": _T.ABSENT_OVER_TIME,
}  # fmt: skip

#: Vector aggregation operator names.
VECTOR_OPS: dict[str, TokenType] = {
    "sum": _T.SUM, "avg": _T.AVG, "min": _T.MIN, "max": _T.MAX, "count": _T.COUNT,
    "stddev": _T.STDDEV, "stdvar": _T.STDVAR, "topk": _T.TOPK, "bottomk": _T.BOTTOMK,
    "sort": _T.SORT, "sort_desc": _T.SORT_DESC, "approx_topk": _T.APPROX_TOPK,
}  # fmt: skip

#: Words that are keywords only when followed by ``(`` (or ``by``/``without`` ``(``).
FUNCTIONS: dict[str, TokenType] = {
    **RANGE_OPS,
    **VECTOR_OPS,
    "vector": _T.VECTOR,
    "label_replace": _T.LABEL_REPLACE,
    "bytes": _T.BYTES_CONV,
    "duration": _T.DURATION_CONV,
    "duration_seconds": _T.DURATION_SECONDS_CONV,
    "ip": _T.IP,
}


class Token:
    """One lexed token with its position (1-based line and column, 0-based offsets).

    ``value`` holds the decoded payload: the unescaped text of a STRING, nanoseconds of a
    DURATION or RANGE, the byte count of BYTES; otherwise the raw text.
    """

    __slots__ = ("col", "end", "line", "start", "text", "type", "value")

    def __init__(
        self,
        type: TokenType,
        text: str,
        value: str | int,
        line: int,
        col: int,
        start: int,
        end: int,
    ) -> None:
        self.type = type
        self.text = text
        self.value = value
        self.line = line
        self.col = col
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Token({self.type.name}, {self.text!r}, {self.line}:{self.col})"

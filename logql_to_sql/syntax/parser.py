"""The LogQL parser: tokens -> :mod:`logql_to_sql.syntax.ast` nodes.

A hand-written recursive-descent parser with one ``_parse_<rule>`` per grammar rule
(LOGQL.md section 2); binary operators use precedence climbing. Scalar-only
arithmetic is folded while parsing, as Loki does. Syntax errors follow the format of
Loki's yacc parser (``syntax error: unexpected X, expecting A or B``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from logql_to_sql.errors import ParseError
from logql_to_sql.syntax import ast as a
from logql_to_sql.syntax.cursor import parse_number
from logql_to_sql.syntax.lexer import MAX_INPUT_SIZE
from logql_to_sql.syntax.stage_rules import PipelineParser
from logql_to_sql.syntax.tokens import RANGE_OPS, VECTOR_OPS, TokenType

__all__ = ["Parser", "parse_expr"]

T = TokenType

#: token -> (precedence, operator); all left-associative except ``^``.
BINARY_OPS: dict[TokenType, tuple[int, a.BinaryOpType]] = {
    T.OR: (1, a.BinaryOpType.OR), T.AND: (2, a.BinaryOpType.AND),
    T.UNLESS: (2, a.BinaryOpType.UNLESS), T.CMP_EQ: (3, a.BinaryOpType.EQ),
    T.NEQ: (3, a.BinaryOpType.NEQ), T.GT: (3, a.BinaryOpType.GT),
    T.GTE: (3, a.BinaryOpType.GTE), T.LT: (3, a.BinaryOpType.LT),
    T.LTE: (3, a.BinaryOpType.LTE), T.ADD: (4, a.BinaryOpType.ADD),
    T.SUB: (4, a.BinaryOpType.SUB), T.MUL: (5, a.BinaryOpType.MUL),
    T.DIV: (5, a.BinaryOpType.DIV), T.MOD: (5, a.BinaryOpType.MOD),
    T.POW: (6, a.BinaryOpType.POW),
}  # fmt: skip
RANGE_OP_NODES = {t: a.RangeOp(name) for name, t in RANGE_OPS.items()}
VECTOR_OP_NODES = {t: a.VectorOp(name) for name, t in VECTOR_OPS.items()}
UNWRAP_CONVERSIONS = {
    T.BYTES_CONV: a.UnwrapConversion.BYTES,
    T.DURATION_CONV: a.UnwrapConversion.DURATION,
    T.DURATION_SECONDS_CONV: a.UnwrapConversion.DURATION_SECONDS,
}
_GROUP_CARD = {T.GROUP_LEFT: a.Cardinality.MANY_TO_ONE, T.GROUP_RIGHT: a.Cardinality.ONE_TO_MANY}

_RangeBody = a.LogRange | tuple[a.StreamSelector, tuple[a.Stage, ...], a.Unwrap | None]


class Parser(PipelineParser):
    """Parses one query string; call :meth:`parse`."""

    def _primary_parsers(self) -> dict[TokenType, Callable[[], a.Expr]]:
        table: dict[TokenType, Callable[[], a.Expr]] = {
            T.L_BRACE: self._parse_log_query,
            T.L_PAREN: self._parse_paren,
            T.NUMBER: self._parse_literal,
            T.ADD: self._parse_literal,
            T.SUB: self._parse_literal,
            T.VECTOR: self._parse_vector,
            T.LABEL_REPLACE: self._parse_label_replace,
        }
        table.update(dict.fromkeys(RANGE_OP_NODES, self._parse_range_aggregation))
        table.update(dict.fromkeys(VECTOR_OP_NODES, self._parse_vector_aggregation))
        return table

    def parse(self) -> a.Expr:
        """Parse the whole input as one query."""
        expr = self._parse_expr()
        if self.cur.type is not T.EOF:
            raise self._unexpected()
        return expr

    # ------------------------------------------------------------ expressions

    def _parse_expr(self, min_prec: int = 1) -> a.Expr:
        self._deeper()
        try:
            return self._parse_binary(min_prec)
        finally:
            self._depth -= 1

    def _parse_binary(self, min_prec: int) -> a.Expr:
        left = self._parse_primary()
        chained = 0
        try:
            while True:
                entry = BINARY_OPS.get(self.cur.type)
                if entry is None or entry[0] < min_prec:
                    return left
                chained += 1
                self._deeper()  # each operator nests the tree built so far one level
                left = self._parse_operation(entry, left)
        finally:
            self._depth -= chained

    def _parse_operation(self, entry: tuple[int, a.BinaryOpType], left: a.Expr) -> a.Expr:
        prec, op = entry
        self._advance()
        return_bool = self._match(T.BOOL) is not None
        matching = self._parse_vector_matching()
        right = self._parse_expr(prec if op is a.BinaryOpType.POW else prec + 1)
        return make_binary(op, left, right, return_bool, matching)

    def _parse_metric(self) -> a.Expr:
        expr = self._parse_expr()
        if isinstance(expr, a.LogQuery):
            raise self._unexpected()
        return expr

    def _parse_primary(self) -> a.Expr:
        handler = self._primary_parsers().get(self.cur.type)
        if handler is None:
            raise self._unexpected()
        return handler()

    def _parse_paren(self) -> a.Expr:
        self._expect(T.L_PAREN)
        inner = self._parse_expr()
        self._expect_any(T.R_PAREN)
        return inner

    def _parse_log_query(self) -> a.LogQuery:
        selector = self._parse_selector()
        return a.LogQuery(selector, self._parse_stages())

    def _parse_literal(self) -> a.Literal:
        sign = self._match_set(frozenset({T.ADD, T.SUB}))
        value = parse_number(self._expect(T.NUMBER).text)
        return a.Literal(-value if sign is not None and sign.type is T.SUB else value)

    def _parse_vector(self) -> a.VectorLiteral:
        self._advance()
        self._expect(T.L_PAREN)
        value = parse_number(self._expect(T.NUMBER).text)
        self._expect(T.R_PAREN)
        return a.VectorLiteral(value)

    def _parse_label_replace(self) -> a.LabelReplace:
        self._advance()
        self._expect(T.L_PAREN)
        expr = self._parse_metric()
        args = []
        for _ in range(4):
            self._expect(T.COMMA)
            args.append(str(self._expect(T.STRING).value))
        self._expect_any(T.R_PAREN)
        return a.LabelReplace(expr, *args)

    def _parse_vector_matching(self) -> a.VectorMatching | None:
        tok = self._match_set(frozenset({T.ON, T.IGNORING}))
        if tok is None:
            return None
        labels = self._parse_label_list()
        card = a.Cardinality.ONE_TO_ONE
        include: tuple[str, ...] = ()
        group = self._match_set(frozenset(_GROUP_CARD))
        if group is not None:
            card = _GROUP_CARD[group.type]
            if self.cur.type is T.L_PAREN:
                include = self._parse_label_list()
        if tok.type is T.IGNORING and not labels and card is a.Cardinality.ONE_TO_ONE:
            return None
        return a.VectorMatching(tok.type is T.ON, labels, card, include)

    def _parse_label_list(self) -> tuple[str, ...]:
        self._expect(T.L_PAREN)
        if self._match(T.R_PAREN):
            return ()
        labels = [self._expect(T.IDENTIFIER, T.IDENTIFIER, T.R_PAREN).text]
        while not self._match(T.R_PAREN):
            self._expect(T.COMMA, T.COMMA, T.R_PAREN)
            labels.append(self._expect(T.IDENTIFIER).text)
        return tuple(labels)

    def _parse_grouping(self) -> a.Grouping | None:
        tok = self._match_set(frozenset({T.BY, T.WITHOUT}))
        if tok is None:
            return None
        return a.Grouping(self._parse_label_list(), tok.type is T.WITHOUT)

    # ------------------------------------------------------------ aggregations

    def _parse_range_aggregation(self) -> a.RangeAggregation:
        op = RANGE_OP_NODES[self._advance().type]
        self._expect(T.L_PAREN)
        param_text = None
        if self.cur.type is T.NUMBER:
            param_text = self._advance().text
            self._expect(T.COMMA)
        elif self.cur.type not in (T.L_BRACE, T.L_PAREN):
            raise self._unexpected(T.NUMBER, T.L_BRACE, T.L_PAREN)
        log_range = self._parse_log_range()
        self._expect_any(T.R_PAREN)
        grouping = self._parse_grouping()
        param = _param_float(param_text)
        return a.RangeAggregation(op, log_range, param, grouping, param_text)

    def _parse_vector_aggregation(self) -> a.VectorAggregation:
        op = VECTOR_OP_NODES[self._advance().type]
        grouping = self._parse_grouping()
        self._expect(T.L_PAREN)
        param_text = None
        if self.cur.type is T.NUMBER and self._peek() is T.COMMA:
            param_text = self._advance().text
            self._advance()
        expr = self._parse_metric()
        self._expect_any(T.R_PAREN)
        if grouping is None:
            grouping = self._parse_grouping()
        if grouping == a.Grouping(()):
            grouping = None  # `by ()` groups like no clause at all
        param = _param_int(param_text)
        return a.VectorAggregation(op, expr, param, grouping, param_text)

    # ------------------------------------------------------------ log ranges

    def _parse_log_range(self) -> a.LogRange:
        body = self._parse_range_body()
        if isinstance(body, a.LogRange):
            return body
        raise self._unexpected(T.RANGE)

    def _parse_range_body(self) -> _RangeBody:
        if self._match(T.L_PAREN):
            inner = self._parse_range_body()
            self._expect_any(T.R_PAREN)
            if isinstance(inner, a.LogRange) or not self._at(T.RANGE):
                return inner
            return self._finish_range(*inner)
        selector = self._parse_selector()
        if self._at(T.RANGE):
            range_ns, offset_ns = self._parse_range_offset()
            stages = self._parse_stages()
            unwrap = self._parse_unwrap()
            return a.LogRange(selector, stages, range_ns, offset_ns, unwrap)
        stages = self._parse_stages()
        unwrap = self._parse_unwrap()
        if self._at(T.RANGE):
            return self._finish_range(selector, stages, unwrap)
        return (selector, stages, unwrap)

    def _finish_range(
        self, selector: a.StreamSelector, stages: tuple[a.Stage, ...], unwrap: a.Unwrap | None
    ) -> a.LogRange:
        range_ns, offset_ns = self._parse_range_offset()
        return a.LogRange(selector, stages, range_ns, offset_ns, unwrap)

    def _parse_range_offset(self) -> tuple[int, int]:
        range_ns = int(self._expect(T.RANGE).value)
        offset_ns = 0
        if self._match(T.OFFSET):
            offset_ns = int(self._expect(T.DURATION).value)
        return range_ns, offset_ns

    def _parse_unwrap(self) -> a.Unwrap | None:
        if not (self.cur.type is T.PIPE and self._peek() is T.UNWRAP):
            return None
        self._advance()
        self._advance()
        conversion = UNWRAP_CONVERSIONS.get(self.cur.type)
        if conversion is not None:
            self._advance()
            self._expect(T.L_PAREN)
            label = self._expect(T.IDENTIFIER).text
            self._expect(T.R_PAREN)
        else:
            label = self._expect(T.IDENTIFIER, T.IDENTIFIER, *UNWRAP_CONVERSIONS).text
        filters = []
        while self._match(T.PIPE):
            filters.append(self._parse_label_filter_expr())
        return a.Unwrap(label, conversion, tuple(filters))


def _param_float(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return parse_number(text)
    except ParseError:
        return math.nan


def _param_int(text: str | None) -> int | None:
    if text is None:
        return None
    body = text[1:] if text[:1] in "+-" else text
    return int(text) if body.isascii() and body.isdigit() else None


def make_binary(
    op: a.BinaryOpType,
    left: a.Expr,
    right: a.Expr,
    return_bool: bool = False,
    matching: a.VectorMatching | None = None,
) -> a.Expr:
    """Build a binary node, folding literal-only arithmetic and comparisons."""
    if isinstance(left, a.Literal) and isinstance(right, a.Literal) and not op.is_set:
        return a.Literal(fold(op, left.value, right.value))
    return a.BinaryOp(op, left, right, return_bool, matching)


def fold(op: a.BinaryOpType, x: float, y: float) -> float:
    """Evaluate a scalar binary operation with Loki's semantics (x/0 and x%0 are NaN)."""
    B = a.BinaryOpType
    if op.is_comparison:
        results = {
            B.EQ: x == y, B.NEQ: x != y, B.GT: x > y, B.GTE: x >= y, B.LT: x < y, B.LTE: x <= y,
        }  # fmt: skip
        return 1.0 if results[op] else 0.0
    if op in (B.DIV, B.MOD) and y == 0:
        return math.nan
    if op is B.POW:
        return go_pow(x, y)
    arith: dict[a.BinaryOpType, Callable[[float, float], float]] = {
        B.ADD: lambda p, q: p + q,
        B.SUB: lambda p, q: p - q,
        B.MUL: lambda p, q: p * q,
        B.DIV: lambda p, q: p / q,
        B.MOD: math.fmod,
    }
    try:
        return arith[op](x, y)
    except (ValueError, OverflowError):
        return math.nan


def go_pow(x: float, y: float) -> float:
    """``math.Pow`` with Go's special cases (``0^-2`` is +Inf, ``(-1)^0.5`` is NaN)."""
    if y == 0:
        return 1.0
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf if x > 0 or (float(y).is_integer() and y % 2 == 0) else -math.inf
    except ValueError:
        if x == 0:
            odd = float(y).is_integer() and y % 2 == 1
            return math.copysign(math.inf, x) if odd else math.inf
        return math.nan


def parse_expr(text: str) -> a.Expr:
    """Parse ``text`` into an AST without semantic validation."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size >= MAX_INPUT_SIZE:
        raise ParseError(f"input size too long ({size} > {MAX_INPUT_SIZE})")
    return Parser(text).parse()

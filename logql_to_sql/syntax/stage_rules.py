"""Parser rules for stream selectors and log pipeline stages (mixed into the Parser)."""

from __future__ import annotations

from collections.abc import Callable

from logql_to_sql.errors import ParseError
from logql_to_sql.syntax import ast as a
from logql_to_sql.syntax.cursor import Cursor, parse_number
from logql_to_sql.syntax.tokens import TokenType

__all__ = ["PipelineParser"]

T = TokenType

MATCH_OPS: dict[TokenType, a.MatchOp] = {
    T.EQ: a.MatchOp.EQ, T.NEQ: a.MatchOp.NEQ, T.RE: a.MatchOp.RE, T.NRE: a.MatchOp.NRE,
}  # fmt: skip
LINE_FILTER_OPS: dict[TokenType, a.LineFilterOp] = {
    T.PIPE_EXACT: a.LineFilterOp.CONTAINS, T.NEQ: a.LineFilterOp.NOT_CONTAINS,
    T.PIPE_MATCH: a.LineFilterOp.MATCH, T.NRE: a.LineFilterOp.NOT_MATCH,
    T.PIPE_PATTERN: a.LineFilterOp.PATTERN, T.NPA: a.LineFilterOp.NOT_PATTERN,
}  # fmt: skip
COMPARE_OPS: dict[TokenType, a.CompareOp] = {
    T.EQ: a.CompareOp.EQ, T.CMP_EQ: a.CompareOp.EQ, T.NEQ: a.CompareOp.NEQ,
    T.GT: a.CompareOp.GT, T.GTE: a.CompareOp.GTE, T.LT: a.CompareOp.LT, T.LTE: a.CompareOp.LTE,
}  # fmt: skip
LOGFMT_FLAGS = {"--strict": "strict", "--keep-empty": "keep_empty"}
_LF_START = frozenset({T.IDENTIFIER, T.L_PAREN})
# Label-filter connectives; juxtaposition (None) and "," have no yacc precedence.
_LF_PREC: dict[TokenType | None, int] = {T.OR: 1, T.AND: 2}


MAX_DEPTH = 64
"""Deepest expression accepted: nested parentheses, aggregations, chained binary
operators and label-filter connectives. The reference's generated parser has no bound;
ours is recursive, as are the printer and the compiler, so a deeper query gets a parse
error instead of exhausting the stack (compile time also grows with the depth)."""


class PipelineParser(Cursor):
    """Selectors, line filters, parsers, formatters and label filters."""

    _depth = 0

    def _deeper(self, levels: int = 1) -> None:
        """Enter ``levels`` more levels of nesting; a parse error past :data:`MAX_DEPTH`."""
        self._depth += levels
        if self._depth > MAX_DEPTH:
            tok = self.cur
            raise ParseError(
                f"syntax error: expression nested too deeply (more than {MAX_DEPTH} levels)",
                tok.line,
                tok.col,
                tok.start,
                tok.end,
            )

    def _stage_parsers(self) -> dict[TokenType, Callable[[], a.Stage]]:
        return {
            T.JSON: self._parse_json,
            T.LOGFMT: self._parse_logfmt,
            T.REGEXP: lambda: a.RegexpParser(self._string_after()),
            T.PATTERN: lambda: a.PatternParser(self._string_after()),
            T.UNPACK: lambda: self._keyword(a.Unpack()),
            T.DECOLORIZE: lambda: self._keyword(a.Decolorize()),
            T.LINE_FMT: lambda: a.LineFormat(self._string_after()),
            T.LABEL_FMT: self._parse_label_format,
            T.DROP: lambda: a.Drop(self._parse_drop_keep()),
            T.KEEP: lambda: a.Keep(self._parse_drop_keep()),
        }

    # ------------------------------------------------------------ selector

    def _parse_selector(self) -> a.StreamSelector:
        self._expect(T.L_BRACE)
        if self._match(T.R_BRACE):
            return a.StreamSelector(())
        matchers = [self._parse_matcher(T.R_BRACE)]
        while not self._match(T.R_BRACE):
            self._expect(T.COMMA, T.R_BRACE, T.COMMA)
            matchers.append(self._parse_matcher())
        return a.StreamSelector(tuple(matchers))

    def _parse_matcher(self, *alternatives: TokenType) -> a.Matcher:
        name = self._expect(T.IDENTIFIER, T.IDENTIFIER, *alternatives).text
        return self._parse_matcher_rest(name)

    def _parse_matcher_rest(self, name: str) -> a.Matcher:
        op_tok = self._match_set(MATCH_OPS)
        if op_tok is None:
            raise self._unexpected(*MATCH_OPS)
        value = self._expect(T.STRING).value
        return a.Matcher(name, MATCH_OPS[op_tok.type], str(value))

    # ------------------------------------------------------------ pipeline

    def _at_stage(self) -> bool:
        t = self.cur.type
        return t in LINE_FILTER_OPS or (t is T.PIPE and self._peek() is not T.UNWRAP)

    def _parse_stages(self) -> tuple[a.Stage, ...]:
        stages: list[a.Stage] = []
        while self._at_stage():
            stages.append(self._parse_stage())
        return tuple(stages)

    def _parse_stage(self) -> a.Stage:
        op_tok = self._match_set(LINE_FILTER_OPS)
        if op_tok is not None:
            return self._parse_line_filter(LINE_FILTER_OPS[op_tok.type])
        self._expect(T.PIPE)
        handler = self._stage_parsers().get(self.cur.type)
        if handler is not None:
            return handler()
        return self._parse_label_filter_expr()

    def _parse_line_filter(self, op: a.LineFilterOp) -> a.LineFilter:
        operands = [self._parse_line_filter_operand()]
        while self._match(T.OR):
            operands.append(self._parse_line_filter_operand())
        return a.LineFilter(op, tuple(operands))

    def _parse_line_filter_operand(self) -> str | a.IpOperand:
        tok = self._match(T.STRING)
        if tok is not None:
            return str(tok.value)
        if self.cur.type is not T.IP:
            raise self._unexpected(T.STRING, T.IP)
        return a.IpOperand(self._parse_ip_call())

    def _parse_ip_call(self) -> str:
        self._expect(T.IP)
        self._expect(T.L_PAREN)
        value = str(self._expect(T.STRING).value)
        self._expect(T.R_PAREN)
        return value

    def _keyword(self, node: a.Stage) -> a.Stage:
        self._advance()
        return node

    def _string_after(self) -> str:
        self._advance()
        return str(self._expect(T.STRING).value)

    def _parse_json(self) -> a.JsonParser:
        self._advance()
        return a.JsonParser(self._parse_extractions())

    def _parse_logfmt(self) -> a.LogfmtParser:
        self._advance()
        flags = {"strict": False, "keep_empty": False}
        while self.cur.type is T.FUNCTION_FLAG and self.cur.text in LOGFMT_FLAGS:
            flags[LOGFMT_FLAGS[self._advance().text]] = True
        extractions = self._parse_extractions()
        return a.LogfmtParser(flags["strict"], flags["keep_empty"], extractions)

    def _parse_extractions(self) -> tuple[a.LabelExtraction, ...]:
        if self.cur.type is not T.IDENTIFIER:
            return ()
        out = [self._parse_extraction()]
        while self._match(T.COMMA):
            out.append(self._parse_extraction())
        return tuple(out)

    def _parse_extraction(self) -> a.LabelExtraction:
        name = self._expect(T.IDENTIFIER).text
        if self._match(T.EQ):
            return a.LabelExtraction(name, str(self._expect(T.STRING).value))
        return a.LabelExtraction(name, name)

    def _parse_label_format(self) -> a.LabelFormat:
        self._advance()
        ops = [self._parse_label_format_op()]
        while self._match(T.COMMA):
            ops.append(self._parse_label_format_op())
        return a.LabelFormat(tuple(ops))

    def _parse_label_format_op(self) -> a.LabelFormatOp:
        name = self._expect(T.IDENTIFIER).text
        self._expect(T.EQ)
        tok = self._match(T.STRING)
        if tok is not None:
            return a.LabelFormatOp(name, str(tok.value), True)
        return a.LabelFormatOp(name, self._expect(T.IDENTIFIER, T.IDENTIFIER, T.STRING).text, False)

    def _parse_drop_keep(self) -> tuple[str | a.Matcher, ...]:
        self._advance()
        items = [self._parse_drop_keep_item()]
        while self._match(T.COMMA):
            items.append(self._parse_drop_keep_item())
        return tuple(items)

    def _parse_drop_keep_item(self) -> str | a.Matcher:
        name = self._expect(T.IDENTIFIER).text
        if self.cur.type in MATCH_OPS:
            return self._parse_matcher_rest(name)
        return name

    # ------------------------------------------------------------ label filters

    def _parse_label_filter_expr(self, outer: TokenType | None = None) -> a.LabelFilter:
        """Emulates Loki's yacc conflict resolution: and/or are left-associative with
        ``and`` above ``or``; ``,`` and juxtaposition carry no precedence, so whatever
        follows them is shifted (grouped to the right)."""
        self._deeper()
        left = self._parse_label_filter_primary()
        chained = 0
        try:
            while True:
                more, op = self._label_filter_connective()
                if not more or _reduces(outer, op):
                    return left
                if op is not None:
                    self._advance()
                chained += 1
                self._deeper()
                right = self._parse_label_filter_expr(op)
                node = a.OrLabelFilter if op is T.OR else a.AndLabelFilter
                left = node(left, right)
        finally:
            self._depth -= chained + 1

    def _label_filter_connective(self) -> tuple[bool, TokenType | None]:
        t = self.cur.type
        if t in (T.OR, T.AND, T.COMMA):
            return True, t
        return t in _LF_START, None

    def _parse_label_filter_primary(self) -> a.LabelFilter:
        if self._match(T.L_PAREN):
            inner = self._parse_label_filter_expr()
            self._expect(T.R_PAREN)
            return inner
        if self.cur.type is not T.IDENTIFIER:
            raise self._unexpected(T.IDENTIFIER, T.L_PAREN)
        name = self._advance().text
        op_tok = self.cur
        if op_tok.type in (T.RE, T.NRE):
            return a.StringLabelFilter(self._parse_matcher_rest(name))
        if op_tok.type not in COMPARE_OPS:
            raise self._unexpected(*MATCH_OPS, *COMPARE_OPS)
        self._advance()
        return self._parse_label_filter_value(name, op_tok.type)

    def _parse_label_filter_value(self, name: str, op_type: TokenType) -> a.LabelFilter:
        tok = self.cur
        cmp = COMPARE_OPS[op_type]
        string_ok = op_type in (T.EQ, T.NEQ)
        if string_ok and tok.type is T.STRING:
            self._advance()
            return a.StringLabelFilter(a.Matcher(name, MATCH_OPS[op_type], str(tok.value)))
        if string_ok and tok.type is T.IP:
            return a.IpLabelFilter(name, MATCH_OPS[op_type], self._parse_ip_call())
        if tok.type is T.DURATION:
            self._advance()
            return a.DurationLabelFilter(name, cmp, int(tok.value))
        if tok.type is T.BYTES:
            self._advance()
            return a.BytesLabelFilter(name, cmp, int(tok.value))
        sign = self._match_set(frozenset({T.ADD, T.SUB}))
        if self.cur.type is not T.NUMBER:
            extra = (T.STRING, T.IP) if string_ok and sign is None else ()
            if sign is not None:
                raise self._unexpected(T.NUMBER)
            raise self._unexpected(T.NUMBER, T.DURATION, T.BYTES, T.ADD, T.SUB, *extra)
        text = self._advance().text
        value = parse_number(text)
        return a.NumericLabelFilter(name, cmp, -value if sign and sign.type is T.SUB else value)


def _reduces(outer: TokenType | None, op: TokenType | None) -> bool:
    if outer not in _LF_PREC or op not in _LF_PREC:
        return False
    return _LF_PREC[outer] >= _LF_PREC[op]

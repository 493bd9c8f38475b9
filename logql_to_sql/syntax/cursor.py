"""Token cursor shared by the parser classes: matching helpers and syntax errors."""

from __future__ import annotations

from collections.abc import Collection

from gocompat.strconv import NumError, parse_float_strict
from logql_to_sql.errors import ParseError
from logql_to_sql.syntax.lexer import tokenize
from logql_to_sql.syntax.tokens import Token, TokenType

__all__ = ["Cursor", "parse_number"]

_ORDER = {t: i for i, t in enumerate(TokenType)}
_MAX_EXPECTED = 4


def parse_number(text: str) -> float:
    """Convert NUMBER text like Go's ``strconv.ParseFloat`` (Loki's ``mustNewFloat``)."""
    try:
        return parse_float_strict(text)
    except NumError as exc:
        raise ParseError(f"unable to parse literal as a float: {exc}") from None


class Cursor:
    """Walks the token list; raises the lexer's error once the parser reaches it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens, self._lex_error = tokenize(text)
        self.index = 0
        self.cur: Token = self.tokens[0]
        if self._lex_error is not None and self.cur.type is TokenType.EOF:
            raise self._lex_error

    def _peek(self, offset: int = 1) -> TokenType:
        idx = min(self.index + offset, len(self.tokens) - 1)
        if idx == len(self.tokens) - 1 and self._lex_error is not None:
            return TokenType.EOF
        return self.tokens[idx].type

    def _advance(self) -> Token:
        tok = self.cur
        if self.index < len(self.tokens) - 1:
            self.index += 1
            self.cur = self.tokens[self.index]
            if self._lex_error is not None and self.cur.type is TokenType.EOF:
                raise self._lex_error
        return tok

    def _at(self, type_: TokenType) -> bool:
        return self.cur.type is type_

    def _match(self, type_: TokenType) -> Token | None:
        if self.cur.type is type_:
            return self._advance()
        return None

    def _match_set(self, types: Collection[TokenType]) -> Token | None:
        if self.cur.type in types:
            return self._advance()
        return None

    def _expect(self, type_: TokenType, *expected: TokenType) -> Token:
        if self.cur.type is type_:
            return self._advance()
        raise self._unexpected(*(expected or (type_,)))

    def _expect_any(self, type_: TokenType) -> Token:
        """Like ``_expect`` but with no ``expecting`` list (many tokens were possible)."""
        if self.cur.type is type_:
            return self._advance()
        raise self._unexpected()

    def _unexpected(self, *expected: TokenType) -> ParseError:
        tok = self.cur
        msg = f"syntax error: unexpected {tok.type.value}"
        names = sorted(set(expected), key=_ORDER.__getitem__)
        if 0 < len(names) <= _MAX_EXPECTED:
            msg += ", expecting " + " or ".join(t.value for t in names)
        return ParseError(msg, tok.line, tok.col, tok.start, tok.end)

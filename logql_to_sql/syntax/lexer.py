"""The LogQL lexer: text -> list of :class:`~logql_to_sql.syntax.tokens.Token`.

It follows Loki's lexer, which wraps Go's ``text/scanner``: Go string escapes,
backtick raw strings, ``#``/``//``/``/* */`` comments, numbers glued to unit
letters becoming DURATION or BYTES, ``[...]`` read verbatim as one RANGE token, and
words that are keywords only when followed by ``(``. Tokens that Loki reads with
``Scanner.Next`` (two-character operators, DURATION, BYTES, RANGE, flags) report line
0, a Go scanner quirk that shows up in error positions.
"""

from __future__ import annotations

from bisect import bisect_right

from gocompat.durations import parse_duration, parse_humanize_bytes, parse_prom_duration
from gocompat.fmt import go_unquote
from logql_to_sql.errors import LexError
from logql_to_sql.syntax.tokens import FUNCTIONS, KEYWORDS, Token, TokenType

__all__ = ["MAX_INPUT_SIZE", "Lexer", "tokenize"]

MAX_INPUT_SIZE = 131072
T = TokenType

_SINGLE: dict[str, TokenType] = {
    "{": T.L_BRACE, "}": T.R_BRACE, "(": T.L_PAREN, ")": T.R_PAREN, ",": T.COMMA,
    "+": T.ADD, "*": T.MUL, "/": T.DIV, "%": T.MOD, "^": T.POW, ".": T.DOT,
    "]": T.R_BRACKET, "|": T.PIPE, "=": T.EQ, ">": T.GT, "<": T.LT,
}  # fmt: skip
_DOUBLE: dict[str, TokenType] = {
    "|=": T.PIPE_EXACT, "|~": T.PIPE_MATCH, "|>": T.PIPE_PATTERN, "!=": T.NEQ, "!~": T.NRE,
    "!>": T.NPA, "=~": T.RE, "==": T.CMP_EQ, ">=": T.GTE, "<=": T.LTE,
}  # fmt: skip
_WHITESPACE = " \t\n\r"
_DURATION_RUNES = frozenset(".nuµmshdwy")
_BYTES_RUNES = frozenset(".BikKMGTP")
_FLAG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class Lexer:
    """Turns one query string into tokens; see :func:`tokenize`."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.tokens: list[Token] = []
        self.error: LexError | None = None
        self._newlines = [i for i, c in enumerate(text) if c == "\n"] if "\n" in text else []

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        if not self._newlines:
            return 1, offset + 1
        line = bisect_right(self._newlines, offset - 1)
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1

    def eof_position(self) -> tuple[int, int]:
        """Go's scanner position at end of input: (0, 0) for empty input."""
        return (0, 0) if not self.text else self.position(len(self.text))

    def run(self) -> tuple[list[Token], LexError | None]:
        """Lex everything up to the end or the first error; always end with an EOF token."""
        try:
            while self._next_token():
                pass
        except LexError as exc:
            self.error = exc
        line, col = self.eof_position()
        n = len(self.text)
        self.tokens.append(Token(T.EOF, "", "", line, col, n, n))
        return self.tokens, self.error

    def _fail(self, msg: str, start: int, line0: bool = False) -> LexError:
        line, col = self.position(start)
        return LexError(msg, 0 if line0 else line, col, start, self.pos)

    def _emit(self, type_: TokenType, start: int, end: int, value: str | int, line0: bool) -> None:
        line, col = self.position(start)
        text = self.text[start:end]
        self.tokens.append(Token(type_, text, value, 0 if line0 else line, col, start, end))
        self.pos = end

    def _skip_blank(self) -> None:
        text, n = self.text, len(self.text)
        i = self.pos
        while i < n:
            c = text[i]
            if c in _WHITESPACE:
                i += 1
            elif c == "#" or text.startswith("//", i):
                j = text.find("\n", i)
                i = n if j < 0 else j
            elif text.startswith("/*", i):
                j = text.find("*/", i + 2)
                if j < 0:
                    self.pos = i
                    raise self._fail("comment not terminated", i)
                i = j + 2
            else:
                break
        self.pos = i

    def _next_token(self) -> bool:
        self._skip_blank()
        i = self.pos
        if i >= len(self.text):
            return False
        c = self.text[i]
        nxt = self.text[i + 1 : i + 2]
        if c == '"' or c == "`" or c == "'":
            self._string(c)
        elif "0" <= c <= "9" or (c == "." and "0" <= nxt <= "9"):
            self._number()
        elif c.isalpha() or c == "_":
            self._word()
        elif c == "[":
            self._range()
        elif c == "-":
            self._minus()
        elif c + nxt in _DOUBLE:
            self._emit(_DOUBLE[c + nxt], i, i + 2, c + nxt, True)
        else:
            type_ = _SINGLE.get(c, T.IDENTIFIER)
            self._emit(type_, i, i + 1, c, False)
        return True

    def _string(self, quote: str) -> None:
        text, start = self.text, self.pos
        if quote == "`":
            end = text.find("`", start + 1)
            if end < 0:
                self.pos = len(text)
                raise self._fail("literal not terminated", start)
            value = text[start + 1 : end].replace("\r", "")
            self._emit(T.STRING, start, end + 1, value, False)
            return
        i = start + 1
        n = len(text)
        while True:
            if i >= n or text[i] == "\n":
                self.pos = i
                raise self._fail("literal not terminated", start)
            ch = text[i]
            if ch == quote:
                break
            i += 2 if ch == "\\" and i + 1 < n and text[i + 1] != "\n" else 1
        body = text[start + 1 : i]
        try:
            value = go_unquote(body, quote)
        except ValueError as exc:
            self.pos = i + 1
            raise self._fail(str(exc), start) from None
        if quote == "'":
            if len(value) != 1:
                self.pos = i + 1
                raise self._fail("invalid char literal", start)
            self._emit(T.IDENTIFIER, start, i + 1, text[start : i + 1], False)
            return
        self._emit(T.STRING, start, i + 1, value, False)

    def _number(self) -> None:
        start = self.pos
        end = _scan_go_number(self.text, start, self)
        num = self.text[start:end]
        if self._try_unit(num, start, end):
            return
        self._emit(T.NUMBER, start, end, num, False)

    def _try_unit(self, prefix: str, start: int, end: int) -> bool:
        run = _run(self.text, end, _DURATION_RUNES)
        if run:
            try:
                value = parse_duration(prefix + run)
            except ValueError:
                pass
            else:
                self._emit(T.DURATION, start, end + len(run), value, True)
                return True
        if prefix.startswith("-"):
            return False
        run = _run(self.text, end, _BYTES_RUNES)
        if run:
            try:
                size = parse_humanize_bytes(prefix + run)
            except ValueError:
                return False
            self._emit(T.BYTES, start, end + len(run), size, True)
            return True
        return False

    def _minus(self) -> None:
        text, start = self.text, self.pos
        if text.startswith("--", start) and text[start + 2 : start + 3].isalpha():
            end = start + 2
            while end < len(text) and text[end] in _FLAG_CHARS:
                end += 1
            self._emit(T.FUNCTION_FLAG, start, end, text[start:end], True)
            return
        if not self._try_unit("-", start, start + 1):
            self._emit(T.SUB, start, start + 1, "-", False)

    def _word(self) -> None:
        text, start = self.text, self.pos
        end = start + 1
        n = len(text)
        while end < n and (text[end].isalnum() or text[end] == "_"):
            if not (text[end].isalpha() or text[end].isdecimal() or text[end] == "_"):
                break
            end += 1
        word = text[start:end]
        lower = word.lower()
        func = FUNCTIONS.get(lower)
        if func is not None and _is_function(text, end):
            self._emit(func, start, end, word, False)
        elif func is None and lower in KEYWORDS:
            self._emit(KEYWORDS[lower], start, end, word, False)
        else:
            self._emit(T.IDENTIFIER, start, end, word, False)

    def _range(self) -> None:
        text, start = self.text, self.pos
        close = text.find("]", start + 1)
        if close < 0:
            self.pos = len(text)
            raise self._fail("missing closing ']' in duration", start, line0=True)
        try:
            value = parse_prom_duration(text[start + 1 : close])
        except ValueError as exc:
            self.pos = close + 1
            raise self._fail(str(exc), start, line0=True) from None
        self._emit(T.RANGE, start, close + 1, value, True)


def _run(text: str, i: int, runes: frozenset[str]) -> str:
    j = i
    n = len(text)
    while j < n and (text[j] in runes or text[j].isnumeric()):
        j += 1
    return text[i:j]


def _skip_spaces(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WHITESPACE:
        i += 1
    return i


def _is_function(text: str, i: int) -> bool:
    """Loki's rule: a function word is followed by ``(`` or ``by``/``without`` then ``(``."""
    i = _skip_spaces(text, i)
    if text.startswith("(", i):
        return True
    for word in ("by", "without"):
        if text.startswith(word, i):
            return text.startswith("(", _skip_spaces(text, i + len(word)))
    return False


def _digits(text: str, i: int, allowed: str) -> int:
    n = len(text)
    while i < n and (text[i] in allowed or text[i] == "_"):
        i += 1
    return i


_DEC = "0123456789"
_HEX = "0123456789abcdefABCDEF"


def _scan_go_number(text: str, start: int, lexer: Lexer) -> int:
    """End offset of the Go number literal at ``start`` (errors as Go's scanner)."""
    i, prefix = start, ""
    if text[i] == "0" and text[i + 1 : i + 2].lower() in ("x", "o", "b"):
        prefix = text[i + 1].lower()
        i += 2
    allowed = {"x": _HEX, "o": "01234567", "b": "01"}.get(prefix, _DEC)
    j = _digits(text, i, allowed)
    has_digits = j > i
    if text.startswith(".", j) and prefix in ("", "x"):
        k = _digits(text, j + 1, allowed)
        has_digits = has_digits or k > j + 1
        j = k
    if not has_digits:
        lexer.pos = j
        name = {"x": "hexadecimal", "o": "octal", "b": "binary"}.get(prefix, "decimal")
        raise lexer._fail(f"{name} literal has no digits", start)
    exp_chars = "pP" if prefix == "x" else ("eE" if prefix == "" else "")
    if j < len(text) and text[j] in exp_chars:
        k = j + 1
        if text[k : k + 1] in ("+", "-") and text[k : k + 1] != "":
            k += 1
        m = _digits(text, k, _DEC)
        if m == k:
            lexer.pos = m
            raise lexer._fail("exponent has no digits", start)
        j = m
    return j


def tokenize(text: str) -> tuple[list[Token], LexError | None]:
    """Lex ``text``; return the tokens (ending with EOF) and the first lexer error, if any.

    The error is returned rather than raised so that the parser can report an earlier
    syntax error first, as Loki's parser does.
    """
    return Lexer(text).run()

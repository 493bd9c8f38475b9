"""Tokenizer for Go templates, following ``text/template/parse``'s lexer.

The whole input is scanned up front; an ``ERROR`` item ends the stream, exactly where
Go's lexer would stop, so the parser sees the same items in the same order.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Callable
from typing import Final, NamedTuple, TypeAlias

from gocompat.strconv import quote

__all__ = ["Item", "T", "lex"]

_State: TypeAlias = "Callable[[], _State] | None"


class T(enum.IntEnum):
    """Item types; every type after ``KEYWORD`` is a keyword."""

    ERROR = enum.auto()
    BOOL = enum.auto()
    CHAR = enum.auto()
    CHAR_CONSTANT = enum.auto()
    COMPLEX = enum.auto()
    ASSIGN = enum.auto()
    DECLARE = enum.auto()
    EOF = enum.auto()
    FIELD = enum.auto()
    IDENTIFIER = enum.auto()
    LEFT_DELIM = enum.auto()
    LEFT_PAREN = enum.auto()
    NUMBER = enum.auto()
    PIPE = enum.auto()
    RAW_STRING = enum.auto()
    RIGHT_DELIM = enum.auto()
    RIGHT_PAREN = enum.auto()
    SPACE = enum.auto()
    STRING = enum.auto()
    TEXT = enum.auto()
    VARIABLE = enum.auto()
    KEYWORD = enum.auto()
    BLOCK = enum.auto()
    BREAK = enum.auto()
    CONTINUE = enum.auto()
    DOT = enum.auto()
    DEFINE = enum.auto()
    ELSE = enum.auto()
    END = enum.auto()
    IF = enum.auto()
    NIL = enum.auto()
    RANGE = enum.auto()
    TEMPLATE = enum.auto()
    WITH = enum.auto()


KEYWORDS: Final = {
    ".": T.DOT,
    "block": T.BLOCK,
    "break": T.BREAK,
    "continue": T.CONTINUE,
    "define": T.DEFINE,
    "else": T.ELSE,
    "end": T.END,
    "if": T.IF,
    "range": T.RANGE,
    "nil": T.NIL,
    "template": T.TEMPLATE,
    "with": T.WITH,
}


class Item(NamedTuple):
    """One lexed item: type, byte-independent char offset, text and 1-based line."""

    typ: T
    pos: int
    val: str
    line: int

    def __str__(self) -> str:
        if self.typ == T.EOF:
            return "EOF"
        if self.typ == T.ERROR:
            return self.val
        if self.typ > T.KEYWORD:
            return f"<{self.val}>"
        if len(self.val) > 10:
            return quote(self.val[:10]) + "..."
        return quote(self.val)


SPACE_CHARS: Final = " \t\r\n"
LEFT: Final = "{{"
RIGHT: Final = "}}"


def is_alnum(ch: str) -> bool:
    """Go's isAlphaNumeric: underscore, letter or digit."""
    return ch == "_" or ch.isalpha() or ch.isdigit()


def format_rune(ch: str) -> str:
    """Go's ``%#U``."""
    text = f"U+{ord(ch):04X}"
    return text + f" '{ch}'" if ch.isprintable() else text


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.start = 0
        self.paren_depth = 0
        self.items: list[Item] = []
        self.newlines = [i for i, ch in enumerate(text) if ch == "\n"]

    def line_of(self, pos: int) -> int:
        return 1 + bisect.bisect_left(self.newlines, pos)

    def emit(self, typ: T) -> None:
        self.items.append(
            Item(typ, self.start, self.text[self.start : self.pos], self.line_of(self.start))
        )
        self.start = self.pos

    def error(self, message: str) -> None:
        self.items.append(Item(T.ERROR, self.start, message, self.line_of(self.start)))

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def at_right_delim(self) -> tuple[bool, bool]:
        rest = self.text[self.pos : self.pos + 4]
        if len(rest) >= 4 and rest[0] in SPACE_CHARS and rest[1] == "-" and rest[2:] == RIGHT:
            return True, True
        return rest.startswith(RIGHT), False

    def at_terminator(self) -> bool:
        ch = self.peek()
        if ch == "" or ch in SPACE_CHARS or ch in ".,|:)(":
            return True
        return self.text.startswith(RIGHT, self.pos)

    def run(self) -> list[Item]:
        state: _State = self.lex_text
        while state is not None:
            state = state()
        return self.items

    def lex_text(self) -> _State:
        x = self.text.find(LEFT, self.pos)
        if x < 0:
            self.pos = len(self.text)
            if self.pos > self.start:
                self.emit(T.TEXT)
            self.emit(T.EOF)
            return None
        self.pos = x
        rest = self.text[x + 2 : x + 4]
        end = x
        if len(rest) == 2 and rest[0] == "-" and rest[1] in SPACE_CHARS:
            end = len(self.text[self.start : x].rstrip(SPACE_CHARS)) + self.start
        if end > self.start:
            self.items.append(
                Item(T.TEXT, self.start, self.text[self.start : end], self.line_of(self.start))
            )
        self.start = x
        return self.lex_left_delim

    def lex_left_delim(self) -> _State:
        self.pos += len(LEFT)
        rest = self.text[self.pos : self.pos + 2]
        trim = len(rest) == 2 and rest[0] == "-" and rest[1] in SPACE_CHARS
        after = 2 if trim else 0
        if self.text.startswith("/*", self.pos + after):
            self.pos += after
            self.start = self.pos
            return self.lex_comment
        self.emit(T.LEFT_DELIM)
        self.pos += after
        self.start = self.pos
        self.paren_depth = 0
        return self.lex_inside_action

    def lex_comment(self) -> _State:
        self.pos += 2
        x = self.text.find("*/", self.pos)
        if x < 0:
            self.error("unclosed comment")
            return None
        self.pos = x + 2
        delim, trim = self.at_right_delim()
        if not delim:
            self.error("comment ends before closing delimiter")
            return None
        self.pos += (2 if trim else 0) + len(RIGHT)
        if trim:
            self.pos += len(self.text[self.pos :]) - len(self.text[self.pos :].lstrip(SPACE_CHARS))
        self.start = self.pos
        return self.lex_text

    def lex_right_delim(self) -> _State:
        _, trim = self.at_right_delim()
        if trim:
            self.pos += 2
            self.start = self.pos
        self.pos += len(RIGHT)
        self.emit(T.RIGHT_DELIM)
        if trim:
            self.pos += len(self.text[self.pos :]) - len(self.text[self.pos :].lstrip(SPACE_CHARS))
            self.start = self.pos
        return self.lex_text

    def lex_inside_action(self) -> _State:
        delim, _ = self.at_right_delim()
        if delim:
            if self.paren_depth == 0:
                return self.lex_right_delim
            self.error("unclosed left paren")
            return None
        ch = self.peek()
        self.pos += 1
        if ch == "":
            self.error("unclosed action")
            return None
        if ch in SPACE_CHARS:
            self.pos -= 1
            return self.lex_space
        if ch == "=":
            self.emit(T.ASSIGN)
        elif ch == ":":
            if self.peek() != "=":
                self.error("expected :=")
                return None
            self.pos += 1
            self.emit(T.DECLARE)
        elif ch == "|":
            self.emit(T.PIPE)
        elif ch == '"':
            return self.lex_quote
        elif ch == "`":
            return self.lex_raw_quote
        elif ch == "$":
            return self.lex_variable
        elif ch == "'":
            return self.lex_char
        elif ch == "." and self.pos < len(self.text) and not "0" <= self.text[self.pos] <= "9":
            return self.lex_field
        elif ch in "+-.0123456789":
            self.pos -= 1
            return self.lex_number
        elif is_alnum(ch):
            self.pos -= 1
            return self.lex_identifier
        elif ch == "(":
            self.emit(T.LEFT_PAREN)
            self.paren_depth += 1
        elif ch == ")":
            self.paren_depth -= 1
            if self.paren_depth < 0:
                self.error("unexpected right paren")
                return None
            self.emit(T.RIGHT_PAREN)
        elif ch.isascii() and ch.isprintable():
            self.emit(T.CHAR)
        else:
            self.error(f"unrecognized character in action: {format_rune(ch)}")
            return None
        return self.lex_inside_action

    def lex_space(self) -> _State:
        count = 0
        while self.peek() != "" and self.peek() in SPACE_CHARS:
            self.pos += 1
            count += 1
        if self.text.startswith("-" + RIGHT, self.pos):
            self.pos -= 1
            if count == 1:
                return self.lex_right_delim
        self.emit(T.SPACE)
        return self.lex_inside_action

    def lex_identifier(self) -> _State:
        while is_alnum(self.peek()):
            self.pos += 1
        if not self.at_terminator():
            self.error(f"bad character {format_rune(self.peek())}")
            return None
        word = self.text[self.start : self.pos]
        if word in KEYWORDS:
            self.emit(KEYWORDS[word])
        elif word in ("true", "false"):
            self.emit(T.BOOL)
        else:
            self.emit(T.IDENTIFIER)
        return self.lex_inside_action

    def lex_field(self) -> _State:
        return self.lex_field_or_variable(T.FIELD)

    def lex_variable(self) -> _State:
        if self.at_terminator():
            self.emit(T.VARIABLE)
            return self.lex_inside_action
        return self.lex_field_or_variable(T.VARIABLE)

    def lex_field_or_variable(self, typ: T) -> _State:
        if self.at_terminator():
            self.emit(T.VARIABLE if typ == T.VARIABLE else T.DOT)
            return self.lex_inside_action
        while is_alnum(self.peek()):
            self.pos += 1
        if not self.at_terminator():
            self.error(f"bad character {format_rune(self.peek())}")
            return None
        self.emit(typ)
        return self.lex_inside_action

    def lex_char(self) -> _State:
        return self.lex_quoted("'", T.CHAR_CONSTANT, "unterminated character constant")

    def lex_quote(self) -> _State:
        return self.lex_quoted('"', T.STRING, "unterminated quoted string")

    def lex_quoted(self, closing: str, typ: T, message: str) -> _State:
        while True:
            ch = self.peek()
            self.pos += 1
            if ch == "\\":
                nxt = self.peek()
                self.pos += 1
                if nxt not in ("", "\n"):
                    continue
                ch = nxt
            if ch in ("", "\n"):
                self.error(message)
                return None
            if ch == closing:
                break
        self.emit(typ)
        return self.lex_inside_action

    def lex_raw_quote(self) -> _State:
        end = self.text.find("`", self.pos)
        if end < 0:
            self.error("unterminated raw quoted string")
            return None
        self.pos = end + 1
        self.emit(T.RAW_STRING)
        return self.lex_inside_action

    def accept(self, valid: str) -> bool:
        if self.peek() != "" and self.peek() in valid:
            self.pos += 1
            return True
        return False

    def accept_run(self, valid: str) -> None:
        while self.accept(valid):
            pass

    def scan_number(self) -> bool:
        self.accept("+-")
        digits = "0123456789_"
        if self.accept("0"):
            if self.accept("xX"):
                digits = "0123456789abcdefABCDEF_"
            elif self.accept("oO"):
                digits = "01234567_"
            elif self.accept("bB"):
                digits = "01_"
        self.accept_run(digits)
        if self.accept("."):
            self.accept_run(digits)
        if len(digits) == 11 and self.accept("eE"):
            self.accept("+-")
            self.accept_run("0123456789_")
        if len(digits) == 23 and self.accept("pP"):
            self.accept("+-")
            self.accept_run("0123456789_")
        self.accept("i")
        if is_alnum(self.peek()):
            self.pos += 1
            return False
        return True

    def lex_number(self) -> _State:
        if not self.scan_number():
            self.error(f"bad number syntax: {quote(self.text[self.start : self.pos])}")
            return None
        if self.peek() in ("+", "-"):
            if not self.scan_number() or self.text[self.pos - 1] != "i":
                self.error(f"bad number syntax: {quote(self.text[self.start : self.pos])}")
                return None
            self.emit(T.COMPLEX)
        else:
            self.emit(T.NUMBER)
        return self.lex_inside_action


def lex(text: str) -> list[Item]:
    """All items of ``text``, ending with ``EOF`` or an ``ERROR`` item."""
    return _Lexer(text).run()

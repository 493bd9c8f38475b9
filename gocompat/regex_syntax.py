"""RE2 (Go ``regexp/syntax``) syntax checking with Go's error messages.

DuckDB runs our regexes with RE2, and Loki reports Go's messages, so validation
follows Go's parser for the common errors: missing or unexpected parentheses,
missing ``]``, invalid escapes, invalid class ranges, invalid or missing repetition
arguments and bad named captures. Whether a regex can match the empty string is
asked of RE2 itself.
"""

from __future__ import annotations

import re

import re2

__all__ = ["RegexSyntaxError", "capture_names", "matches_empty"]

_PERL_CLASSES = frozenset("dDsSwW")
_SIMPLE_ESCAPES = frozenset("afnrtv")
_ASSERTIONS = frozenset("bBAz")
_POSIX = frozenset(
    [
        "alnum",
        "alpha",
        "ascii",
        "blank",
        "cntrl",
        "digit",
        "graph",
        "lower",
        "print",
        "punct",
        "space",
        "upper",
        "word",
        "xdigit",
    ]
)
_FLAGS = frozenset("imsU")
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")
_HEX = re.compile(r"\{([0-9A-Fa-f]{1,8})\}|[0-9A-Fa-f]{2}")
_DOT_NL = re2.Options()
_DOT_NL.dot_nl = True
_DOT_NL.log_errors = False


class RegexSyntaxError(ValueError):
    """A regex Go's parser rejects; ``str()`` is Go's ``error parsing regexp: ...``."""

    def __init__(self, code: str, expr: str) -> None:
        super().__init__(f"error parsing regexp: {code}: `{expr}`")


class _Checker:
    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.depth = 0
        self.names: list[str | None] = []
        self.can_repeat = False  # an atom precedes
        self.last_repeat = -1  # start of the previous repetition operator, if adjacent
        # Go bounds the product of nested counted repetitions (``{n}``) by 1000
        # (``repeatIsValid``): the weight of the preceding atom, and per open group the
        # largest final weight inside it so far.
        self.weight = 1
        self.maxes = [1]

    def fail(self, code: str, expr: str | None = None) -> RegexSyntaxError:
        return RegexSyntaxError(code, self.p if expr is None else expr)

    def run(self) -> tuple[str | None, ...]:
        p = self.p
        while self.i < len(p):
            c = p[self.i]
            if c in "*+?" or (c == "{" and _REPEAT.match(p, self.i)):
                self.repeat()
                continue
            self.last_repeat = -1
            if c == "\\":
                self.escape()
                self.atom(1)
            elif c == "(":
                self.commit()
                depth = self.depth
                self.open()
                if self.depth > depth:
                    self.maxes.append(1)
            elif c == ")":
                self.close()
                self.commit()
                self.atom(self.maxes.pop())
            elif c == "[":
                self.klass()
                self.atom(1)
            elif c == "|":
                self.i += 1
                self.can_repeat = False
                self.commit()
            else:
                self.i += 1
                self.can_repeat = True
                self.atom(1)
        if self.depth:
            raise self.fail("missing closing )")
        return tuple(self.names)

    def repeat(self) -> None:
        p, start = self.p, self.i
        m = _REPEAT.match(p, start) if p[start] == "{" else None
        end = m.end() if m else start + 1
        if end < len(p) and p[end] == "?":
            end += 1
        if self.last_repeat >= 0:
            raise self.fail("invalid nested repetition operator", p[self.last_repeat : end])
        if not self.can_repeat:
            raise self.fail("missing argument to repetition operator", p[start:end])
        if m:
            lo, hi = int(m.group(1)), m.group(3)
            top = lo if m.group(2) is None else (int(hi) if hi else -1)
            if lo > 1000 or top > 1000 or (top >= 0 and top < lo):
                raise self.fail("invalid repeat count", m.group(0))
            if lo >= 2 or top >= 2:
                factor = top if top >= 0 else lo
                weight = self.weight * factor if factor else 1
                if weight > 1000:
                    raise self.fail("invalid repeat count", p[start:end])
                self.weight = weight
        self.last_repeat = start
        self.i = end

    def atom(self, weight: int) -> None:
        """A new atom of ``weight`` follows the previous one (now final)."""
        self.commit()
        self.weight = weight

    def commit(self) -> None:
        """The previous atom's weight is final: count it in its group."""
        self.maxes[-1] = max(self.maxes[-1], self.weight)
        self.weight = 1

    def open(self) -> None:
        p, start = self.p, self.i
        self.can_repeat = False
        if not p.startswith("(?", start):
            self.i += 1
            self.depth += 1
            self.names.append(None)
            return
        if p.startswith(("(?P<", "(?<"), start):
            self.named(start)
            return
        self.flags(start)

    def named(self, start: int) -> None:
        p = self.p
        lt = p.index("<", start)
        gt = p.find(">", lt)
        if gt < 0:
            raise self.fail("invalid named capture", p[start:])
        name = p[lt + 1 : gt]
        if not name or not all(c == "_" or (c.isascii() and c.isalnum()) for c in name):
            raise self.fail("invalid named capture", p[start : gt + 1])
        self.names.append(name)
        self.depth += 1
        self.i = gt + 1

    def flags(self, start: int) -> None:
        p = self.p
        i, neg, saw = start + 2, False, False
        while i < len(p):
            c = p[i]
            i += 1
            if c in _FLAGS:
                saw = True
            elif c == "-" and not neg:
                neg, saw = True, False
            elif c in ":)" and not (neg and not saw):
                if c == ":":
                    self.depth += 1
                self.i = i
                return
            else:
                raise self.fail("invalid or unsupported Perl syntax", p[start:i])
        raise self.fail("missing closing )")

    def close(self) -> None:
        if self.depth == 0:
            raise self.fail("unexpected )")
        self.depth -= 1
        self.i += 1
        self.can_repeat = True

    def escape(self, in_class: bool = False) -> str | None:
        """Consume one escape; return the literal char it denotes (None for classes)."""
        p, start = self.p, self.i
        if start + 1 >= len(p):
            raise self.fail("trailing backslash at end of expression", "")
        c = p[start + 1]
        self.i = start + 2
        self.can_repeat = True
        if c.isascii() and not c.isalnum():
            if c == "Q" and not in_class:
                return None
            return c
        if c in _SIMPLE_ESCAPES:
            return {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}[c]
        if c in _PERL_CLASSES:
            return None
        if c in _ASSERTIONS and not in_class:
            return None
        if c == "Q" and not in_class:
            end = p.find("\\E", self.i)
            self.i = len(p) if end < 0 else end + 2
            return None
        if c in "pP":
            self.unicode_class(start)
            return None
        if c == "x":
            return self.hex_escape(start)
        if c in "01234567":
            return self.octal(start, c)
        raise self.fail("invalid escape sequence", p[start : start + 2])

    def unicode_class(self, start: int) -> None:
        p = self.p
        if self.i < len(p) and p[self.i] == "{":
            end = p.find("}", self.i)
            if end < 0:
                raise self.fail("invalid character class range", p[start:])
            self.i = end + 1
        elif self.i < len(p):
            self.i += 1
        else:
            raise self.fail("invalid character class range", p[start:])

    def hex_escape(self, start: int) -> str:
        p = self.p
        m = _HEX.match(p, self.i)
        value = int(m.group(1) or m.group(0), 16) if m else -1
        if m is None or value > 0x10FFFF:
            raise self.fail("invalid escape sequence", p[start : self.i + (m.end() if m else 1)])
        self.i = m.end()
        return chr(value)

    def octal(self, start: int, first: str) -> str:
        p = self.p
        nxt = p[self.i : self.i + 1]
        if first != "0" and not ("0" <= nxt <= "7"):
            raise self.fail("invalid escape sequence", p[start : start + 2])
        end = self.i
        while end < len(p) and end < start + 4 and "0" <= p[end] <= "7":
            end += 1
        self.i = end
        return chr(int(p[start + 1 : end], 8))

    def klass(self) -> None:
        p, start = self.p, self.i
        i = start + 1
        if p.startswith("^", i):
            i += 1
        first = True
        while True:
            if i >= len(p):
                raise self.fail("missing closing ]", p[start:])
            if p[i] == "]" and not first:
                break
            first = False
            i = self.class_item(i, start)
        self.i = i + 1
        self.can_repeat = True

    def class_item(self, i: int, start: int) -> int:
        p = self.p
        if p.startswith("[:", i):
            end = p.find(":]", i + 2)
            if end >= 0:
                name = p[i + 2 : end].lstrip("^")
                if name not in _POSIX:
                    raise self.fail("invalid character class range", p[i : end + 2])
                return end + 2
        lo, i = self.class_char(i, start)
        if p.startswith("-", i) and i + 1 < len(p) and p[i + 1] != "]":
            hi, end = self.class_char(i + 1, start)
            if lo is None or hi is None or hi < lo:
                raise self.fail("invalid character class range", p[i - 1 if lo else i : end])
            return end
        return i

    def class_char(self, i: int, start: int) -> tuple[str | None, int]:
        p = self.p
        if i >= len(p):
            raise self.fail("missing closing ]", p[start:])
        if p[i] != "\\":
            return p[i], i + 1
        self.i = i
        value = self.escape(in_class=True)
        return value, self.i


def capture_names(pattern: str) -> tuple[str | None, ...]:
    """Names of the capture groups in order (None for unnamed); raise on bad syntax."""
    return _Checker(pattern).run()


def matches_empty(pattern: str) -> bool | None:
    """Whether the fully anchored regex (``.`` matching newline) matches ``""``.

    Runs on RE2 (linear time, whatever the pattern); None when RE2 cannot compile it.
    """
    try:
        return re2.fullmatch(pattern.encode("utf-8", "surrogatepass"), b"", _DOT_NL) is not None
    except re2.error:
        return None

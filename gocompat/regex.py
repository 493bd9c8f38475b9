"""Go regular expressions executed on RE2 (linear time): compile, replace-all and count.

User-supplied patterns run here (``regexReplaceAll``, ``regexReplaceAllLiteral`` and
``count`` in templates), so they never touch Python's backtracking ``re``: a pattern such
as ``(a+)+$`` costs time linear in the text. Syntax is checked first by
:mod:`gocompat.regex_syntax` so errors carry Go's messages; RE2 then compiles the pattern
as written (its syntax is Go's, give or take ``\\C``, which the checker rejects).

Matching works on the UTF-8 bytes, as Go does, so positions, the one-rune advance after an
empty match and ``$`` expansion follow Go's loops exactly: ``ReplaceAllString`` and
``FindAllStringIndex`` skip an empty match right after a previous match, which neither
``re.sub`` nor RE2's own iteration does. RE2 releases the GIL while it matches.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

import re2

from gocompat.regex_syntax import RegexSyntaxError, capture_names
from gocompat.template.errors import GoError
from gocompat.template.limits import reserve

__all__ = [
    "GoMatch",
    "GoRegexp",
    "compile_go",
    "count_matches",
    "encode_text",
    "full_match",
    "match_string",
    "replace_all",
]

_OPTIONS: Final = re2.Options()
_OPTIONS.log_errors = False
_NO_SPAN: Final = (-1, -1)
# The checker has run first, so what RE2 still refuses is mostly size (RE2 compiles to
# byte automata under an 8 MiB budget, so a large Unicode class repeated 1000 times is
# "too large" here where Go's rune-based program may accept it) and a repeat of a
# zero-count repeat, which Go exempts from its nesting bound.
_RE2_ERRORS: Final = (
    ("pattern too large", "expression too large"),
    ("invalid repetition size: ", "invalid repeat count"),
)


def encode_text(text: str) -> bytes:
    """``text`` as the bytes Go would hold (lone surrogates kept, as our strings carry them)."""
    return text.encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace")


def _rune_width(data: bytes, pos: int) -> int:
    """Bytes of the rune at ``pos`` (0 at the end, 1 for a byte that starts none)."""
    if pos >= len(data):
        return 0
    lead = data[pos]
    size = 1 if lead < 0xC2 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4 if lead < 0xF5 else 1
    if size > 1 and not all(0x80 <= b < 0xC0 for b in data[pos + 1 : pos + size]):
        return 1
    return min(size, len(data) - pos)


class GoRegexp:
    """A compiled Go regular expression; matches byte strings from a position."""

    __slots__ = ("_regexp", "group_count", "names")

    def __init__(self, pattern: str) -> None:
        try:
            names = capture_names(pattern)
        except RegexSyntaxError as exc:
            raise GoError(str(exc)) from None
        try:
            self._regexp: Any = re2.compile(encode_text(pattern), _OPTIONS)
        except re2.error as exc:
            raise GoError(_re2_message(exc, pattern)) from None
        self.group_count: int = len(names)
        self.names: dict[str, int] = {}
        for index, name in enumerate(names, start=1):
            if name is not None:
                self.names.setdefault(name, index)

    def search(self, data: bytes, pos: int) -> list[tuple[int, int]] | None:
        """Spans of the leftmost match at or after ``pos`` (group 0 first), or None.

        The text before ``pos`` is context: ``^`` and ``\\b`` see it, as in Go.
        """
        match = self._regexp.search(data, pos)
        if match is None:
            return None
        return [match.span(i) for i in range(self.group_count + 1)]


def _re2_message(exc: Exception, pattern: str) -> str:
    text = exc.args[0].decode("utf-8", "replace") if exc.args else ""
    for prefix, code in _RE2_ERRORS:
        if text.startswith(prefix):
            expr = text[len(prefix) :] if prefix.endswith(": ") else pattern
            return f"error parsing regexp: {code}: `{expr}`"
    return f"error parsing regexp: invalid or unsupported Perl syntax: `{pattern}`"


@lru_cache(maxsize=512)
def _compile(pattern: str) -> GoRegexp | str:
    try:
        return GoRegexp(pattern)
    except GoError as exc:
        return str(exc)


def compile_go(pattern: str) -> GoRegexp:
    """Compile a Go regular expression; raises GoError with Go's message on failure."""
    compiled = _compile(pattern)
    if isinstance(compiled, str):
        raise GoError(compiled)
    return compiled


def count_matches(pattern: str, text: str) -> int:
    """``len(re.FindAllStringIndex(text, -1))``."""
    regex = compile_go(pattern)
    data = encode_text(text)
    found, pos, prev_end, end = 0, 0, -1, len(data)
    while pos <= end:
        spans = regex.search(data, pos)
        if spans is None:
            break
        start, stop = spans[0]
        accept = True
        if stop == pos:
            accept = start != prev_end
            width = _rune_width(data, pos)
            pos = pos + width if width else end + 1
        else:
            pos = stop
        prev_end = stop
        found += accept
    return found


_Piece = bytes | int


def _extract(template: str) -> tuple[str, str] | None:
    """Go's ``extract``: the name after a ``$`` and the rest, or None when there is none."""
    brace = template.startswith("{")
    body = template[1:] if brace else template
    size = 0
    while size < len(body) and (body[size].isalnum() or body[size] == "_"):
        size += 1
    if size == 0:
        return None
    name = body[:size]
    if brace:
        if body[size : size + 1] != "}":
            return None
        size += 1
    return name, body[size:]


def _group_index(regex: GoRegexp, name: str) -> int:
    """The group ``$name`` stands for, or -1 (it expands to nothing)."""
    # Go reads no number with a leading zero or of 1e8 and more: those are names.
    if name.isascii() and name.isdigit() and (name[0] != "0" or len(name) == 1) and len(name) <= 8:
        index = int(name)
        return index if index <= regex.group_count else -1
    return regex.names.get(name, -1)


def _expansion(template: str, regex: GoRegexp) -> list[_Piece]:
    """Go's ``Regexp.Expand`` template as literal bytes and group indexes."""
    pieces: list[_Piece] = []
    while True:
        before, sep, template = template.partition("$")
        pieces.append(encode_text(before))
        if not sep:
            return pieces
        if template.startswith("$"):
            pieces.append(b"$")
            template = template[1:]
            continue
        extracted = _extract(template)
        if extracted is None:
            pieces.append(b"$")
            continue
        name, template = extracted
        pieces.append(_group_index(regex, name))


def _expand(pieces: list[_Piece], spans: list[tuple[int, int]], data: bytes) -> bytes:
    out = []
    for piece in pieces:
        if isinstance(piece, bytes):
            out.append(piece)
        elif piece >= 0 and spans[piece] != _NO_SPAN:
            start, stop = spans[piece]
            out.append(data[start:stop])
    return b"".join(out)


def replace_all(pattern: str, text: str, repl: str, *, literal: bool) -> str:
    """``ReplaceAllString`` (``$`` expansion) or ``ReplaceAllLiteralString``."""
    regex = compile_go(pattern)
    data = encode_text(text)
    pieces: list[_Piece] = [encode_text(repl)] if literal else _expansion(repl, regex)
    out: list[bytes] = []
    last, pos, end, size = 0, 0, len(data), 0
    while pos <= end:
        spans = regex.search(data, pos)
        if spans is None:
            break
        start, stop = spans[0]
        out.append(data[last:start])
        size += start - last
        if stop > last or start == 0:
            out.append(_expand(pieces, spans, data))
            size += len(out[-1])
            reserve(size)  # every match may expand to more than it replaces
        last = stop
        width = _rune_width(data, pos)
        if pos + width > stop:
            pos += width
        elif pos + 1 > stop:
            pos += 1
        else:
            pos = stop
    out.append(data[last:])
    return _decode(b"".join(out))


def match_string(pattern: str, text: str) -> bool:
    """``regexp.MatchString``: a match anywhere in ``text``."""
    return compile_go(pattern).search(encode_text(text), 0) is not None


class GoMatch:
    """One match of a regex on a text, for ``Regexp.Expand`` of templates."""

    __slots__ = ("_data", "_regex", "_spans")

    def __init__(self, regex: GoRegexp, data: bytes, spans: list[tuple[int, int]]) -> None:
        self._regex = regex
        self._data = data
        self._spans = spans

    def expand(self, template: str) -> str:
        """Go's ``Regexp.Expand``: ``$1``, ``${1}``, ``$name``, ``${name}``, ``$$``."""
        return _decode(_expand(_expansion(template, self._regex), self._spans, self._data))


def full_match(pattern: str, text: str) -> GoMatch | None:
    """The match of ``^(?:pattern)$`` on ``text`` (Prometheus relabelling), or None."""
    regex = compile_go(f"^(?:{pattern})$")
    data = encode_text(text)
    spans = regex.search(data, 0)
    return None if spans is None else GoMatch(regex, data, spans)

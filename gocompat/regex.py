"""Go (RE2) regular expressions on Python's ``re``: translation, replace-all and count.

Go's ``ReplaceAllString`` and ``FindAllStringIndex`` skip an empty match right after a
previous match, which ``re.sub`` does not, so both loops are written out here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

from gocompat.template.errors import GoError

__all__ = ["compile_go", "count_matches", "expand", "replace_all", "replace_all_compiled"]

_POSIX: Final = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_PERL: Final = {"d": "0-9", "w": "0-9A-Za-z_", "s": "\\t\\n\\f\\r "}
_ERRORS: Final = (
    ("missing ), unterminated subpattern", "missing closing )"),
    ("unbalanced parenthesis", "unexpected )"),
    ("unterminated character set", "missing closing ]"),
    ("multiple repeat", "invalid nested repetition operator"),
    ("nothing to repeat", "missing argument to repetition operator"),
    ("bad escape", "invalid escape sequence"),
    ("bad character range", "invalid character class range"),
)


class _Unsupported(Exception):
    def __init__(self, code: str, fragment: str) -> None:
        super().__init__(f"error parsing regexp: {code}: `{fragment}`")


def _translate_class(pattern: str, i: int, out: list[str]) -> int:
    out.append("[")
    i += 1
    if pattern[i : i + 1] == "^":
        out.append("^")
        i += 1
    first = True
    while i < len(pattern) and (pattern[i] != "]" or first):
        first = False
        if pattern.startswith("[:", i):
            end = pattern.find(":]", i + 2)
            name = pattern[i + 2 : end] if end > 0 else ""
            negated = name.startswith("^")
            if name.lstrip("^") in _POSIX and not negated:
                out.append(_POSIX[name])
                i = end + 2
                continue
        if pattern[i] == "\\" and pattern[i + 1 : i + 2] in _PERL:
            out.append(_PERL[pattern[i + 1]])
            i += 2
            continue
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        out.append("\\[" if pattern[i] == "[" else pattern[i])
        i += 1
    out.append("]")
    return i + 1


def _translate(pattern: str) -> str:
    out: list[str] = []
    multiline = bool(re.match(r"\(\?[a-zA-Z]*m", pattern))
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append(re.escape(literal))
                i = len(pattern) if end < 0 else end + 2
                continue
            if nxt in "123456789":
                raise _Unsupported("invalid escape sequence", pattern[i : i + 2])
            if nxt in _PERL:
                out.append(f"[{_PERL[nxt]}]")
            elif nxt in "DWS":
                out.append(f"[^{_PERL[nxt.lower()]}]")
            elif nxt == "z":
                out.append("\\Z")
            elif nxt == "Z":
                raise re.error("bad escape \\Z")
            else:
                out.append(pattern[i : i + 2])
            i += 2
        elif ch == "[":
            i = _translate_class(pattern, i, out)
        elif pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            size = 4 if pattern[i + 2] == "<" else 3
            raise _Unsupported("invalid or unsupported Perl syntax", pattern[i : i + size])
        elif pattern.startswith("(?<", i):
            out.append("(?P<")
            i += 3
        elif ch == "$" and not multiline:
            out.append("(?!(?s:.))")
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _go_message(exc: re.error, pattern: str) -> str:
    text = str(exc)
    for python, go in _ERRORS:
        if python in text:
            return f"error parsing regexp: {go}: `{pattern}`"
    return f"error parsing regexp: invalid or unsupported Perl syntax: `{pattern}`"


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str] | str:
    try:
        return re.compile(_translate(pattern))
    except _Unsupported as exc:
        return str(exc)
    except (re.error, IndexError) as exc:
        err = exc if isinstance(exc, re.error) else re.error(str(exc))
        return _go_message(err, pattern)


def compile_go(pattern: str) -> re.Pattern[str]:
    """Compile a Go regular expression; raises GoError with Go's message on failure."""
    compiled = _compile(pattern)
    if isinstance(compiled, str):
        raise GoError(compiled)
    return compiled


def _matches(regex: re.Pattern[str], text: str) -> list[re.Match[str]]:
    found: list[re.Match[str]] = []
    pos, prev_end = 0, -1
    while pos <= len(text):
        match = regex.search(text, pos)
        if match is None:
            break
        accept = True
        if match.end() == pos:
            accept = match.start() != prev_end
            pos += 1
        else:
            pos = match.end()
        prev_end = match.end()
        if accept:
            found.append(match)
    return found


def count_matches(pattern: str, text: str) -> int:
    """``len(re.FindAllStringIndex(text, -1))``."""
    return len(_matches(compile_go(pattern), text))


def _extract(template: str) -> tuple[str, str] | None:
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


def _group(match: Any, name: str) -> str:
    if name.isdigit() and not (name[0] == "0" and len(name) > 1) and name.isascii():
        index = int(name)
        if index <= (match.re.groups or 0):
            return match.group(index) or ""
        return ""
    if name in match.re.groupindex:
        return match.group(name) or ""
    return ""


def expand(template: str, match: Any) -> str:
    """Go's ``Regexp.Expand``: ``$1``, ``${1}``, ``$name``, ``${name}``, ``$$``."""
    out: list[str] = []
    while True:
        before, sep, template = template.partition("$")
        out.append(before)
        if not sep:
            return "".join(out)
        if template.startswith("$"):
            out.append("$")
            template = template[1:]
            continue
        extracted = _extract(template)
        if extracted is None:
            out.append("$")
            continue
        name, template = extracted
        out.append(_group(match, name))


def replace_all(pattern: str, text: str, repl: str, *, literal: bool) -> str:
    """``ReplaceAllString`` (``$`` expansion) or ``ReplaceAllLiteralString``."""
    return replace_all_compiled(compile_go(pattern), text, repl, literal=literal)


def replace_all_compiled(regex: Any, text: str, repl: str, *, literal: bool) -> str:
    """:func:`replace_all` with a compiled regex: Python's ``re`` or RE2 (``gocompat.re2``),
    anything with ``search(text, pos)`` returning ``re``-like matches."""
    out: list[str] = []
    last = 0
    search_pos = 0
    while search_pos <= len(text):
        match = regex.search(text, search_pos)
        if match is None:
            break
        out.append(text[last : match.start()])
        if match.end() > last or match.start() == 0:
            out.append(repl if literal else expand(repl, match))
        last = match.end()
        search_pos = match.end() if match.end() > search_pos else search_pos + 1
    out.append(text[last:])
    return "".join(out)

"""Environment variable expansion of config files, as the reference's ``-config.expand-env``.

The reference expands its config text with the ``drone/envsubst`` rules, a subset of the
shell's parameter expansion inside ``${...}`` only (a bare ``$VAR`` stays as written):

=====================  =================================================================
``${VAR}``             the variable's value ("" when unset)
``${VAR:-word}``       ``word`` when the value is empty (also ``:=``, ``=``, ``:?``,
                       ``:+``: all mean "default when empty" there)
``${#VAR}``            length of the value
``${VAR^}`` ``^^``     upper-case the first / every character (``,`` ``,,`` lower-case)
``${VAR:2}``           substring from 2 (negative: from the end); ``${VAR:2:3}`` 3 long
``${VAR#pat}`` ``##``  remove the shortest / longest prefix matching a glob
``${VAR%pat}`` ``%%``  remove the shortest / longest suffix matching a glob
``${VAR/a/b}`` ``//``  replace the first / every ``a``; ``/#`` and ``/%`` anchor it
=====================  =================================================================

Words may hold nested ``${...}``. Outside ``${...}``, ``$$`` is a literal ``$`` and
``\\\\`` and ``\\/`` a literal ``\\`` and ``/``. Malformed text raises
:class:`SubstitutionError` with the library's message (``bad substitution``, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = ["SubstitutionError", "expand"]

BAD_SUBSTITUTION: Final = "bad substitution"
MISSING_BRACE: Final = "missing closing brace"
BAD_NAME: Final = "unable to parse variable name"
BAD_PARAM: Final = "unable to parse substitution within function"
BAD_DEFAULT: Final = "unable to parse default function"


class SubstitutionError(ValueError):
    """Malformed ``${...}``; the message is the reference's."""


@dataclass
class _Func:
    param: str
    name: str = ""
    args: list[list[_Func | str]] = field(default_factory=list)


_Node = _Func | str
Accept = Callable[[str, int], bool]


def _ident(c: str, i: int) -> bool:
    return c.isalnum() or c == "_"


class _Scanner:
    """A cursor over the text; ``scan_*`` return a token's text or None."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self, ahead: int = 0) -> str:
        at = self.pos + ahead
        return self.text[at] if at < len(self.text) else ""

    def at_open(self) -> bool:
        return self.peek() == "$" and self.peek(1) == "{"

    def _escaped(self, escapes: bool) -> bool:
        if not escapes:
            return False
        c, nxt = self.peek(), self.peek(1)
        return (c == "$" and nxt == "$") or (c == "\\" and nxt in ("/", "\\"))

    def scan_text(self, accept: Accept, *, escapes: bool = False) -> str | None:
        """Characters accepted by ``accept`` (index from 1), stopping before ``${``."""
        out: list[str] = []
        count = 0
        while self.pos < len(self.text):
            if self.at_open() and out:
                break
            if self._escaped(escapes):
                self.pos += 1  # drop the escape character, keep the next one as is
                out.append(self.text[self.pos])
                self.pos += 1
                count += 1
                continue
            if not accept(self.peek(), count + 1):
                break
            out.append(self.peek())
            self.pos += 1
            count += 1
        return "".join(out) if out else None

    def expect(self, char: str, error: str) -> None:
        if self.peek() != char:
            raise SubstitutionError(error)
        self.pos += 1


class _Parser:
    def __init__(self, text: str) -> None:
        self.sc = _Scanner(text)

    def parse(self) -> list[_Node]:
        nodes: list[_Node] = []
        while self.sc.pos < len(self.sc.text):
            if self.sc.at_open():
                self.sc.pos += 2
                nodes.append(self.func())
                continue
            text = self.sc.scan_text(lambda c, i: True, escapes=True)
            if text is None:  # a lone "$" right before "${"
                raise SubstitutionError(BAD_SUBSTITUTION)
            nodes.append(text)
        return nodes

    def func(self) -> _Func:
        if self.sc.peek() == "#":
            return self.length()
        name = self.sc.scan_text(_ident)
        if name is None:
            raise SubstitutionError(BAD_NAME)
        nxt = self.sc.peek()
        if nxt == ":":
            after = self.sc.peek(1)
            return self.default(name) if after and after in "=-?+" else self.substring(name)
        if nxt == "=":
            return self.default(name)
        if nxt in (",", "^"):
            return self.named(name, lambda c, i: c in ",^" and i < 3, params=0)
        if nxt == "/":
            return self.replace(name)
        if nxt in ("#", "%"):
            marker = nxt
            return self.named(name, lambda c, i: c == marker and i < 3, params=1)
        self.sc.expect("}", MISSING_BRACE)
        return _Func(name)

    def param(self, accept: Accept, *, escapes: bool = False) -> list[_Node]:
        if self.sc.at_open():
            self.sc.pos += 2
            return [self.func()]
        text = self.sc.scan_text(accept, escapes=escapes)
        if text is None:
            raise SubstitutionError(BAD_PARAM)
        return [text]

    def length(self) -> _Func:
        self.sc.pos += 1
        name = self.sc.scan_text(_ident)
        if name is None:
            raise SubstitutionError(BAD_SUBSTITUTION)
        self.sc.expect("}", BAD_SUBSTITUTION)
        return _Func(name, "#")

    def named(self, param: str, accept: Accept, *, params: int) -> _Func:
        node = _Func(param, self.sc.scan_text(accept) or "")
        if params:
            node.args.append(self.param(lambda c, i: c != "}"))
        self.sc.expect("}", BAD_SUBSTITUTION)
        return node

    def default(self, param: str) -> _Func:
        if self.sc.peek() == "=":
            name = self.sc.scan_text(lambda c, i: i == 1 and c == "=")
        else:
            name = self.sc.scan_text(lambda c, i: (i == 1 and c == ":") or (i == 2 and c in "=-?+"))
        if name is None:
            raise SubstitutionError(BAD_DEFAULT)
        node = _Func(param, name)
        while self.sc.peek() != "}":
            if not self.sc.peek():
                raise SubstitutionError(BAD_PARAM)
            node.args.append(self.param(lambda c, i: c != "}"))
        self.sc.pos += 1
        return node

    def substring(self, param: str) -> _Func:
        self.sc.pos += 1
        node = _Func(param, ":")
        node.args.append(self.param(lambda c, i: c not in ":}"))
        if self.sc.peek() == "}":
            self.sc.pos += 1
            return node
        self.sc.expect(":", BAD_SUBSTITUTION)
        node.args.append(self.param(lambda c, i: c != "}"))
        self.sc.expect("}", BAD_SUBSTITUTION)
        return node

    def replace(self, param: str) -> _Func:
        name = self.sc.scan_text(lambda c, i: (i == 1 and c == "/") or (i == 2 and c in "/#%"))
        node = _Func(param, name or "")
        node.args.append(self.param(lambda c, i: c != "/", escapes=True))
        self.sc.expect("/", BAD_SUBSTITUTION)
        if self.sc.peek() != "}":
            node.args.append(self.param(lambda c, i: c != "}", escapes=True))
        self.sc.expect("}", BAD_SUBSTITUTION)
        return node


def _glob_regex(pattern: str) -> re.Pattern[str] | None:
    """Go's ``path.Match`` pattern as a regex (None when malformed)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\":
            if i + 1 >= len(pattern):
                return None
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("^", "]") else i + 1)
            if end < 0:
                return None
            body = pattern[i + 1 : end]
            negate = body.startswith("^")
            body = body[1:] if negate else body
            members = re.sub(r"\\(.)", r"\1", body).replace("\\", "\\\\").replace("]", "\\]")
            out.append(f"[{'^' if negate else ''}{members}]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out), re.DOTALL)
    except re.error:
        return None


def _trim_prefix(value: str, pattern: str, *, longest: bool) -> str:
    regex = _glob_regex(pattern)
    if regex is None:
        return value
    lengths = range(len(value), 0, -1)
    matches = [n for n in lengths if regex.fullmatch(value[:n])]
    if not matches:
        return value
    return value[(matches[0] if longest else matches[-1]) :]


def _go_atoi(text: str) -> int | None:
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None


def _substring(value: str, args: list[str]) -> str:
    pos = _go_atoi(args[0])
    if pos is None:
        return value
    if pos < 0:
        pos = max(len(value) + pos, 0)
    if len(args) == 1:
        return value[pos:]
    length = _go_atoi(args[1])
    if length is None:
        return value
    return value[pos:] if pos + length >= len(value) else value[pos : pos + length]


def _replace(name: str, value: str, args: list[str]) -> str:
    if name in ("/#", "/%"):
        if len(args) != 2:
            return value
        old, new = args
        if name == "/#":
            return value.replace(old, new, 1) if value.startswith(old) else value
        return value[: len(value) - len(old)] + new if value.endswith(old) else value
    if not args:
        return value
    new = args[1] if len(args) > 1 else ""
    return value.replace(args[0], new, -1 if name == "//" else 1)


def _first(value: str, fn: Callable[[str], str]) -> str:
    return fn(value[:1]) + value[1:] if value else value


def _apply(name: str, value: str, args: list[str]) -> str:
    if name == "#" and not args:
        return str(len(value.encode()))
    if name in ("#", "##") and args:
        return _trim_prefix(value, args[0], longest=name == "##")
    if name in ("%", "%%") and args:
        return _trim_prefix(value[::-1], args[0][::-1], longest=name == "%%")[::-1]
    if name == ":":
        return _substring(value, args)
    if name in ("/", "//", "/#", "/%"):
        return _replace(name, value, args)
    casing = {",": str.lower, "^": str.upper}
    if name in (",", "^"):
        return _first(value, casing[name])
    if name in (",,", "^^"):
        return casing[name[0]](value)
    return value if value or not args else "".join(args)


def _evaluate(nodes: list[_Node], env: Mapping[str, str]) -> str:
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
            continue
        args = [_evaluate(arg, env) for arg in node.args]
        out.append(_apply(node.name, env.get(node.param, ""), args))
    return "".join(out)


def expand(text: str, env: Mapping[str, str]) -> str:
    """``text`` with every ``${...}`` expanded from ``env``; raises SubstitutionError."""
    return _evaluate(_Parser(text).parse(), env)

"""The needles a LogQL query's entries must hold: what the skipping index can answer.

A query's *condition* is a conjunction of clauses, one per usable filter; a clause is a
disjunction of alternatives (``|= "a" or "b"``); an alternative is the needles a matching
entry holds, all of them: literals its line contains, or structured-metadata values
(``MetadataValue``). Only the filters at the head of the pipeline count (before any
parser, formatter or label filter that may raise an error), where they see the stored
line and labels.

* ``|= "x"``: the literal ``x`` (``""`` matches every line: nothing to use).
* ``|~ "re"``: the literals every match of the regex contains (``regex_literals``), when
  the regex is case-sensitive and made of constructs read here exactly; otherwise none.
* ``| name="v"`` (``v`` not empty; ``and``/``or`` of such, ``,`` too): the entry's
  structured metadata maps ``name`` to ``v``, unless a stream label of that name answers
  instead (``skipping.py`` leaves those to the scan).
* ``!=``, ``!~``, ``|>``, ``!>``, ``ip(...)``, ``name!="v"``, ``=~``, ``!~`` on labels:
  nothing (they keep entries without a needle).

Everything here is pure: the index itself is consulted by ``skipping.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from logql_to_sql import ast

__all__ = [
    "Alternative",
    "Clause",
    "Condition",
    "MetadataValue",
    "query_conditions",
    "regex_literals",
]


@dataclass(frozen=True, slots=True)
class MetadataValue:
    """An entry's structured metadata maps ``name`` to ``value``."""

    name: str
    value: str


Alternative = tuple[str | MetadataValue, ...]
"""Needles an entry holds, all of them (strings: literals of its line)."""
Clause = tuple[Alternative, ...]
"""One line filter: a line passes with one of the alternatives."""
Condition = tuple[Clause, ...]
"""Every clause of one selector's pipeline."""

_BEFORE_ANY_PARSING = (ast.LineFilter, ast.StringLabelFilter)
"""The leading stages whose filters are used: they see the stored line, and no row they
drop could have raised a pipeline error (a parser, a numeric or duration label filter
may; such an error must be reported whether or not a later filter matches). ``and`` and
``or`` of string label filters count as well (``_string_filters``)."""


@lru_cache(maxsize=1024)
def query_conditions(expr: ast.Expr) -> tuple[Condition, ...] | None:
    """One condition per log selector of ``expr`` (a line may match if it meets one of
    them); None when some selector has no usable line filter (every line may match)."""
    conditions: list[Condition] = []
    for stages in _pipelines(expr):
        condition = stages_condition(stages)
        if not condition:
            return None
        conditions.append(condition)
    return tuple(conditions) or None


def _pipelines(expr: object) -> list[tuple[ast.Stage, ...]]:
    if isinstance(expr, ast.LogQuery | ast.LogRange):
        return [expr.stages]
    found: list[tuple[ast.Stage, ...]] = []
    for name in ("expr", "left", "right", "range"):
        child = getattr(expr, name, None)
        if child is not None:
            found += _pipelines(child)
    return found


def stages_condition(stages: tuple[ast.Stage, ...]) -> Condition:
    """The clauses of the leading line filters (see ``_BEFORE_ANY_PARSING``)."""
    clauses: list[Clause] = []
    for stage in stages:
        if isinstance(stage, ast.LineFilter):
            clause = _clause(stage)
            if clause is not None:
                clauses.append(clause)
        elif _string_filters(stage):
            clauses += _label_clauses(stage)  # type: ignore[arg-type]
        else:
            break
    return tuple(clauses)


def _string_filters(node: object) -> bool:
    """Whether ``node`` is a label filter made of string matchers only (it cannot fail)."""
    if isinstance(node, ast.AndLabelFilter | ast.OrLabelFilter):
        return _string_filters(node.left) and _string_filters(node.right)
    return isinstance(node, ast.StringLabelFilter)


def _label_clauses(node: ast.LabelFilter) -> list[Clause]:
    """The clauses a string label filter tree sets (``and``: each side's; ``or``: one
    clause of both sides' alternatives, when each side has exactly one clause)."""
    if isinstance(node, ast.AndLabelFilter):
        return _label_clauses(node.left) + _label_clauses(node.right)
    if isinstance(node, ast.OrLabelFilter):
        left, right = _label_clauses(node.left), _label_clauses(node.right)
        if len(left) != 1 or len(right) != 1:
            return []
        return [left[0] + right[0]]
    assert isinstance(node, ast.StringLabelFilter)
    matcher = node.matcher
    if (
        matcher.op is not ast.MatchOp.EQ
        or not matcher.value  # an absent label reads as "": it matches without metadata
        or matcher.name.startswith("__")
        or matcher.name.endswith("_extracted")  # may read a metadata key of another name
    ):
        return []
    return [((MetadataValue(matcher.name, matcher.value),),)]


def _clause(node: ast.LineFilter) -> Clause | None:
    alternatives: list[Alternative] = []
    for operand in node.operands:
        if isinstance(operand, ast.IpOperand):
            return None
        if node.op is ast.LineFilterOp.CONTAINS:
            if not operand:
                return None
            alternatives.append((operand,))
        elif node.op is ast.LineFilterOp.MATCH:
            found = regex_literals(operand)
            if found is None or any(not alternative for alternative in found):
                return None
            alternatives += found
        else:
            return None
    return tuple(alternatives)


_REPEAT = re.compile(r"\{(\d+)(?:,(\d*))?\}")
_CLASS_ESCAPES = frozenset("dDwWsSpP")
_ZERO_WIDTH_ESCAPES = frozenset("bBAz")
_CONTROL_ESCAPES = {"a": "\a", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_HEX_ESCAPE = re.compile(r"x(?:\{([0-9A-Fa-f]{1,8})\}|([0-9A-Fa-f]{2}))")
_FLAGS = re.compile(r"\(\?([imsU-]*)(:|\))")


class _GiveUp(Exception):
    """A construct not read exactly here: the regex yields no literals."""


@lru_cache(maxsize=1024)
def regex_literals(pattern: str) -> tuple[Alternative, ...] | None:
    """The literals every match of an RE2 regex contains: one alternative per top-level
    branch. None when the regex is case-insensitive or holds a construct not read here
    (then nothing may be assumed). Conservative: a literal is kept only where the syntax
    makes it certain, runs are cut at every quantifier, class, group and assertion.

    >>> regex_literals("user_id=(4242|4243) +done")
    (('user_id=', ' ', 'done'),)
    >>> regex_literals("GET|POST")
    (('GET',), ('POST',))
    >>> regex_literals("(?i)error") is None
    True
    """
    try:
        parser = _Literals(pattern)
        branches = parser.branches(top=True)
    except _GiveUp:
        return None
    return tuple(tuple(literal for literal in branch if literal) for branch in branches)


class _Literals:
    """A recursive reader of RE2 syntax that keeps only certain literals."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def branches(self, *, top: bool) -> list[list[str]]:
        """The branches of an alternation up to ``)`` (or the end at top level)."""
        branches = [self.sequence()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.sequence())
        if top and self.i != len(self.p):
            raise _GiveUp
        return branches

    def sequence(self) -> list[str]:
        """The literals of a concatenation, up to ``|``, ``)`` or the end."""
        literals: list[str] = []
        run: list[str] = []
        p = self.p
        while self.i < len(p) and p[self.i] not in "|)":
            char = p[self.i]
            inner: list[str] | None = None
            atom: str | None = None
            if char == "(":
                inner = self.group()
            elif char == "[":
                self.skip_class()
            elif char == "\\":
                atom = self.escape()
            elif char in ".^$":
                self.i += 1
            elif char in "*+?":
                raise _GiveUp  # a repetition without an argument: Go refuses it
            else:
                atom = char
                self.i += 1
            required = self.quantifier()
            if atom is not None and required is not None:
                run.append(atom)
                if required:
                    continue
            literals.append("".join(run))
            run = []
            if inner is not None and required is not None:
                literals += inner
        literals.append("".join(run))
        return literals

    def quantifier(self) -> bool | None:
        """Reads a repetition operator after an atom: None when the atom may be absent,
        False when it is there at least once (the run ends after one copy), True when
        there is no operator (the run goes on)."""
        p = self.p
        if self.i >= len(p):
            return True
        char = p[self.i]
        minimum: int | None = None
        if char in "*?":
            minimum = 0
            self.i += 1
        elif char == "+":
            minimum = 1
            self.i += 1
        elif char == "{":
            found = _REPEAT.match(p, self.i)
            if found is None:
                return True  # a literal brace, read as the next atom
            minimum = int(found.group(1))
            self.i = found.end()
        else:
            return True
        if self.i < len(p) and p[self.i] == "?":  # non-greedy: the same literals
            self.i += 1
        if self.i < len(p) and p[self.i] in "*+?{":
            raise _GiveUp  # a repeated repetition: Go refuses it
        return None if minimum == 0 else False

    def group(self) -> list[str]:
        """The literals of a group (none when it holds an alternation)."""
        p = self.p
        self.i += 1
        if p.startswith("?", self.i):
            flags = _FLAGS.match(p, self.i - 1)
            if p.startswith("?P<", self.i) or p.startswith("?<", self.i):
                end = p.find(">", self.i)
                if end < 0:
                    raise _GiveUp
                self.i = end + 1
            elif flags is not None:
                if "i" in flags.group(1):
                    raise _GiveUp
                self.i = flags.end()
                if flags.group(2) == ")":
                    return []  # flags for the rest of the group: no literal of its own
            else:
                raise _GiveUp
        branches = self.branches(top=False)
        if self.i >= len(p) or p[self.i] != ")":
            raise _GiveUp
        self.i += 1
        return branches[0] if len(branches) == 1 else []

    def skip_class(self) -> None:
        """Past a character class (it is never a certain literal)."""
        p = self.p
        i = self.i + 1
        if i < len(p) and p[i] == "^":
            i += 1
        if i < len(p) and p[i] == "]":
            i += 1
        while i < len(p) and p[i] != "]":
            if p.startswith("[:", i):
                end = p.find(":]", i + 2)
                i = end + 2 if end >= 0 else i + 1
            elif p[i] == "\\":
                i += 2
            else:
                i += 1
        if i >= len(p):
            raise _GiveUp
        self.i = i + 1

    def escape(self) -> str | None:
        """The literal character of an escape, None for a class or an assertion."""
        p = self.p
        if self.i + 1 >= len(p):
            raise _GiveUp
        char = p[self.i + 1]
        if char in _CLASS_ESCAPES:
            self.i += 2
            if char in "pP":
                if self.i < len(p) and p[self.i] == "{":
                    end = p.find("}", self.i)
                    if end < 0:
                        raise _GiveUp
                    self.i = end + 1
                else:
                    self.i += 1
            return None
        if char in _ZERO_WIDTH_ESCAPES:
            self.i += 2
            return None
        if char in _CONTROL_ESCAPES:
            self.i += 2
            return _CONTROL_ESCAPES[char]
        if char == "x":
            found = _HEX_ESCAPE.match(p, self.i + 1)
            if found is None:
                raise _GiveUp
            self.i = found.end()
            value = int(found.group(1) or found.group(2), 16)
            if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                raise _GiveUp
            return chr(value)
        if char.isascii() and not char.isalnum() and char != "_":
            self.i += 2
            return char
        raise _GiveUp  # \Q...\E, \C, octal and other escapes: not read here

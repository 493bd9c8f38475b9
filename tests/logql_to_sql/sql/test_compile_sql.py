"""The SQL the compiler emits, case by case (``fixtures/compile.txt``).

A failure means the compiler's output changed. If the change is intended, regenerate the
fixture (``python -m tests.logql_to_sql.sql.regen``) and review the SQL in ``git diff``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable

import pytest

import logql_to_sql as L
from logql_to_sql import ast
from tests.logql_to_sql.sql.compile_cases import Case, assert_compiles, load_cases

CASES = load_cases()


@pytest.mark.parametrize("case", [pytest.param(c, id=c.title[:70]) for c in CASES])
def test_compiles_to_the_fixture_sql(case: Case) -> None:
    assert case.expected, f"no SQL for {case.query!r}: run python -m tests.logql_to_sql.sql.regen"
    assert_compiles(case.query, case.expected, case.options)


def test_a_changed_compiler_fails_the_case() -> None:
    case = CASES[0]
    changed = case.expected.replace("LIMIT 100", "LIMIT 101")
    assert changed != case.expected
    with pytest.raises(AssertionError, match="first difference at SQL line"):
        assert_compiles(case.query, changed, case.options)


_FLAGS: dict[str, Callable[[object], bool]] = {
    "offset": lambda n: isinstance(n, ast.LogRange) and n.offset_ns != 0,
    "without": lambda n: isinstance(n, ast.Grouping) and n.without,
    "bool": lambda n: isinstance(n, ast.BinaryOp) and n.return_bool,
    "strict": lambda n: isinstance(n, ast.LogfmtParser) and n.strict,
    "keep_empty": lambda n: isinstance(n, ast.LogfmtParser) and n.keep_empty,
    "template": lambda n: isinstance(n, ast.LabelFormatOp) and n.template,
    "rename": lambda n: isinstance(n, ast.LabelFormatOp) and not n.template,
}
"""Variants of a node that compile differently, beyond its type."""


def _constructs(node: object) -> set[str]:
    """Names of the node types, enum members and ``_FLAGS`` in a syntax tree."""
    if isinstance(node, enum.Enum):
        return {f"{type(node).__name__}.{node.name}"}
    if isinstance(node, tuple):
        return set().union(*(_constructs(item) for item in node))
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        found = {type(node).__name__} | {name for name, test in _FLAGS.items() if test(node)}
        for field in dataclasses.fields(node):
            found |= _constructs(getattr(node, field.name))
        return found
    return set()


def _every_construct() -> set[str]:
    names = set()
    for name in ast.__all__:
        value = getattr(ast, name)
        if isinstance(value, type) and issubclass(value, enum.Enum):
            names |= {f"{name}.{member.name}" for member in value}
        elif isinstance(value, type) and dataclasses.is_dataclass(value):
            names.add(name)
    return names | set(_FLAGS)


def test_the_fixture_covers_every_construct() -> None:
    covered = set().union(*(_constructs(L.parse(case.query)) for case in CASES))
    assert _every_construct() - covered == set()


def test_the_fixture_sets_every_option() -> None:
    given = {name for case in CASES for name, _ in case.options}
    assert given >= {"limit", "direction", "margin", "json_labels", "step", "steps"}

"""The compile fixture (``fixtures/compile.txt``): LogQL queries and the SQL they compile to.

A case is an optional ``# title:`` line and option lines, the LogQL query on one line, and
the expected SQL on the lines after it, as sqlglot pretty-prints it for DuckDB; cases are
separated by a blank line, and a block of ``#`` lines alone is a comment. Options:

``# limit: 100`` (or ``none``), ``# direction: backward`` (or ``forward``), ``# margin: 2``
and ``# json_labels: left`` for log queries; ``# step: 60`` (seconds) and ``# steps: 5``
for metric queries. Log queries run over ``[START_NS, END_NS)``, metric queries on the grid
``START_NS + k * step``.

A metric plan's other queries follow its main SELECT, each after a ``--`` line naming it
(``-- check: <message>``, ``-- error probe``, ``-- error labels probe``, ``-- error
labels``); ``-- scalar`` and ``-- order: asc`` say how the samples are presented, and
``-- labels final`` / ``-- json labels left`` give a log plan's row shape.

Control characters inside string literals are shown as Unicode control pictures (a tab as
``␉``, a newline as ``␊``) so that the file has no blank line or trailing whitespace inside
a case; ``render`` does this on a copy of the tree, never on what the compiler returns.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from sqlglot import exp

import logql_to_sql as L
from logql_to_sql import ast

__all__ = [
    "END_NS",
    "FIXTURE",
    "START_NS",
    "Case",
    "assert_compiles",
    "format_cases",
    "header",
    "load_cases",
    "render",
    "with_expected",
]

FIXTURE = Path(__file__).parent / "fixtures" / "compile.txt"
START_NS = 1_700_000_000_000_000_000
END_NS = START_NS + 3_600_000_000_000
_OPTIONS = ("title", "limit", "direction", "margin", "json_labels", "step", "steps")


@dataclass(frozen=True)
class Case:
    """One fixture case: the query, its options and the SQL it is expected to compile to."""

    query: str
    expected: str
    options: tuple[tuple[str, str], ...] = ()
    """``(name, value)`` of the ``#`` lines before the query, in file order."""

    @property
    def title(self) -> str:
        """The ``# title:`` (the query when there is none)."""
        return dict(self.options).get("title", self.query)


def load_cases(path: Path = FIXTURE) -> list[Case]:
    """The cases of a fixture file, in file order (a case may lack its SQL: a new query
    whose SQL ``regen`` fills in)."""
    cases = []
    for block in path.read_text().split("\n\n"):
        lines = [line for line in block.split("\n") if line]
        if not lines or all(line.startswith("#") for line in lines):
            continue
        options = []
        while lines[0].startswith("# "):
            name, _, value = lines.pop(0)[2:].partition(":")
            if name not in _OPTIONS:
                raise ValueError(f"{path.name}: unknown option {name!r} before {lines[0]!r}")
            options.append((name, value.strip()))
        cases.append(Case(lines[0], "\n".join(lines[1:]), tuple(options)))
    return cases


def header(path: Path = FIXTURE) -> str:
    """The fixture's leading comment block."""
    first = path.read_text().split("\n\n", 1)[0]
    assert all(line.startswith("#") for line in first.split("\n")), first
    return first


def format_cases(cases: list[Case], header: str) -> str:
    """The fixture file's text: ``header`` (``#`` lines), then each case."""
    blocks = [header.rstrip("\n")]
    for case in cases:
        lines = [f"# {name}: {value}" for name, value in case.options]
        blocks.append("\n".join([*lines, case.query, case.expected]))
    return "\n\n".join(blocks) + "\n"


def render(query: str, options: tuple[tuple[str, str], ...] = ()) -> str:
    """What the compiler emits for ``query`` under ``options``, as the fixture shows it."""
    given = dict(options)
    expr = L.parse(query)
    if isinstance(expr, ast.LogQuery):
        return _log_plan(expr, given)
    assert isinstance(expr, ast.MetricExpr)
    return _metric_plan(expr, given)


def assert_compiles(query: str, sql: str, options: tuple[tuple[str, str], ...] = ()) -> None:
    """Parse and compile ``query``, render it as the fixture does, compare with ``sql``."""
    rendered = render(query, options)
    assert rendered == sql, _difference(sql, rendered)


def _log_plan(expr: ast.LogQuery, given: dict[str, str]) -> str:
    limit = given.get("limit", "100")
    plan = L.compile_log_query(
        expr,
        start_ns=START_NS,
        end_ns=END_NS,
        limit=None if limit == "none" else int(limit),
        direction=L.Direction(given.get("direction", "backward")),
        margin=int(given.get("margin", "2")),
        leave_json_labels=given.get("json_labels") == "left",
    )
    shape = [
        *(["-- labels final"] if plan.labels_final else []),
        *(["-- json labels left"] if plan.json_labels_left else []),
    ]
    return "\n".join([*shape, _pretty(plan.select)])


def _metric_plan(expr: ast.MetricExpr, given: dict[str, str]) -> str:
    grid = L.Grid(
        start_ns=START_NS,
        step_ns=int(given.get("step", "60")) * 10**9,
        steps=int(given.get("steps", "5")),
    )
    plan = L.compile_metric_query(expr, grid=grid)
    parts = [
        *(["-- scalar"] if plan.scalar else []),
        *([f"-- order: {plan.order}"] if plan.order else []),
        _pretty(plan.select),
    ]
    for check, message in plan.checks:
        parts += [f"-- check: {message}", _pretty(check)]
    for probe, labels in plan.error_probes:
        parts += ["-- error probe", _pretty(probe), "-- error labels probe", _pretty(labels)]
    for build in plan.error_labels:
        parts += ["-- error labels", _pretty(build())]
    return "\n".join(parts)


def _pretty(select: exp.Expr) -> str:
    shown = select.copy().transform(_visible_controls, copy=False)
    text = shown.sql(dialect=L.DIALECT, pretty=True)
    assert all(line.strip() and line == line.rstrip() for line in text.split("\n")), text
    return text


def _visible_controls(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.Literal) and node.is_string and _has_control(node.this):
        return exp.Literal.string("".join(_picture(c) for c in node.this))
    return node


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or c == "\x7f" for c in text)


def _picture(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    return "\u2421" if code == 0x7F else char


def _difference(expected: str, rendered: str) -> str:
    expected_lines, rendered_lines = expected.split("\n"), rendered.split("\n")
    for number, (want, got) in enumerate(zip(expected_lines, rendered_lines, strict=False)):
        if want != got:
            return f"first difference at SQL line {number + 1}:\n  expected {want!r}\n  got      {got!r}"
    return f"expected {len(expected_lines)} lines, got {len(rendered_lines)}"


def with_expected(case: Case) -> Case:
    """``case`` with the SQL the compiler emits today (for regenerating the fixture)."""
    return dataclasses.replace(case, expected=render(case.query, case.options))

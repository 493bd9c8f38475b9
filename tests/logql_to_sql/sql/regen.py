"""Rewrite the compile fixture with the SQL the compiler emits today.

    .venv/bin/python -m tests.logql_to_sql.sql.regen
    git diff tests/logql_to_sql/sql/fixtures/compile.txt

Keeps every case's title, options and query, in order, and replaces its SQL. To add a
case, write its query (and options) into the file as a block of its own, run this, and
review the SQL it wrote. A compiler change that should not touch the SQL leaves the file
unchanged; one that should shows exactly which queries changed, and how, in the diff.
"""

from __future__ import annotations

import sys

from tests.logql_to_sql.sql.compile_cases import (
    FIXTURE,
    format_cases,
    header,
    load_cases,
    with_expected,
)


def main() -> int:
    """Regenerate the fixture; print how many cases changed."""
    cases = load_cases()
    updated = []
    for case in cases:
        try:
            updated.append(with_expected(case))
        except Exception as exc:
            raise SystemExit(f"{FIXTURE.name}: {case.title}: {exc}") from exc
    FIXTURE.write_text(format_cases(updated, header()))
    changed = sum(a.expected != b.expected for a, b in zip(cases, updated, strict=True))
    print(f"{FIXTURE}: {len(updated)} cases, {changed} changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

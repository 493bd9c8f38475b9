"""Loader for the fixture files: input line, expected line, blank line between cases."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


def load_pairs(name: str) -> list[tuple[str, str]]:
    """Pairs of (input, expected); ``#`` lines are comments; ``\\n`` in input is a newline."""
    pairs = []
    for block in (FIXTURES / name).read_text().split("\n\n"):
        lines = [ln for ln in block.split("\n") if ln and not ln.startswith("# ")]
        if not lines:
            continue
        query = lines[0].replace("\\n", "\n") if len(lines) == 2 else ""
        pairs.append((query, lines[-1]))
    return pairs


def params(name: str) -> list[object]:
    """The pairs of a fixture file as ``pytest.param`` with readable ids."""
    return [pytest.param(q, e, id=q[:60] or "<empty>") for q, e in load_pairs(name)]

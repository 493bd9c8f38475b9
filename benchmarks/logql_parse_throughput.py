"""Parse throughput (queries per second) of ``logql_to_sql.parse`` over the test corpus.

The corpus is the valid queries of tests/logql_to_sql/syntax/fixtures/identity.txt plus a
fixed set of push label strings for ``parse_labels``.

    python benchmarks/logql_parse_throughput.py --seconds 5
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import logql_to_sql as L

CORPUS = Path(__file__).resolve().parent.parent / "tests/logql_to_sql/syntax/fixtures/identity.txt"
LABELS = [
    '{app="api", env="prod", pod="api-7d9f8b6c5-x2x9z", namespace="default"}',
    '{service_name="checkout", level="info"}',
    '{job="varlogs", filename="/var/log/syslog", host="node-1"}',
    '{a="with \\"escapes\\"", b="x"}',
]


def load_queries() -> list[str]:
    """The valid input queries of the identity fixture."""
    out = []
    for block in CORPUS.read_text().split("\n\n"):
        lines = [ln for ln in block.split("\n") if ln and not ln.startswith("# ")]
        if len(lines) == 2:
            out.append(lines[0])
    return out


def measure(fn: Callable[[str], object], inputs: list[str], seconds: float) -> float:
    """Calls per second of ``fn`` cycling over ``inputs`` for about ``seconds``."""
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for text in inputs:
            fn(text)
        done += len(inputs)
    return done / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    args = parser.parse_args()
    queries = load_queries()
    print(f"corpus: {len(queries)} queries")
    runs: list[tuple[str, Callable[[str], object], list[str], str]] = [
        ("parse (lex+parse+validate)", L.parse, queries, "queries/s"),
        ("parse_expr (no validation)", L.parse_expr, queries, "queries/s"),
        ("to_text(parse(q))", lambda q: L.to_text(L.parse(q)), queries, "queries/s"),
        ("parse_labels", L.parse_labels, LABELS, "label strings/s"),
    ]
    for title, fn, inputs, unit in runs:
        print(f"{title:28} {measure(fn, inputs, args.seconds):>12,.0f} {unit}")


if __name__ == "__main__":
    main()

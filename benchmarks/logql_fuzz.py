"""Fuzz the LogQL front end: random and mutated queries must only raise LogQLError.

Seeds come from the fixture corpus in tests/logql_to_sql/syntax/fixtures/. Each case is parsed
with ``parse``; successes are also printed (``to_text``, ``format_query``) and the
canonical text is parsed again. Exit status 1 if any unexpected exception occurred.

    python benchmarks/logql_fuzz.py --count 1000000 --seed 1
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
import traceback
from pathlib import Path

import logql_to_sql as L

CORPUS_DIR = Path(__file__).resolve().parent.parent / "tests/logql_to_sql/syntax/fixtures"
FRAGMENTS = [
    '{a="b"}', "{", "}", "|=", "!=", "|~", "!~", "|>", "!>", "|", "json", "logfmt", "--strict",
    "regexp", "pattern", "unpack", "line_format", "label_format", "drop", "keep", "decolorize",
    "unwrap", "bytes(", "duration(", "rate(", "sum", "by", "without", "(", ")", "[5m]", "[1h30m]",
    "offset", "-5m", "1KB", "1.5KiB", "5m", "1e3", "0x1p3", "1_000", "-", "+", "*", "/", "%", "^",
    "==", ">", ">=", "<", "<=", "and", "or", "unless", "bool", "on", "ignoring", "group_left",
    "group_right", "topk(", "vector(", "label_replace(", "ip(", '"x"', "`\\d+`", '"\\u00e9"', ",",
    "'a'", "#c\n", "/*", "*/", "//", "\n", " ", "quantile_over_time(0.5,", "__error__", "=~", "=",
]  # fmt: skip


def load_corpus() -> list[str]:
    """All inputs of the fixture files (one query per case)."""
    queries = []
    for name in ("identity.txt", "errors.txt"):
        for block in (CORPUS_DIR / name).read_text().split("\n\n"):
            lines = [ln for ln in block.split("\n") if ln and not ln.startswith("# ")]
            if len(lines) == 2:
                queries.append(lines[0].replace("\\n", "\n"))
    return queries


def mutate(rng: random.Random, text: str) -> str:
    """Apply one to four random edits: char insert/delete/replace, splice, fragment insert."""
    for _ in range(rng.randint(1, 4)):
        pos = rng.randint(0, len(text))
        kind = rng.randrange(6)
        if kind == 0:
            text = (
                text[:pos]
                + chr(rng.choice((rng.randint(32, 126), rng.randint(0, 0x2FFF))))
                + text[pos:]
            )
        elif kind == 1:
            text = text[:pos] + text[pos + rng.randint(1, 5) :]
        elif kind == 2 and text:
            i = rng.randrange(len(text))
            text = text[:i] + rng.choice(FRAGMENTS) + text[i + 1 :]
        elif kind == 3:
            text = text[:pos] + rng.choice(FRAGMENTS) + text[pos:]
        elif kind == 4:
            j = rng.randint(0, len(text))
            text = text[:pos] + text[min(pos, j) : max(pos, j)] + text[pos:]
        else:
            text = text[:pos]
    return text


def random_query(rng: random.Random) -> str:
    return " ".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 14)))


def check(text: str) -> None:
    """Exercise the public API on one input; only LogQLError may escape."""
    try:
        expr = L.parse(text)
    except L.LogQLError:
        with contextlib.suppress(L.LogQLError):
            L.parse_labels(text)
        return
    canonical = L.to_text(expr)
    L.format_query(expr)
    # printing is lossy in places (NaN literals, humanized bytes), so errors are fine
    with contextlib.suppress(L.LogQLError):
        L.parse(canonical)


def run(count: int, seed: int, verbose: bool = True) -> int:
    """Run ``count`` cases; return the number of unexpected exceptions."""
    rng = random.Random(seed)
    corpus = load_corpus()
    failures = 0
    start = time.perf_counter()
    for i in range(count):
        text = random_query(rng) if i % 5 == 0 else mutate(rng, rng.choice(corpus))
        try:
            check(text)
        except Exception:
            failures += 1
            if verbose and failures <= 10:
                print(f"UNEXPECTED on {text!r}:\n{traceback.format_exc()}", file=sys.stderr)
    elapsed = time.perf_counter() - start
    if verbose:
        print(f"{count} cases in {elapsed:.1f}s ({count / elapsed:,.0f}/s), {failures} unexpected")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1_000_000, help="number of cases")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    args = parser.parse_args()
    return 1 if run(args.count, args.seed) else 0


if __name__ == "__main__":
    sys.exit(main())

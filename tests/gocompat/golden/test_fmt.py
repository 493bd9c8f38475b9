"""gocompat's fmt.Sprintf against Go's (fixture: fmt.jsonl, from fmt_gen.go)."""

from __future__ import annotations

from typing import Any

from gocompat.template.printf import sprintf
from tests.gocompat.golden.golden import float_of, records

_TYPES = {
    "int": int,
    "float64": float_of,
    "string": str,
    "bool": lambda text: text == "true",
}


def _value(arg: dict[str, str]) -> Any:
    return _TYPES[arg["t"]](arg["v"])


def test_sprintf() -> None:
    failures = []
    for r in records("fmt", "Sprintf"):
        args = [_value(a) for a in r["args"]]
        got = sprintf(r["format"], args)
        if got != r["out"]:
            failures.append((r["format"], args, r["out"], got))
    assert failures == []

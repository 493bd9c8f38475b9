"""gocompat.durations against Go's time package (fixture: durations.jsonl, from durations_gen.go)."""

from __future__ import annotations

from gocompat.durations import format_go_duration, parse_go_duration
from tests.gocompat.golden.golden import records


def _parse(text: str) -> str:
    try:
        return str(parse_go_duration(text))
    except ValueError as exc:
        return str(exc)


def test_parse_duration() -> None:
    cases = [
        (r["in"], r.get("out") or r["err"], _parse(r["in"]))
        for r in records("durations", "ParseDuration")
    ]
    assert [case for case in cases if case[1] != case[2]] == []


def test_duration_string() -> None:
    cases = [
        (r["in"], r["out"], format_go_duration(int(r["in"])))
        for r in records("durations", "Duration.String")
    ]
    assert [case for case in cases if case[1] != case[2]] == []

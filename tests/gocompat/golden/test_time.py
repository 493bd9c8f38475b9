"""gocompat's time formatting and parsing against Go's (fixture: time.jsonl, from time_gen.go)."""

from __future__ import annotations

from gocompat.template.timefmt import format_time, load_location, time_in
from gocompat.template.timeparse import parse_time
from tests.gocompat.golden.golden import records


def test_format() -> None:
    failures = []
    for r in records("time", "Format"):
        moment = time_in(r["sec"], r["nsec"], load_location(r["zone"]))
        for layout, expected in zip(r["layouts"], r["out"], strict=True):
            got = format_time(moment, layout)
            if got != expected:
                failures.append((r["zone"], r["sec"], layout, expected, got))
    assert failures == []


def _parse(layout: str, text: str, zone: str) -> object:
    try:
        t = parse_time(layout, text, load_location(zone))
    except ValueError:
        return "error"
    return (t.sec, t.nsec, t.offset, t.zone)


def test_parse_in_location() -> None:
    failures = []
    for r in records("time", "ParseInLocation"):
        expected = "error" if "err" in r else (r["sec"], r["nsec"], r["offset"], r["name"])
        got = _parse(r["layout"], r["in"], r["zone"])
        if got != expected:
            failures.append((r["zone"], r["layout"], r["in"], expected, got, r.get("err")))
    assert failures == []

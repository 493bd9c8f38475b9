"""Render limits: no function or loop can allocate past the budget or run past the check."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from gocompat.template import parse_template
from gocompat.template.limits import (
    OutputTooLarge,
    RenderAborted,
    RenderLimits,
    render_limits,
)
from tests.gocompat.template.helpers import assert_renders, case, check

LIMIT = 100_000


def _render(text: str, limits: RenderLimits) -> str:
    with render_limits(limits):
        return parse_template(text).render({"a": "x"}, line="l\n" * 10, timestamp_ns=0)


@pytest.mark.parametrize(
    "text",
    [
        '{{ repeat 100000000 "x" }}',
        '{{ repeat 1000 "abcdefghijklmnopqrstuvwxyz" | repeat 1000 }}',
        '{{ printf "%010000000d" 1 }}',
        '{{ printf "%.10000000f" 1.5 }}',
        '{{ printf "%.10000000d" 1 }}',
        '{{ printf "%*d" 1000000 1 | repeat 1 }}',
        "{{ indent 1000000 __line__ }}",
        "{{ nindent 20000 __line__ }}",
        '{{ alignLeft 1000000 "x" }}',
        '{{ alignRight 1000000 "x" }}',
        '{{ repeat 20000 "x" | replace "x" "yyyyyyyyyy" }}',
        '{{ Replace (repeat 5000 "x") "" "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy" -1 }}',
        '{{ regexReplaceAll "x" (repeat 20000 "x") "${0}${0}${0}${0}${0}${0}${0}${0}${0}${0}" }}',
        '{{ $x := repeat 4000 "ab" }}{{ $x = printf "%s%s%s%s" $x $x $x $x }}'
        '{{ $x = printf "%s%s%s%s" $x $x $x $x }}{{ $x = printf "%s%s%s%s" $x $x $x $x }}',
        '{{ range 1000 }}{{ repeat 200 "x" }}{{ end }}',
        '{{ define "t" }}{{ repeat 2000 "x" }}{{ end }}{{ range 100 }}{{ template "t" }}{{ end }}',
    ],
)
def test_output_beyond_the_limit_aborts_the_render(text: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(OutputTooLarge) as info:
            _render(text, RenderLimits(max_chars=LIMIT))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.limit == LIMIT
    assert peak < 20 * LIMIT  # refused before the large value was built


def test_output_within_the_limit_renders() -> None:
    assert _render('{{ repeat 3 "ab" }}|{{ printf "%05d" 7 }}', RenderLimits(max_chars=12)) == (
        "ababab|00007"
    )


def test_default_limits_bound_a_render_without_any() -> None:
    with pytest.raises(OutputTooLarge):
        parse_template('{{ repeat 100000000 "x" }}').render({}, line="", timestamp_ns=0)


class _Stop(RenderAborted):
    pass


def test_loops_run_the_interrupt_check() -> None:
    calls = 0

    def interrupt() -> None:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise _Stop

    started = time.perf_counter()
    with pytest.raises(_Stop):
        _render("{{ range 1000000000 }}{{ end }}", RenderLimits(interrupt=interrupt))
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Go's fmt reads no width or precision above about 10^7: the verb is lost.
        case('{{ printf "%0100000000d|" 1 }}', "%!(NOVERB)%!(EXTRA int=1)"),
        case('{{ printf "%.100000000f|" 1.5 }}', "%!(NOVERB)%!(EXTRA float64=1.5)"),
        case('{{ printf "%5." 3 }}', "%!.(int=3)"),
        case('{{ printf "%²d" 3 }}', "%!²(int=3)d"),
        case('{{ printf "%*d" 1000001 3 }}', "%!(BADWIDTH)3"),
        case("{{ range $i := 3 }}{{ $i }}{{ end }}", "012"),
        case("{{ range $i := 5 }}{{ if eq $i 2 }}{{ break }}{{ end }}{{ $i }}{{ end }}", "01"),
        case("{{ range 0 }}x{{ else }}none{{ end }}", "none"),
        case('{{ replace "a" "bb" "aXa" }}|{{ Replace "aaa" "a" "bb" 2 }}', "bbXbb|bbbba"),
    ],
)
def test_go_semantics_kept(text: str, expected: str) -> None:
    check(text, expected)


def test_range_over_a_large_int_allocates_nothing_up_front() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(OutputTooLarge):
            _render("{{ range 100000000 }}x{{ end }}", RenderLimits(max_chars=1000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_renders_as_before_without_limits_set() -> None:
    assert_renders('{{ repeat 2 "ab" }}', "abab")

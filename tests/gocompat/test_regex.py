"""Go regex execution on RE2: Go's loops and messages, and linear time on hostile patterns."""

from __future__ import annotations

import threading
import time

import pytest

from gocompat.regex import compile_go, count_matches, replace_all
from gocompat.regex_syntax import matches_empty
from gocompat.template.errors import GoError


@pytest.mark.parametrize(
    ("pattern", "text", "repl", "expected"),
    [
        # An empty match right after a match is skipped (Go), unlike re.sub.
        pytest.param("a*", "baaac", "-", "-b-c-", id="empty-after-match"),
        pytest.param("", "héllo", "-", "-h-é-l-l-o-", id="empty-advances-one-rune"),
        pytest.param("x*", "日本", "_", "_日_本_", id="multibyte-advance"),
        pytest.param("^a", "aaa", "b", "baa", id="caret-only-at-start"),
        pytest.param(r"\ba", "a a", "X", "X X", id="word-boundary-sees-context"),
        pytest.param("a$", "aa\na", "X", "aa\nX", id="dollar-is-end-of-text"),
        pytest.param("(?m)a$", "aa\na", "X", "aX\nX", id="multiline-dollar"),
        pytest.param("(a)(b)?", "ac", "[$1|$2]", "[a|]c", id="unmatched-group-empty"),
        pytest.param("(a)", "a", "$1x", "", id="dollar-name-takes-letters"),
        pytest.param("(a)", "a", "${1}x", "ax", id="braced-number"),
        pytest.param("(?P<w>a)", "a", "<$w>", "<a>", id="named-group"),
        pytest.param("(a)", "a", "$01|$100000000|$9|$", "|||$", id="odd-references"),
        pytest.param("(a)", "a", "$$1 ${1", "$1 ${1", id="literal-dollars"),
        pytest.param("é", "aéb", "€", "a€b", id="utf8-replacement"),
    ],
)
def test_replace_all_follows_go(pattern: str, text: str, repl: str, expected: str) -> None:
    assert replace_all(pattern, text, repl, literal=False) == expected


def test_replace_all_literal_does_not_expand() -> None:
    assert replace_all("a(x*)b", "-ab-axxb-", "$1", literal=True) == "-$1-$1-"


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [("a", "banana", 3), ("", "abc", 4), ("a*", "baaac", 3), ("", "日本", 3), ("z", "abc", 0)],
)
def test_count_matches_follows_go(pattern: str, text: str, expected: int) -> None:
    assert count_matches(pattern, text) == expected


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(", "error parsing regexp: missing closing ): `(`"),
        ("a(?=b)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
        (r"(a)\1", r"error parsing regexp: invalid escape sequence: `\1`"),
        (r"\C", r"error parsing regexp: invalid escape sequence: `\C`"),
        ("a**", "error parsing regexp: invalid nested repetition operator: `**`"),
        ("(a{2}){1000}", "error parsing regexp: invalid repeat count: `{1000}`"),
        ("((a{10}){10}){11}?", "error parsing regexp: invalid repeat count: `{11}?`"),
        ("(a{1000}|b){2}", "error parsing regexp: invalid repeat count: `{2}`"),
        (r"\pL{1000}", r"error parsing regexp: expression too large: `\pL{1000}`"),
    ],
)
def test_compile_errors_carry_go_messages(pattern: str, message: str) -> None:
    with pytest.raises(GoError) as info:
        compile_go(pattern)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "pattern", ["((a{10}){10}){10}", "((a{1000}){0}){1}", "(a{500}){1}", "a{1000}b{1000}"]
)
def test_nested_repeats_within_go_bounds_compile(pattern: str) -> None:
    assert compile_go(pattern).group_count >= 0


def test_catastrophic_pattern_runs_in_linear_time() -> None:
    """The issue's ReDoS: on a backtracking engine this takes hours."""
    line = "a" * 40 + "!"
    started = time.perf_counter()
    assert replace_all("(a+)+$", line, "x", literal=False) == line
    assert count_matches("(a|aa)*b", "a" * 5000) == 0
    assert replace_all("(x+x+)+y", "x" * 100_000, "", literal=False) == "x" * 100_000
    assert time.perf_counter() - started < 2.0


def test_matching_releases_the_gil() -> None:
    """Another thread keeps running while RE2 scans a large text."""
    text = "x" * 20_000_000
    ticks = 0
    done = threading.Event()

    def scan() -> None:
        for _ in range(3):
            count_matches("(x+x+)+y", text)
        done.set()

    worker = threading.Thread(target=scan)
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks > 20


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("", True),
        ("a*", True),
        ("a+", False),
        ("(a*)*", True),
        ("[[:alpha:]]*", True),
        (r"\pL+", False),
        ("(?U)a*?", True),
        ("(?<n>x)?", True),
        (".", False),
        ("(a+)+$", False),
        ("(", None),
    ],
)
def test_matches_empty_on_re2(pattern: str, expected: bool | None) -> None:
    assert matches_empty(pattern) is expected

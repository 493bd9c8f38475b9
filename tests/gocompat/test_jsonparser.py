"""Lenient JSON lookups as the reference's byte scanner answers them."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from gocompat import jsonparser
from gocompat.jsonparser import find_string_field, top_level_values

LEVELS = frozenset({"level", "lvl"})


@pytest.mark.parametrize(
    ("line", "found"),
    [
        pytest.param('{"msg":"a \\"b\\""}', {"msg": ('a \\"b\\"', True)}, id="raw-escapes"),
        pytest.param('{"msg":"a","msg":"b"}', {"msg": ("a", True)}, id="first-duplicate"),
        pytest.param('{"a":{"msg":"x"},"b":["msg"]}', {}, id="nested-and-arrays-skipped"),
        pytest.param('{"m\\u0073g":"x"}', {"msg": ("x", True)}, id="escaped-key"),
        pytest.param('{"msg": 12}', {"msg": ("12", False)}, id="number"),
        pytest.param('{"msg":"x" "y"', {"msg": ("x", True)}, id="lenient-after"),
        pytest.param('{"a":"unterminated, "msg":"x"}', {}, id="swallowed-by-a-string"),
        pytest.param('{"a":1 : "msg":"x"}', {}, id="stray-colon"),
        pytest.param('{{"msg":"x"}}', {}, id="too-deep"),
        pytest.param('["msg", {"msg":"x"}]', {}, id="array"),
    ],
)
def test_top_level_values(line: str, found: dict[str, tuple[str, bool]]) -> None:
    result = top_level_values(line, ("msg",))
    assert {k: v for k, v in result.items() if v[1]} == {k: v for k, v in found.items() if v[1]}
    assert result.keys() == found.keys()


@pytest.mark.parametrize(
    ("line", "max_depth", "found"),
    [
        pytest.param('{"msg":"x","level":"warn"}', 2, "warn", id="top"),
        pytest.param('{"ctx":{"lvl":"debug"},"level":"info"}', 2, "debug", id="document-order"),
        pytest.param('{"a":{"b":{"level":"x"}}}', 2, None, id="below-depth"),
        pytest.param('{"a":{"b":{"level":"x"}}}', 0, "x", id="no-limit"),
        pytest.param('{"level":1,"lvl":"y"}', 2, "y", id="strings-only"),
        pytest.param('{"LEVEL":"x"}', 2, None, id="case-counts"),
        pytest.param('{"a":tru,"level":"x"}', 2, None, id="stops-at-bad-word"),
        pytest.param('{"a":1,}', 2, None, id="trailing-comma"),
        pytest.param('{"level":"x\\"y"}', 2, 'x\\"y', id="raw"),
        pytest.param('{"a":[{"level":"x"}],"level":"y"}', 2, "y", id="arrays-not-entered"),
    ],
)
def test_find_string_field(line: str, max_depth: int, found: str | None) -> None:
    assert find_string_field(line, LEVELS, max_depth) == found


def _random_object(rng: random.Random, depth: int) -> list[tuple[str, Any]]:
    def value() -> Any:
        roll = rng.random()
        if roll < 0.4:
            return rng.choice(["info", "a b", "WARN", "", "err"])
        if roll < 0.55:
            return rng.randint(-5, 100)
        if roll < 0.65:
            return [1, "a"]
        if roll < 0.75:
            return rng.choice([None, True, False])
        return _random_object(rng, depth + 1) if depth < 3 else "z"

    return [(rng.choice(["msg", "level", "a", "lvl"]), value()) for _ in range(rng.randint(0, 4))]


def _dump(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, tuple) for v in value):
        return "{" + ", ".join(f"{json.dumps(k)}:{_dump(v)}" for k, v in value) + "}"
    return json.dumps(value)


def test_decoded_lines_agree_with_the_scanner() -> None:
    # Lines that decode as JSON take a faster path; it must answer as the scanner does.
    rng = random.Random(3)
    for _ in range(5_000):
        line = _dump(_random_object(rng, 0))
        jsonparser._last = ("", None)
        fast = (top_level_values(line, ("msg", "a")), find_string_field(line, LEVELS, 2))
        jsonparser._last = (line, None)  # the line "does not decode": the scanner runs
        slow = (top_level_values(line, ("msg", "a")), find_string_field(line, LEVELS, 2))
        strings = [{k: v for k, v in found[0].items() if v[1]} for found in (fast, slow)]
        assert strings[0] == strings[1], line
        assert fast[0].keys() == slow[0].keys(), line
        assert fast[1] == slow[1], line

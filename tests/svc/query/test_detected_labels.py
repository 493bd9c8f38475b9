"""Which stream labels ``detected_labels`` offers, as the reference's querier chooses them."""

from __future__ import annotations

import pytest

from svc.query.detected_labels import detected_labels, is_id


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("17", True, id="int"),
        pytest.param("-1.5e3", True, id="float"),
        pytest.param("0x1p-2", True, id="hex-float"),
        pytest.param("Inf", True, id="inf"),
        pytest.param("123e4567-e89b-12d3-a456-426614174000", True, id="uuid"),
        pytest.param("{123e4567-e89b-12d3-a456-426614174000}", True, id="uuid-braces"),
        pytest.param("x123e4567-e89b-12d3-a456-426614174000y", True, id="uuid-any-wrapper"),
        pytest.param("urn:uuid:123e4567-e89b-12d3-a456-426614174000", True, id="urn"),
        pytest.param("123e4567e89b12d3a456426614174000", True, id="bare-hex"),
        pytest.param("123e4567-e89b-12d3-a456-42661417400", False, id="short-uuid"),
        pytest.param("web-1", False, id="name"),
        pytest.param("1_000", True, id="go-underscore"),
        pytest.param("1__000", False, id="double-underscore"),
    ],
)
def test_ids(value: str, expected: bool) -> None:
    assert is_id(value) is expected


def test_labels_of_ids_are_left_out_but_booleans_and_static_labels_stay() -> None:
    streams = [
        (("app", "web"), ("pod", "1"), ("flag", "0"), ("id", "7"), ("req", "a"), ("n", "3")),
        (("app", "api"), ("pod", "2"), ("flag", "1"), ("id", "8"), ("req", "9"), ("n", "0")),
        (("app", "api"), ("pod", "3"), ("flag", "1"), ("id", "9"), ("req", "9"), ("n", "1")),
    ]
    assert detected_labels(streams) == [("app", 2), ("flag", 2), ("pod", 3), ("req", 2)]


def test_nothing_detected() -> None:
    assert detected_labels([]) == []

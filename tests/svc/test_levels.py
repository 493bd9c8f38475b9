"""Entry levels as the reference's distributor detects them (detected_level)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gocompat.logfmt import scan_pairs
from svc.levels import LevelDetector, known_level, level_word, normalize_level

DETECTOR = LevelDetector()


@pytest.mark.parametrize(
    ("value", "level"),
    [
        ("WARNING", "warn"),
        ("wrn", "warn"),
        ("Inf", "info"),
        ("INFORMATION", "info"),
        ("dbg", "debug"),
        ("trc", "trace"),
        ("ERR", "error"),
        ("Critical", "critical"),
        ("FATAL", "fatal"),
        ("Notice", "Notice"),
    ],
)
def test_normalize_level(value: str, level: str) -> None:
    assert normalize_level(value) == level


def test_known_level() -> None:
    assert known_level("WARN") == "warn"
    assert known_level("notice") == "unknown"
    assert known_level(None) == "unknown"


@pytest.mark.parametrize(
    ("labels", "metadata", "line", "level"),
    [
        # A detected_level already on the entry wins, normalised.
        ([("level", "info")], [("detected_level", "WARNING")], "error!", "warn"),
        # Then stream labels, in the order of the level field names.
        ([("severity", "error"), ("level", "dbg")], [], "x", "debug"),
        # Then metadata pairs named like level fields.
        ([], [("severity", "fatal")], "info", "fatal"),
        # Then an OpenTelemetry severity number.
        ([], [("severity_number", "9")], "error", "info"),
        ([], [("severity_number", "17")], "", "error"),
        ([], [("severity_number", "0")], "", "unknown"),
        ([], [("severity_number", "-1")], "", "trace"),
        ([], [("severity_number", "25")], "", "unknown"),
        ([], [("severity_number", "x")], "", "info"),
        # A value that is no known level is kept as it is.
        ([("level", "notice")], [], "error", "notice"),
    ],
)
def test_detect_order(
    labels: list[tuple[str, str]], metadata: list[tuple[str, str]], line: str, level: str
) -> None:
    assert DETECTOR.detect(metadata, line, DETECTOR.from_labels(labels)) == level


@pytest.mark.parametrize(
    ("line", "level"),
    [
        # JSON: the first string member named like a level field, case counting.
        ('{"msg":"an error","lvl":"dbg"}', "debug"),
        ('{"ctx":{"level":"WRN"}}', "warn"),
        # Two objects deep is beyond the default depth; the word search finds nothing.
        ('{"a":{"b":{"level":"WRN"}}}', "unknown"),
        ('{"LeVeL":"wrn"}', "unknown"),
        # A value that is no level falls back to the word search over the line.
        ('{"level":"notice","msg":"disk error"}', "error"),
        # logfmt: keys compare case aside; the name listed first wins.
        ("time=x LEVEL=Warning msg=hi", "warn"),
        ("severity=error level=info", "info"),
        ("lvl=debug severity=error", "error"),
        ('level=notice msg="an error happened"', "error"),
        ('level=info msg="unterminated', "info"),
        # Plain text: the leftmost level word with delimiters on both sides.
        ("[WARN] disk almost full", "warn"),
        ("error: disk", "error"),
        ("misc:error happened", "unknown"),
        ("information only", "unknown"),
        ("errors everywhere", "unknown"),
        ("call (err) |fatal|", "error"),
        ("a 'debug' b", "debug"),
        ("info then error", "info"),
        ("CRITICAL", "critical"),
        ("", "unknown"),
    ],
)
def test_from_line(line: str, level: str) -> None:
    assert DETECTOR.detect([], line) == level


def test_custom_fields_and_depth() -> None:
    detector = LevelDetector(fields=["sev"], json_max_depth=0)
    assert detector.detect([], "sev=error") == "error"
    assert detector.detect([], "level=wrn") == "unknown"
    assert detector.from_labels([("level", "error")]) is None
    assert detector.detect([], '{"a":{"b":{"sev":"wrn"}}}') == "warn"


def test_discovery_disabled_keeps_only_a_given_detected_level() -> None:
    detector = LevelDetector(enabled=False)
    assert detector.detect([("detected_level", "WARNING")], "error") == "WARNING"
    assert detector.detect([], "error", detector.from_labels([("level", "error")])) is None
    assert detector.from_labels([("level", "error")]) is None


def test_level_word() -> None:
    assert level_word("request failed with ERROR code") == "error"
    assert level_word("a=warning") == "warn"


_TOKENS = ["level", "LeVel", "lvl", "severity", "=", '"', " ", "\t", "info", "ERROR", "x"]
_TOKENS += ["\\", "\ufffd", "warn", "a=b", "msg", "k"]


@settings(max_examples=3000, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(_TOKENS), max_size=14).map("".join))
def test_logfmt_shortcut_agrees_with_the_full_scan(line: str) -> None:
    # The shortcut for "level=" must find what scanning every pair finds.
    detector = LevelDetector()
    if "=" not in line or line.lstrip().startswith("{"):
        return
    shortcut = detector._plain_level_value(line)
    if shortcut is not None:
        assert shortcut == detector._logfmt_value(scan_pairs(line)[0])

"""Type detection of detected fields: Go's parse order int, float, bool, duration, bytes."""

from __future__ import annotations

import pytest

from svc.query.detected_fields import determine_type


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("200", "int"),
        ("-7", "int"),
        ("+0", "int"),
        ("12345678901234567890", "float"),
        ("1.50", "float"),
        ("1e3", "float"),
        (".5", "float"),
        ("Inf", "float"),
        ("NaN", "float"),
        ("0x1p-2", "float"),
        ("1e400", "string"),
        ("true", "boolean"),
        ("F", "boolean"),
        ("yes", "string"),
        ("1h30m", "duration"),
        ("15ms", "duration"),
        ("1µs", "duration"),
        ("10KB", "bytes"),
        ("1.5 GiB", "bytes"),
        ("2,048", "bytes"),
        ("5k", "bytes"),
        ("1_000", "string"),
        ("", "string"),
        ("hello", "string"),
    ],
)
def test_determine_type(value: str, kind: str) -> None:
    assert determine_type(value) == kind

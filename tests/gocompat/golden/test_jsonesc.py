"""gocompat.jsonesc against Go's encoding/json (fixture: jsonesc.jsonl, from jsonesc_gen.go).

Invalid UTF-8 reaches Python as lone surrogates (``surrogateescape``), one per bad byte.
"""

from __future__ import annotations

from gocompat import jsonesc
from tests.gocompat.golden.golden import records


def test_marshal_string() -> None:
    failures = []
    for r in records("jsonesc", "Marshal"):
        text = bytes.fromhex(r["in"]).decode("utf-8", "surrogateescape")
        for got in (jsonesc.encode(text).decode(), jsonesc.quote(text)):
            if got != r["out"]:
                failures.append((text, r["out"], got))
    assert failures == []

"""Loader for the golden fixtures that the Go programs beside this file print."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["bits_of", "float_of", "records"]

HERE = Path(__file__).parent


def records(name: str, fn: str | None = None) -> Iterator[dict[str, Any]]:
    """The JSON records of ``<name>.jsonl``, only those of Go function ``fn`` if given."""
    with (HERE / f"{name}.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            record: dict[str, Any] = json.loads(line)
            if fn is None or record["fn"] == fn:
                yield record


def float_of(bits_hex: str) -> float:
    """The float64 whose IEEE-754 bits Go printed in hex."""
    value: float = struct.unpack("<d", struct.pack("<Q", int(bits_hex, 16)))[0]
    return value


def bits_of(value: float) -> str:
    """The hex IEEE-754 bits of ``value``, as the generators print them."""
    return format(struct.unpack("<Q", struct.pack("<d", value))[0], "x")

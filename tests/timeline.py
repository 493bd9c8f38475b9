"""The fixed instants the tests push at and query over."""

from __future__ import annotations

__all__ = ["BASE", "SECOND", "WINDOW"]

SECOND = 1_000_000_000
BASE = 1_700_000_000 * SECOND
"""2023-11-14 22:13:20 UTC: entries are pushed from here on."""
WINDOW = {"start": str(BASE - SECOND), "end": str(BASE + 3600 * SECOND)}
"""``start``/``end`` query parameters covering the hour after ``BASE``."""

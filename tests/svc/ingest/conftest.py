"""Shared constants of the ingest tests."""

from __future__ import annotations

from svc.ingest import PushLimits

NOW = 1_700_000_000_000_000_000
LIMITS = PushLimits()

Entry = tuple[int, str] | tuple[int, str, dict[str, str]]

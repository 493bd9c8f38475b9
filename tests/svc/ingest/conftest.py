"""Shared constants of the ingest tests."""

from __future__ import annotations

from svc.ingest import PushLimits

NOW = 1_700_000_000_000_000_000
# Decoding as such: service_name and detected_level discovery have their own tests
# (test_discovery.py), and the OTLP mapping turns service name discovery back on.
LIMITS = PushLimits(discover_service_name=(), discover_log_levels=False)

Entry = tuple[int, str] | tuple[int, str, dict[str, str]]

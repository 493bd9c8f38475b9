"""Per-tenant cache generation numbers: raising one invalidates cached query results.

Numbers are decimal strings that only grow (nanosecond timestamps), persisted in one JSON
file so that a restart never hands out an older generation.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from svc.config import Config, LimitsConfig

__all__ = ["CacheGenerations", "deletion_enabled"]


def deletion_enabled(config: Config, limits: LimitsConfig) -> bool:
    """Whether the deletion API (and its cache generations) is on for a tenant with these
    limits."""
    return config.compactor.retention_enabled and limits.deletion_mode != "disabled"


class CacheGenerations:
    """Cache generation number of every tenant."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._numbers: dict[str, str] | None = None

    def _load(self) -> dict[str, str]:
        if self._numbers is None:
            try:
                raw = json.loads(self.path.read_text())
            except FileNotFoundError:
                raw = {}
            self._numbers = {str(k): str(v) for k, v in raw.items()}
        return self._numbers

    def get(self, tenant: str) -> str:
        """The tenant's generation number; empty until it is first raised."""
        with self._lock:
            return self._load().get(tenant, "")

    def increase(self, tenant: str) -> str:
        """Raise the tenant's generation number and persist it; returns the new number."""
        with self._lock:
            numbers = self._load()
            previous = int(numbers.get(tenant) or 0)
            number = str(max(time.time_ns(), previous + 1))
            numbers[tenant] = number
            self._save(numbers)
            return number

    def _save(self, numbers: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        with temporary.open("w") as handle:
            json.dump(numbers, handle, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(self.path)

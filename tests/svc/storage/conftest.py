"""Fault injection inside the test process (the servers of tests/reliability get it through
the environment instead)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from svc.storage import faults

SetFaults = Callable[..., None]


@pytest.fixture
def set_faults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SetFaults]:
    """``set_faults("wal.write enospc", ...)`` arms faults; ``set_faults()`` clears them."""
    control = tmp_path / "faults.txt"
    monkeypatch.setattr(faults, "_injector", faults._Injector(control))

    def arm(*lines: str) -> None:
        control.write_text("".join(f"{line}\n" for line in lines))

    yield arm

"""The server's heap at start-up is frozen out of the garbage collector's sight."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# uvicorn.run replaced: report what the collector still tracks once the app is built.
_PROBE = """
import gc, sys, time
import uvicorn

def report(*args, **kwargs):
    started = time.perf_counter()
    gc.collect()
    took = time.perf_counter() - started
    print(gc.get_freeze_count(), len(gc.get_objects()), took)

uvicorn.run = report
from svc.__main__ import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_objects_built_at_start_up_are_frozen_before_serving(tmp_path: Path) -> None:
    """Modules, the app and its configuration live as long as the process: a full
    collection that walks them took 70-90 ms, every few seconds under pushes, and held
    up every request meanwhile (benchmarks/RESULTS.md, "Two tenants under load")."""
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            _PROBE,
            f"-common.path-prefix={tmp_path}",
            "-server.http-listen-port=3100",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    frozen, tracked, _ = run.stdout.split()
    assert int(frozen) > 50_000
    assert int(tracked) < int(frozen) // 10

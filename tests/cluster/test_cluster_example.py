"""``examples/cluster/run.py`` runs its whole deployment and checks it: PostgreSQL, an S3
server, two writers, a backend and two readers, every reader seeing both writers' lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parents[2] / "examples" / "cluster" / "run.py"


def test_the_cluster_example_runs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for moment in ("before", "after"):
        for reader in ("reader-1", "reader-2"):
            assert f"{moment} the flush, {reader} sees 40 of 40 lines" in lines
    assert "reader-1 runs: store, members, wal, querier, query-frontend" in lines
    for name in ("writer-1", "writer-2", "backend", "reader-1", "reader-2"):
        log = (tmp_path / name / "svc.log").read_text()
        assert "level=error" not in log, log

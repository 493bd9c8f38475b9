"""``examples/notebook.py`` (and its ``.ipynb`` twin) against a real server: the export it
downloads reads in DuckDB and pyarrow, and the lake reads in place."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.clients import push
from tests.e2e.server import Server
from tests.timeline import BASE, SECOND

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def notebook_cells(script: str) -> list[dict[str, Any]]:
    """The script's ``# %%`` cells as notebook cells (``[markdown]`` ones uncommented)."""
    cells: list[dict[str, Any]] = []
    for block in script.split("# %%")[1:]:
        header, _, body = block.partition("\n")
        lines = body.strip("\n").splitlines()
        if header.strip() == "[markdown]":
            text = [line.removeprefix("#").removeprefix(" ") for line in lines]
            cells.append({"cell_type": "markdown", "metadata": {}, "source": _source(text)})
        else:
            cells.append(
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": _source(lines),
                }
            )
    return cells


def _source(lines: list[str]) -> list[str]:
    return [line + "\n" for line in lines[:-1]] + lines[-1:]


def test_the_notebook_holds_the_scripts_cells() -> None:
    notebook = json.loads((EXAMPLES / "notebook.ipynb").read_text())
    assert notebook["cells"] == notebook_cells((EXAMPLES / "notebook.py").read_text())


def test_the_example_exports_a_day_and_reads_it(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    srv = make_server()
    with srv.client("team-a") as client:
        streams = [
            ({"app": app}, [(BASE + i * SECOND, f"{app} {i}") for i in range(n)])
            for app, n in (("api", 30), ("web", 20))
        ]
        assert push(client, streams).status_code == 204
        assert client.post("/flush").status_code < 300
    with srv.client("team-b") as client:
        assert push(client, [({"app": "other"}, [(BASE, "not a's")])]).status_code == 204
    out = tmp_path / "day.parquet"
    done = subprocess.run(
        [
            sys.executable,
            str(EXAMPLES / "notebook.py"),
            f"--url={srv.url}",
            "--tenant=team-a",
            "--day=2023-11-14",
            f"--data={srv.data_dir}",
            f"--out={out}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "duckdb: entries per app [('api', 30), ('web', 20)]" in done.stdout
    assert "pyarrow: 50 rows, columns ['timestamp', 'labels', 'line']" in done.stdout
    assert "lake: entries per day [('2023-11-14', 50)]" in done.stdout

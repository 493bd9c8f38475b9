"""The ``svc backfill`` command line: flags, usage errors, progress reporting."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from svc.backfill.command import backfill_command, parse_backfill_args, parse_options
from svc.backfill.progress import ProgressReporter
from svc.backfill.run import Summary


def test_flags_and_inputs() -> None:
    flags, inputs = parse_backfill_args(
        ["-tenant=t", "-labels", '{job="x"}', "-dry-run", "a.log", "-", "dir"]
    )
    assert flags == {"tenant": "t", "labels": '{job="x"}', "dry-run": "true"}
    assert inputs == ["a.log", "-", "dir"]
    options = parse_options({"labels": '{job="x", env="prod"}', "label-fields": "a, b"})
    assert options.labels == (("env", "prod"), ("job", "x"))
    assert options.label_fields == ("a", "b")
    with pytest.raises(ValueError, match="invalid -labels"):
        parse_options({"labels": "{job=x}"})


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-nope=1", "a.log"], "flag provided but not defined: -nope"),
        ([], "no input named"),
        (["-format=xml", "a.log"], "unknown -format 'xml'"),
        (["missing.log"], "no such file or directory: missing.log"),
    ],
)
def test_usage_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert backfill_command([f"-common.path-prefix={tmp_path}", *argv]) == 2
    assert message in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_and_log_lines_otherwise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    summary = Summary(lines=1000, bytes=500_000)
    summary.rejects["no timestamp"] = 3
    terminal = _Terminal()
    bar = ProgressReporter(terminal, 1_000_000, interval=0)
    bar(summary, 500_000)
    bar.finish()
    text = terminal.getvalue()
    assert text.startswith("\r[###############---------------]  50.0% 0.5/1.0 MB, 1000 lines")
    assert "3 rejected" in text and text.endswith("\n")
    with caplog.at_level(logging.INFO, logger="svc.backfill"):
        plain = ProgressReporter(io.StringIO(), 1_000_000, interval=0)
        plain(summary, 500_000)
    assert "backfill progress: 0.5/1.0 MB, 1000 lines" in caplog.text


def test_backfill_loads_no_server_modules(tmp_path: Path) -> None:
    """Start-up is a large part of a backfill's CPU: the command imports neither the LogQL
    compiler (sqlglot) nor TLS (pyOpenSSL, cryptography) nor the push decoders, nor (for
    plain text) DuckDB."""
    log = tmp_path / "a.log"
    log.write_text("2025-01-01T00:00:00Z hello\n")
    argv = ["backfill", f"-common.path-prefix={tmp_path / 'data'}", '-labels={job="x"}', str(log)]
    code = (
        "import sys\nfrom svc.__main__ import main\n"
        f"assert main({argv!r}) == 0\n"
        "heavy = ('sqlglot', 'OpenSSL', 'cryptography', 'google', 'litestar', 'uvicorn', 'duckdb')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy\n"
        "    or m.startswith(('logql_to_sql.sql', 'svc.distributor'))\n"
        "    or m in ('svc.ingest.push', 'svc.ingest.otlp')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.splitlines()[-1] == "[]"

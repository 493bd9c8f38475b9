from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_fuzz_small_count() -> None:
    assert _load("logql_fuzz").run(3000, seed=7, verbose=False) == 0


def test_throughput_script_runs(capsys: pytest.CaptureFixture[str]) -> None:
    bench = _load("logql_parse_throughput")
    assert len(bench.load_queries()) > 200
    sys.argv = ["logql_parse_throughput", "--seconds", "0.05"]
    bench.main()
    assert "queries/s" in capsys.readouterr().out

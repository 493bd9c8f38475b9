"""The package layers: ``gocompat`` below ``logql_to_sql`` below ``svc``; the lower two pure.

Checked on the import statements of every module (including imports inside functions), so a
shortcut through a lazy import fails too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Packages a layer must not import, and modules that would mean I/O in a pure layer.
FORBIDDEN = {
    "gocompat": {"svc", "logql_to_sql", "schemas", "duckdb", "litestar", "uvicorn", "httpx"},
    "logql_to_sql": {"svc", "schemas", "duckdb", "litestar", "uvicorn", "httpx", "pyarrow"},
}
IO_MODULES = {"os", "socket", "subprocess", "shutil", "sqlite3", "urllib.request", "pathlib"}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_layers_do_not_import_upper_ones(package: str) -> None:
    offences = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules(package)
        for name in _imports(path)
        if name.split(".")[0] in FORBIDDEN[package]
    ]
    assert offences == []


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_pure_layers_do_no_io(package: str) -> None:
    offences = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules(package)
        for name in _imports(path)
        if name in IO_MODULES
    ]
    assert offences == []

"""The package layers: ``gocompat`` below ``logql_to_sql`` below ``svc``; the lower two pure.

Checked on the import statements of every module (including imports inside functions), so a
shortcut through a lazy import fails too.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
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


def _offences(paths: list[Path], banned: Callable[[str], bool]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in paths
        for name in _imports(path)
        if banned(name)
    ]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_layers_do_not_import_upper_ones(package: str) -> None:
    assert _offences(_modules(package), lambda name: name.split(".")[0] in FORBIDDEN[package]) == []


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_pure_layers_do_no_io(package: str) -> None:
    offences = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules(package)
        for name in _imports(path)
        if name in IO_MODULES
    ]
    assert offences == []


# Inside svc: modules that must not reach up to the named ones.
SERVICE_RULES = {
    "svc/storage": ("svc.ingest", "svc.query", "svc.api"),
    "svc/config_schema.py": ("svc.config",),
    "svc/model.py": ("svc.",),
    "svc/query": ("svc.ingest", "svc.api"),
}


@pytest.mark.parametrize("place", sorted(SERVICE_RULES))
def test_service_modules_do_not_import_upwards(place: str) -> None:
    root = ROOT / place
    paths = sorted(root.rglob("*.py")) if root.is_dir() else [root]
    assert _offences(paths, lambda name: name.startswith(SERVICE_RULES[place])) == []

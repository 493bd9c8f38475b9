"""Secrets in printed configs (``/config`` in every mode, ``-print-config-stderr``) are
masked with the token the reference prints for their type."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.app import InProcessApp

SECRETS: dict[str, Any] = {
    "server": {"http_tls_config": {"key": "-----BEGIN PRIVATE KEY-----"}},
    "ruler": {
        "alertmanager_client": {
            "basic_auth_username": "alerts",
            "basic_auth_password": "am-password",
            "credentials": "am-credentials",
        },
        "remote_write": {
            "clients": {
                "prom": {
                    "url": "http://127.0.0.1:9/api/v1/write",
                    "bearer_token": "rw-token",
                    "basic_auth": {"username": "rw", "password": "rw-password"},
                }
            }
        },
    },
}
SECRET_VALUES = ("PRIVATE KEY", "am-password", "am-credentials", "rw-token", "rw-password")


def _check(shown: dict[str, Any]) -> None:
    """The secrets of ``SECRETS`` as a printed config shows them."""
    assert shown["server"]["http_tls_config"]["key"] == "<secret>"
    manager = shown["ruler"]["alertmanager_client"]
    assert (manager["basic_auth_username"], manager["basic_auth_password"]) == (
        "alerts",
        "********",
    )
    assert manager["credentials"] == "********"
    client = shown["ruler"]["remote_write"]["clients"]["prom"]
    assert client["bearer_token"] == "<secret>"
    assert client["basic_auth"] == {"username": "rw", "password": "<secret>"}


def test_config_endpoint_masks_secrets(make_app: Callable[..., InProcessApp]) -> None:
    srv = make_app(SECRETS)
    with srv.client() as client:
        for mode in ("", "diffs"):
            text = client.get("/config", params={"mode": mode} if mode else {}).text
            assert not [value for value in SECRET_VALUES if value in text]
            _check(yaml.safe_load(text))
        defaults = yaml.safe_load(client.get("/config", params={"mode": "defaults"}).text)
    # An unset Prometheus secret prints as null, an unset flagext one as "".
    assert defaults["server"]["http_tls_config"]["key"] is None
    assert defaults["ruler"]["alertmanager_client"]["basic_auth_password"] == ""


def _verify_with(tmp_path: Path, flag: str) -> str:
    """The standard error of ``-verify-config`` with ``flag`` on a config with secrets."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(SECRETS | {"common": {"path_prefix": str(tmp_path / "d")}}))
    done = subprocess.run(
        [sys.executable, "-m", "svc", f"-config.file={path}", flag, "-verify-config"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert not [value for value in SECRET_VALUES if value in done.stderr]
    return done.stderr


def test_print_config_stderr_masks_secrets(tmp_path: Path) -> None:
    stderr = _verify_with(tmp_path, "-print-config-stderr")
    printed = stderr.split("---\n", 1)[1].split("\n\n", 1)[0]
    _check(yaml.safe_load(printed))


def test_log_config_reverse_order_masks_secrets(tmp_path: Path) -> None:
    stderr = _verify_with(tmp_path, "-log-config-reverse-order")
    logged = [
        line.split(' msg="', 1)[1][:-1]
        for line in stderr.splitlines()
        if line.startswith("level=info ") and ' msg="' in line and "ignored" not in line
    ]
    assert logged[-1] == "target: all"
    assert "    key: <secret>" in logged
    assert logged.index("    key: <secret>") < logged.index("  http_tls_config:")

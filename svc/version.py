"""The service's version and build information (``-version``, build info, the home page)."""

from __future__ import annotations

import getpass
import platform
import subprocess
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

__all__ = ["VERSION", "build_info", "version_text"]

VERSION = "0.1.0"


@cache
def build_info() -> dict[str, str]:
    """Version, revision, branch, build date and user, and the runtime's version."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=5
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    return {
        "version": VERSION,
        "revision": git("rev-parse", "--short=10", "HEAD"),
        "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
        "buildDate": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "buildUser": getpass.getuser(),
        "goVersion": f"{platform.python_implementation()} {platform.python_version()}",
    }


def version_text() -> str:
    """What ``svc -version`` prints, laid out as the reference's ``-version``."""
    info = build_info()
    return (
        f"svc, version {info['version']} (branch: {info['branch'] or 'unknown'},"
        f" revision: {info['revision'] or 'unknown'})\n"
        f"  build user:       {info['buildUser']}\n"
        f"  build date:       {info['buildDate']}\n"
        f"  python version:   {info['goVersion']}\n"
        f"  platform:         {platform.system().lower()}/{platform.machine()}\n"
    )

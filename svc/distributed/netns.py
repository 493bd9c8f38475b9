"""A network namespace with only loopback, for a process that starts a local Ray.

Ray 2.60 binds its GCS server, raylet and workers on every interface and its runtime-env
agent on the machine's address, whatever node address it is given; no setting narrows
them. Inside a new network namespace where ``lo`` is the only interface, every socket it
opens is on 127.0.0.1 and unreachable from outside the namespace. The service is then
reached through a Unix socket (``server.http_listen_unix_socket``): a filesystem socket
crosses network namespaces.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["LOOPBACK_ONLY", "namespace_of", "namespace_processes"]

LOOPBACK_ONLY = ("unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh")
"""Words that run the command after them in a new network namespace with only ``lo`` up
(``unshare`` and ``ip`` from util-linux and iproute2)."""


def namespace_of(pid: int) -> str | None:
    """The network namespace of a process (``net:[inode]``), or None once it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def namespace_processes(namespace: str) -> list[int]:
    """The live (not zombie) processes in a network namespace."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if os.readlink(proc / "ns" / "net") != namespace:
                continue
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(proc.name))
    return found

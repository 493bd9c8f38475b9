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

__all__ = ["loopback_only", "namespace_of", "namespace_processes", "rerun_in_loopback_namespace"]

_INSIDE = "SVC_IN_LOOPBACK_NAMESPACE"


def loopback_only() -> tuple[str, ...]:
    """Words that run the command after them in a new network namespace with only ``lo``
    up (``unshare`` and ``ip`` from util-linux and iproute2). Root needs no user namespace
    (in one, PostgreSQL could not switch to its own user); others map themselves to root
    in a new one to be allowed the network namespace."""
    unshare = ("unshare", "-n") if os.geteuid() == 0 else ("unshare", "-rn")
    return (*unshare, "sh", "-c", 'ip link set lo up && exec "$@"', "sh")


def rerun_in_loopback_namespace(argv: list[str]) -> None:
    """Replace this process by ``argv`` in a new loopback-only namespace, unless it is
    that command already (returns then)."""
    if os.environ.get(_INSIDE) == "1":
        return
    command = [*loopback_only(), *argv]
    os.execvpe(command[0], command, {**os.environ, _INSIDE: "1"})


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

"""The ``querier.ray`` section and the choice of engine (``querier.execution``; svc only).

The reference spells ``querier.engine`` as a block of LogQL engine options, so the choice
between the in-process engine and Ray has a key of its own.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from svc.config_fields import setting

__all__ = ["EXECUTIONS", "RayConfig", "ray_config_errors"]

EXECUTIONS = ("local", "ray")
"""``querier.execution`` values: DuckDB in this process, or DuckDB in Ray actors."""


@dataclass
class RayConfig:
    """Where and how statements run with ``querier.execution: ray`` (``querier.ray:``)."""

    address: str = setting(
        "",
        "Ray cluster to join (`host:port` of its head, or `auto`); empty: start a local Ray "
        "on 127.0.0.1 owned by this process. Ray binds more than the node address: on a "
        "machine with other interfaces, run the process in a network namespace that has "
        "only `lo` (README, deployment modes).",
    )
    workers: int = setting(2, "Long-lived Ray actors executing statements, each with its DuckDB.")
    threads_per_worker: int = setting(1, "DuckDB threads of each actor.")
    file_groups: int = setting(
        0,
        "Groups of files a query's statements are split into, run at once on as many "
        "actors and merged (0: one per worker; 1: no split by files).",
    )
    num_cpus: int = setting(
        0, "CPUs a local Ray may schedule on (0: as many as workers); unused with an address."
    )


def ray_config_errors(execution: str, ray: RayConfig) -> list[str]:
    """What is wrong with the engine choice and its Ray settings."""
    errors = []
    if execution == "ray" and importlib.util.find_spec("ray") is None:
        errors.append("querier.execution: ray needs Ray installed (pip install 'svc[ray]')")
    if execution not in EXECUTIONS:
        errors.append(
            f"querier.execution: unknown engine {execution!r} (one of: {', '.join(EXECUTIONS)})"
        )
    if ray.workers < 1:
        errors.append("querier.ray.workers must be at least 1")
    if ray.threads_per_worker < 1:
        errors.append("querier.ray.threads_per_worker must be at least 1")
    if ray.file_groups < 0:
        errors.append("querier.ray.file_groups must not be negative")
    if ray.num_cpus < 0:
        errors.append("querier.ray.num_cpus must not be negative")
    return errors

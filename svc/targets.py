"""Deployment targets (``-target``): which components an instance runs (SPEC 1, 4.1).

The aggregated roles bundle components as the reference does: ``write`` is the
distributor and the ingester, ``read`` the query frontend and the querier, ``backend``
the query scheduler, index gateway, compactor and ruler; ``all`` runs everything. Each
endpoint group is exposed by the instances that run one of its components.
"""

from __future__ import annotations

from typing import Final

__all__ = ["COMPONENTS", "TARGETS", "components", "runs", "runs_any"]

COMPONENTS: Final = (
    "distributor",
    "ingester",
    "query-frontend",
    "querier",
    "query-scheduler",
    "index-gateway",
    "compactor",
    "ruler",
)

_ROLES: Final = {
    "all": frozenset(COMPONENTS),
    "write": frozenset({"distributor", "ingester"}),
    "read": frozenset({"query-frontend", "querier"}),
    "backend": frozenset({"query-scheduler", "index-gateway", "compactor", "ruler"}),
}

TARGETS: Final = frozenset(_ROLES) | frozenset(COMPONENTS)
"""Every valid ``-target``."""


def components(target: str) -> frozenset[str]:
    """The components an instance of ``target`` runs (none for an unknown target)."""
    if target in _ROLES:
        return _ROLES[target]
    return frozenset({target}) if target in COMPONENTS else frozenset()


def runs(target: str, component: str) -> bool:
    """Whether an instance of ``target`` runs ``component``."""
    return component in components(target)


def runs_any(target: str, *names: str) -> bool:
    """Whether an instance of ``target`` runs one of the components."""
    return not components(target).isdisjoint(names)

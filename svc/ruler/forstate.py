"""Pending and firing alerts kept on disk, so their ``for`` state survives a restart.

Prometheus restores ``activeAt`` from its ``ALERTS_FOR_STATE`` series; the reference,
which cannot read its remote-written series back, re-evaluates the expression instead.
This store keeps the same information locally: after each evaluation of a restored group
that has (or just had) active alerts, ``<directory>/<tenant>/<namespace>/<group>`` holds
the evaluation time and each alert's ``activeAt``. :meth:`AlertingRule.restore` applies
Prometheus' rules (``for_outage_tolerance``, ``for_grace_period``) to it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from svc.ruler.evaluation import Labels
from svc.ruler.group import GroupRuntime
from svc.ruler.store import escape_name

__all__ = ["ForStateStore", "SavedState"]

SavedState = tuple[int, dict[str, dict[Labels, int]]]
"""Time of the last saved evaluation (ns), and per alert name: alert labels -> activeAt."""


class ForStateStore:
    """One small JSON file per rule group, replaced atomically."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._written_empty: set[tuple[str, str, str]] = set()

    def _path(self, key: tuple[str, str, str]) -> Path:
        tenant, namespace, group = key
        return self.directory / escape_name(tenant) / escape_name(namespace) / escape_name(group)

    def save(self, group: GroupRuntime, ts_ns: int) -> None:
        """Record the group's unresolved alerts as of ``ts_ns``."""
        rules = {
            rule.name: [[list(map(list, a.labels)), a.active_at_ns] for a in rule.unresolved()]
            for rule in group.alerting_rules()
        }
        empty = not any(rules.values())
        if empty and group.key in self._written_empty:
            return
        path = self._path(group.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.tmp")
        temp.write_text(json.dumps({"ts": ts_ns, "rules": rules}))
        os.replace(temp, path)
        if empty:
            self._written_empty.add(group.key)
        else:
            self._written_empty.discard(group.key)

    def load(self, key: tuple[str, str, str]) -> SavedState | None:
        """The saved state of a group, or None (never saved, or unreadable)."""
        try:
            data = json.loads(self._path(key).read_text())
            rules = {
                name: {
                    tuple((str(k), str(v)) for k, v in labels): int(active_at)
                    for labels, active_at in alerts
                }
                for name, alerts in data["rules"].items()
            }
            return int(data["ts"]), rules
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def delete(self, key: tuple[str, str, str]) -> None:
        """Forget a group that no longer exists."""
        self._written_empty.discard(key)
        try:
            self._path(key).unlink()
        except OSError:
            return


def restore_group(
    group: GroupRuntime, saved: SavedState | None, now_ns: int, grace_ns: int, tolerance_ns: int
) -> None:
    """Restore the ``for`` state of a group's alerting rules, then mark them restored.

    Rules whose ``for`` is under the grace period are not restored (they would otherwise
    wait longer than their own ``for``); a state older than the outage tolerance is ignored.
    """
    for rule in group.alerting_rules():
        if saved is not None and rule.rule.for_ns >= grace_ns:
            saved_ts, by_rule = saved
            found = by_rule.get(rule.name)
            if found and saved_ts >= now_ns - tolerance_ns:
                rule.restore(found, saved_ts, now_ns, grace_ns)
        rule.restored = True

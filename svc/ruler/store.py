"""Rule storage: the :class:`RuleStore` interface and the writable local directory.

The local layout is the reference's local rule store, ``<directory>/<tenant>/<namespace>``,
each file a rule file (``groups: [...]``) holding the namespace's groups, so rule files
can also be placed there by hand. Unlike the reference's read-only local store this one
accepts writes: a changed namespace file is written to a temporary file, fsynced,
renamed over the old one and the directory fsynced, so a crash leaves the old file or
the new one, never a part. Names are escaped for the file system (``%``, ``/`` and a
leading ``.`` as ``%XX``); names starting with ``.`` on disk are skipped, as are
sub-directories.

Errors::

    RuleStoreError                 store failures ("error parsing <path>: ...")
    ├── GroupNotFoundError         "group does not exist"
    └── NamespaceNotFoundError     "group namespace does not exist"
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from urllib.parse import unquote

from svc.ruler.rulefmt import RuleFormatError, RuleGroup, namespace_document, parse_rule_file
from svc.ruler.validation import validate_groups
from svc.storage.files import fsync_directory

__all__ = [
    "GroupNotFoundError",
    "LocalRuleStore",
    "NamespaceNotFoundError",
    "RuleStore",
    "RuleStoreError",
    "escape_name",
    "unescape_name",
]

Namespaces = dict[str, list[RuleGroup]]


class RuleStoreError(Exception):
    """A rule store operation failed; ``str()`` is the message the API answers."""


class GroupNotFoundError(RuleStoreError):
    """The rule group does not exist."""

    def __init__(self) -> None:
        super().__init__("group does not exist")


class NamespaceNotFoundError(RuleStoreError):
    """The namespace has no rule groups."""

    def __init__(self) -> None:
        super().__init__("group namespace does not exist")


class RuleStore(ABC):
    """Rule groups by tenant and namespace; object stores implement the same calls."""

    @abstractmethod
    def tenants(self) -> list[str]:
        """Tenants that have rule groups stored."""

    @abstractmethod
    def namespaces(self, tenant: str, namespace: str | None = None) -> Namespaces:
        """The tenant's groups by namespace (only ``namespace`` when given)."""

    @abstractmethod
    def get_group(self, tenant: str, namespace: str, name: str) -> RuleGroup:
        """One group; raises :class:`GroupNotFoundError`."""

    @abstractmethod
    def set_group(self, tenant: str, namespace: str, group: RuleGroup) -> None:
        """Create the group, or replace the group of the same name in the namespace."""

    @abstractmethod
    def delete_group(self, tenant: str, namespace: str, name: str) -> None:
        """Delete one group (nothing happens when it does not exist)."""

    @abstractmethod
    def delete_namespace(self, tenant: str, namespace: str) -> None:
        """Delete every group of a namespace; raises :class:`NamespaceNotFoundError`."""


def escape_name(name: str) -> str:
    """A tenant or namespace as a file name: ``%``, ``/``, NUL and a leading ``.`` escaped."""
    out = name.replace("%", "%25").replace("/", "%2F").replace("\0", "%00")
    return "%2E" + out[1:] if out.startswith(".") else out


def unescape_name(name: str) -> str:
    """The tenant or namespace of a file name (:func:`escape_name` undone)."""
    return unquote(name)


class LocalRuleStore(RuleStore):
    """Rule files in a local directory, written atomically."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()

    def _tenant_dir(self, tenant: str) -> Path:
        return self.directory / escape_name(tenant)

    def _path(self, tenant: str, namespace: str) -> Path:
        return self._tenant_dir(tenant) / escape_name(namespace)

    def tenants(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(
            unescape_name(entry.name)
            for entry in self.directory.iterdir()
            if not entry.name.startswith(".") and entry.is_dir()
        )

    def namespaces(self, tenant: str, namespace: str | None = None) -> Namespaces:
        if namespace is not None:
            path = self._path(tenant, namespace)
            return {namespace: self._read(path)} if path.is_file() else {}
        folder = self._tenant_dir(tenant)
        if not folder.is_dir():
            return {}
        found: Namespaces = {}
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith(".") or not entry.is_file():
                continue
            groups = self._read(entry)
            if groups:
                found[unescape_name(entry.name)] = groups
        return found

    def _read(self, path: Path) -> list[RuleGroup]:
        try:
            groups = parse_rule_file(path.read_bytes())
        except (OSError, RuleFormatError) as exc:
            raise RuleStoreError(f"error parsing {path}: {exc}") from exc
        errors = validate_groups(groups)
        if errors:
            raise RuleStoreError(f"error parsing {path}: {errors[0]}")
        return groups

    def get_group(self, tenant: str, namespace: str, name: str) -> RuleGroup:
        for group in self.namespaces(tenant, namespace).get(namespace, []):
            if group.name == name:
                return group
        raise GroupNotFoundError

    def set_group(self, tenant: str, namespace: str, group: RuleGroup) -> None:
        with self._lock:
            path = self._path(tenant, namespace)
            groups = self._read(path) if path.is_file() else []
            kept = [g for g in groups if g.name != group.name]
            self._write(path, sorted([*kept, group], key=lambda g: g.name))

    def delete_group(self, tenant: str, namespace: str, name: str) -> None:
        with self._lock:
            path = self._path(tenant, namespace)
            if not path.is_file():
                return
            groups = self._read(path)
            kept = [g for g in groups if g.name != name]
            if len(kept) == len(groups):
                return
            if kept:
                self._write(path, kept)
            else:
                _remove(path)

    def delete_namespace(self, tenant: str, namespace: str) -> None:
        with self._lock:
            path = self._path(tenant, namespace)
            if not path.is_file():
                raise NamespaceNotFoundError
            _remove(path)

    def _write(self, path: Path, groups: list[RuleGroup]) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fsync_directory(path.parent.parent)
            temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            with temp.open("wb") as handle:
                handle.write(namespace_document(groups).encode())
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, path)
            fsync_directory(path.parent)
        except OSError as exc:
            raise RuleStoreError(str(exc)) from exc


def _remove(path: Path) -> None:
    try:
        path.unlink()
        fsync_directory(path.parent)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RuleStoreError(str(exc)) from exc

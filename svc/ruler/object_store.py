"""Rule groups in an S3 bucket, one object per group, as the reference's object rule store
keeps them: ``rules/<tenant>/<base64url(namespace)>/<base64url(group)>`` (URL-safe base64
with padding).

Each object holds one group as a rule file (``groups: [<group>]``; the reference writes a
protobuf message there). A write is one PUT, so an object is the old group or the new one,
never a part; every process of a deployment reads the same groups.

Errors of the store itself (the bucket unreachable, an unreadable object) are raised as
:class:`~svc.ruler.store.RuleStoreError` with the object's key.
"""

from __future__ import annotations

import base64
import binascii
import contextlib

import pyarrow.fs as pafs

from svc.ruler.rulefmt import RuleFormatError, RuleGroup, namespace_document, parse_rule_file
from svc.ruler.store import (
    GroupNotFoundError,
    NamespaceNotFoundError,
    Namespaces,
    RuleStore,
    RuleStoreError,
)
from svc.ruler.validation import validate_groups

__all__ = ["ObjectGroupNotFoundError", "ObjectRuleStore"]

RULES_PREFIX = "rules/"


class ObjectGroupNotFoundError(GroupNotFoundError):
    """The group does not exist, in the words of the reference's object rule store."""

    def __init__(self) -> None:
        RuleStoreError.__init__(
            self, 'get rule group user="", namespace="", name="": group does not exist'
        )


def _encode(name: str) -> str:
    return base64.urlsafe_b64encode(name.encode()).decode()


def _decode(part: str) -> str | None:
    try:
        return base64.urlsafe_b64decode(part.encode()).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None  # not a key this store wrote


class ObjectRuleStore(RuleStore):
    """Rule groups as objects under ``rules/`` in a bucket."""

    def __init__(self, filesystem: pafs.FileSystem, bucket: str) -> None:
        self.filesystem = filesystem
        self._base = f"{bucket}/{RULES_PREFIX}"

    def _keys(self, under: str) -> list[tuple[str, str, str]]:
        """(tenant, namespace, group key) of the group objects below ``under``."""
        selector = pafs.FileSelector(
            (self._base + under).rstrip("/"), recursive=True, allow_not_found=True
        )
        try:
            infos = self.filesystem.get_file_info(selector)
        except OSError as exc:
            raise RuleStoreError(f"unable to list rule groups: {exc}") from exc
        found = []
        for info in infos:
            parts = info.path[len(self._base) :].split("/")
            if info.type != pafs.FileType.File or len(parts) != 3:
                continue
            namespace = _decode(parts[1])
            if namespace is not None and _decode(parts[2]) is not None:
                found.append((parts[0], namespace, info.path))
        return sorted(found)

    def _read(self, key: str) -> RuleGroup:
        try:
            with self.filesystem.open_input_stream(key) as stream:
                body = stream.read()
            groups = parse_rule_file(body)
        except FileNotFoundError:
            raise
        except (OSError, RuleFormatError) as exc:
            raise RuleStoreError(f"error parsing {key}: {exc}") from exc
        errors = validate_groups(groups)
        if len(groups) != 1 or errors:
            reason = errors[0] if errors else f"{len(groups)} groups in one group object"
            raise RuleStoreError(f"error parsing {key}: {reason}")
        return groups[0]

    def _key(self, tenant: str, namespace: str, name: str) -> str:
        return f"{self._base}{tenant}/{_encode(namespace)}/{_encode(name)}"

    def tenants(self) -> list[str]:
        return sorted({tenant for tenant, _, _ in self._keys("")})

    def namespaces(self, tenant: str, namespace: str | None = None) -> Namespaces:
        under = f"{tenant}/" + ("" if namespace is None else f"{_encode(namespace)}/")
        found: Namespaces = {}
        for _, name, key in self._keys(under):
            try:
                group = self._read(key)
            except FileNotFoundError:  # deleted since the listing
                continue
            found.setdefault(name, []).append(group)
        for groups in found.values():
            groups.sort(key=lambda g: g.name)
        return found

    def get_group(self, tenant: str, namespace: str, name: str) -> RuleGroup:
        try:
            return self._read(self._key(tenant, namespace, name))
        except FileNotFoundError:
            raise ObjectGroupNotFoundError from None

    def set_group(self, tenant: str, namespace: str, group: RuleGroup) -> None:
        body = namespace_document([group]).encode()
        try:
            with self.filesystem.open_output_stream(
                self._key(tenant, namespace, group.name), metadata={}
            ) as stream:
                stream.write(body)
        except OSError as exc:
            raise RuleStoreError(str(exc)) from exc

    def delete_group(self, tenant: str, namespace: str, name: str) -> None:
        try:
            with contextlib.suppress(FileNotFoundError):
                self.filesystem.delete_file(self._key(tenant, namespace, name))
        except OSError as exc:
            raise RuleStoreError(str(exc)) from exc

    def delete_namespace(self, tenant: str, namespace: str) -> None:
        keys = [key for _, _, key in self._keys(f"{tenant}/{_encode(namespace)}/")]
        if not keys:
            raise NamespaceNotFoundError
        for key in keys:
            try:
                with contextlib.suppress(FileNotFoundError):
                    self.filesystem.delete_file(key)
            except OSError as exc:
                raise RuleStoreError(str(exc)) from exc

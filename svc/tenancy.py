"""Tenant identification from ``X-Scope-OrgID`` (SPEC 2.1, 5.2, 5.3, 7.1)."""

from __future__ import annotations

from urllib.parse import quote

from svc.errors import BadRequestError, UnauthorizedError

__all__ = [
    "MAX_TENANT_LENGTH",
    "ORG_ID_HEADER",
    "TenantResolver",
    "tenant_directory_name",
    "validate_tenant_id",
]

ORG_ID_HEADER = "X-Scope-OrgID"
MAX_TENANT_LENGTH = 150
_ALLOWED = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!-_.*'()")


def validate_tenant_id(tenant: str) -> str:
    """Return ``tenant`` when it is a valid tenant ID, else raise with the spec's message."""
    if len(tenant.encode()) > MAX_TENANT_LENGTH:
        raise BadRequestError(f"tenant ID is too long: max {MAX_TENANT_LENGTH} characters")
    if tenant in (".", ".."):
        raise BadRequestError("tenant ID is '.' or '..'")
    for char in tenant:
        if char not in _ALLOWED:
            raise BadRequestError(f"tenant ID '{tenant}' contains unsupported character '{char}'")
    return tenant


def tenant_directory_name(tenant: str) -> str:
    """The partition directory of a tenant: percent-encoded so no glob or path char survives."""
    return "tenant=" + quote(tenant, safe="-_.").replace(".", "%2E")


class TenantResolver:
    """Turns the org-ID header into tenant IDs according to the auth settings."""

    def __init__(self, *, auth_enabled: bool, no_auth_tenant: str, multi_tenant_queries: bool):
        self.auth_enabled = auth_enabled
        self.no_auth_tenant = no_auth_tenant
        self.multi_tenant_queries = multi_tenant_queries

    def single(self, header: str | None) -> str:
        """The one tenant of a request that must name exactly one (push, tail, admin)."""
        tenants = self._parse(header)
        if len(tenants) > 1:
            raise BadRequestError("multiple org IDs present")
        return tenants[0]

    def for_query(self, header: str | None) -> tuple[str, ...]:
        """The tenants of a query: several only when multi-tenant queries are enabled."""
        tenants = self._parse(header)
        if len(tenants) > 1 and not self.multi_tenant_queries:
            raise BadRequestError("multiple org IDs present")
        return tenants

    def _parse(self, header: str | None) -> tuple[str, ...]:
        if not self.auth_enabled:
            return (self.no_auth_tenant,)
        if header is None or header == "":
            raise UnauthorizedError("no org id")
        seen: list[str] = []
        for tenant in header.split("|"):
            validate_tenant_id(tenant)
            if tenant not in seen:
                seen.append(tenant)
        return tuple(seen)

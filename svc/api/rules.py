"""The rules API (SPEC 4.5, RULER.md 2-3): list, get, create or replace, delete.

Mounted at ``/svc/api/v1/rules``, ``/loki/api/v1/rules`` and ``/api/prom/rules``. Bodies
follow the reference handler by handler: YAML (``application/yaml``) on reads, the JSON
envelope with 202 on writes, Go ``http.Error`` texts for most failures and a JSON
envelope (sniffed as text by Go, hence ``text/plain``) for the path and tenant ones.
"""

from __future__ import annotations

import asyncio
import posixpath
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from litestar import Request, Response, delete, get, post
from litestar.exceptions import InternalServerException
from litestar.handlers import HTTPRouteHandler

from svc.api.common import org_header, request_params, runtime
from svc.api.ops import error_text
from svc.errors import BadRequestError, UnauthorizedError
from svc.ruler.rulefmt import (
    RuleFormatError,
    RuleGroup,
    group_document,
    namespaces_document,
    parse_group,
)
from svc.ruler.service import Ruler
from svc.ruler.store import (
    GroupNotFoundError,
    NamespaceNotFoundError,
    RuleStore,
    RuleStoreError,
)
from svc.ruler.validation import validate_groups

__all__ = ["RULES_ROUTES", "envelope", "envelope_error", "ruler_tenant"]

_PREFIXES = ("/svc/api/v1/rules", "/loki/api/v1/rules", "/api/prom/rules")
_YAML = "application/yaml"
_encode = msgspec.json.Encoder().encode


class _Answer(Exception):
    """Stop handling and send this response."""

    def __init__(self, response: Response[bytes]) -> None:
        self.response = response


def _go_json(payload: Any) -> bytes:
    """``json.Marshal``: HTML characters escaped, no trailing newline."""
    return (
        _encode(payload)
        .replace(b"<", b"\\u003c")
        .replace(b">", b"\\u003e")
        .replace(b"&", b"\\u0026")
    )


def envelope(data: Any, status: int) -> Response[bytes]:
    """A success envelope (``application/json``)."""
    body = {"status": "success", "data": data, "errorType": "", "error": ""}
    return Response(_go_json(body), status_code=status, media_type="application/json")


def envelope_error(message: str, status: int) -> Response[bytes]:
    """An error envelope as the reference's ``respondError`` writes it (no content type set,
    so Go sniffs ``text/plain``)."""
    kind = "bad_data" if status == 400 else "server_error"
    body = {"status": "error", "data": None, "errorType": kind, "error": message}
    return Response(_go_json(body), status_code=status, media_type="text/plain")


def _paths(suffix: str) -> list[str]:
    return [prefix + suffix for prefix in _PREFIXES]


def path_unescape(text: str) -> str:
    """Go's ``url.PathUnescape``; raises ValueError with Go's message."""
    out = bytearray()
    i = 0
    raw = text.encode()
    while i < len(raw):
        if raw[i] == 0x25:  # %
            pair = raw[i + 1 : i + 3]
            if len(pair) < 2 or not all(chr(c) in "0123456789abcdefABCDEF" for c in pair):
                bad = raw[i : i + 3].decode(errors="replace")
                raise ValueError(f'invalid URL escape "{bad}"')
            out.append(int(pair, 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode(errors="replace")


def _is_local(path: str) -> bool:
    """Go's ``filepath.IsLocal`` on Unix: relative, non-empty, not escaping upwards."""
    if not path or path.startswith("/"):
        return False
    if {".", ".."} & set(path.split("/")):
        path = posixpath.normpath(path)
    return not (path == ".." or path.startswith("../"))


# The reference answers the next two classes of client mistakes (a path segment that does
# not unescape or leaves its directory, an invalid tenant) with a 500 envelope; we keep its
# messages and envelope but answer 400 ``bad_data``: nothing a client sends may be a 5xx.
def _name_param(value: str, what: str) -> str:
    try:
        name = path_unescape(value)
    except ValueError as exc:
        raise _Answer(envelope_error(str(exc), 400)) from exc
    if not _is_local(name):
        raise _Answer(envelope_error(f"invalid {what}: path traversal not allowed", 400))
    return name


def _names(request: Request[Any, Any, Any]) -> tuple[str, str]:
    """The namespace and group name of a ``/rules/{namespace}/{groupName}`` path."""
    params = request.path_params
    namespace = _name_param(params["namespace"], "namespace")
    return namespace, _name_param(params["group_name"], "groupname")


def _ruler(request: Request[Any, Any, Any]) -> Ruler:
    found = runtime(request).ruler
    assert found is not None, "rules routes are mounted only with a ruler"
    return found


def ruler_tenant(request: Request[Any, Any, Any]) -> str:
    """The request's one tenant: 401 without the header (auth on), else BadRequestError for
    an invalid ID or several, which each ruler endpoint answers in its own way."""
    rt = runtime(request)
    header = org_header(request)
    if rt.config.auth_enabled and not header:
        raise UnauthorizedError("no org id")
    return rt.resolver.single(header)


def _tenant(request: Request[Any, Any, Any]) -> str:
    """The request's one tenant; any tenant error but a missing header is ``no org id``."""
    try:
        return ruler_tenant(request)
    except BadRequestError as exc:
        raise _Answer(envelope_error("no org id", 400)) from exc


async def _answer(work: Callable[[], Awaitable[Response[bytes]]]) -> Response[bytes]:
    try:
        return await work()
    except _Answer as answer:
        return answer.response


def _label_filter(text: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(",") if text else []:
        name, sep, value = item.partition(":")
        if not sep:
            raise _Answer(error_text(f"invalid label filter {item!r}: want name:value", 400))
        pairs.append((name, value.split(":")[0]))
    return pairs


def _filtered(groups: list[RuleGroup], wanted: list[tuple[str, str]]) -> list[RuleGroup]:
    kept = []
    for group in groups:
        rules = tuple(
            rule for rule in group.rules if any(rule.labels.get(n) == v for n, v in wanted)
        )
        if rules:
            kept.append(RuleGroup(group.name, group.interval_ns, group.limit, rules))
    return kept


async def _list(request: Request[Any, Any, Any], namespace: str | None) -> Response[bytes]:
    tenant = _tenant(request)
    if namespace is not None:
        namespace = _name_param(namespace, "namespace")
    wanted = _label_filter((await request_params(request)).get("labels") or "")
    ruler = _ruler(request)
    try:
        found = await asyncio.to_thread(ruler.store.namespaces, tenant, namespace)
    except RuleStoreError as exc:
        return error_text(str(exc), 400)
    if not found:
        return error_text("no rule groups found", 404)
    if wanted:
        found = {ns: kept for ns, groups in found.items() if (kept := _filtered(groups, wanted))}
    return Response(namespaces_document(found).encode(), media_type=_YAML)


@get(_paths(""))
async def list_rules(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Every rule group of the tenant, by namespace (YAML)."""
    return await _answer(lambda: _list(request, None))


@get(_paths("/{namespace:str}"))
async def list_namespace(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The rule groups of one namespace (YAML)."""
    return await _answer(lambda: _list(request, request.path_params["namespace"]))


@get(_paths("/{namespace:str}/{group_name:str}"))
async def get_rule_group(request: Request[Any, Any, Any]) -> Response[bytes]:
    """One rule group (YAML)."""

    async def work() -> Response[bytes]:
        tenant = _tenant(request)
        ns, name = _names(request)
        try:
            group = await asyncio.to_thread(_ruler(request).store.get_group, tenant, ns, name)
        except GroupNotFoundError as exc:
            return error_text(str(exc), 404)
        except RuleStoreError as exc:
            return error_text(str(exc), 400)
        return Response(group_document(group).encode(), media_type=_YAML)

    return await _answer(work)


@post(_paths("/{namespace:str}"), status_code=202)
async def create_rule_group(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Create or replace a rule group: checks in the reference's order (RULER.md 2.1)."""

    async def work() -> Response[bytes]:
        tenant = _tenant(request)
        ns = _name_param(request.path_params["namespace"], "namespace")
        try:
            body = await request.body()
        except InternalServerException as exc:  # the client went away mid-body
            return error_text(str(exc.detail), 400)
        try:
            group = parse_group(body)
        except RuleFormatError:
            return error_text("unable to decoded rule group", 400)
        errors = validate_groups([group])
        if errors:
            return error_text(", ".join(errors), 400)
        ruler = _ruler(request)
        max_rules, max_groups = ruler.group_limits(tenant)
        if 0 < max_rules < len(group.rules):
            return error_text(
                f"per-user rules per rule group limit (limit: {max_rules} actual: "
                f"{len(group.rules)}) exceeded",
                400,
            )
        try:
            existing = await asyncio.to_thread(ruler.store.namespaces, tenant)
        except RuleStoreError as exc:
            return error_text(str(exc), 500)
        count = sum(len(groups) for groups in existing.values()) + 1
        if 0 < max_groups < count:
            return error_text(
                f"per-user rule groups limit (limit: {max_groups} actual: {count}) exceeded", 400
            )
        try:
            await asyncio.to_thread(ruler.store.set_group, tenant, ns, group)
        except RuleStoreError as exc:
            return error_text(str(exc), 500)
        ruler.request_sync()
        return envelope(None, 202)

    return await _answer(work)


async def _deleted(
    request: Request[Any, Any, Any], change: Callable[[RuleStore], None]
) -> Response[bytes]:
    """Apply a delete to the store: 202, 404 for a missing namespace, else a 500 envelope."""
    ruler = _ruler(request)
    try:
        await asyncio.to_thread(change, ruler.store)
    except NamespaceNotFoundError as exc:
        return error_text(str(exc), 404)
    except RuleStoreError as exc:
        return envelope_error(str(exc), 500)
    ruler.request_sync()
    return envelope(None, 202)


@delete(_paths("/{namespace:str}"), status_code=202)
async def delete_namespace(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Delete every group of a namespace."""

    async def work() -> Response[bytes]:
        tenant = _tenant(request)
        ns = _name_param(request.path_params["namespace"], "namespace")
        return await _deleted(request, lambda store: store.delete_namespace(tenant, ns))

    return await _answer(work)


@delete(_paths("/{namespace:str}/{group_name:str}"), status_code=202)
async def delete_rule_group(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Delete one group (202 also when it does not exist)."""

    async def work() -> Response[bytes]:
        tenant = _tenant(request)
        ns, name = _names(request)
        return await _deleted(request, lambda store: store.delete_group(tenant, ns, name))

    return await _answer(work)


RULES_ROUTES: list[HTTPRouteHandler] = [
    list_rules,
    list_namespace,
    get_rule_group,
    create_rule_group,
    delete_namespace,
    delete_rule_group,
]

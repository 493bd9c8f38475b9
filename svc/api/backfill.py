"""``POST /svc/api/v1/backfill``: ``svc backfill`` for an uploaded body (one tenant), for
clients that cannot reach the data directory. Off unless ``backfill.enabled``.

Query parameters are the command's flags: ``format``, ``labels``, ``label_fields``,
``time_field``, ``time_format``, ``time_regex``, ``strict`` and ``dry_run``. A body sent
with ``Content-Encoding: gzip`` or ``zstd`` is decompressed. The body is spooled to a file
under the data directory, then imported like a file (same validation, manifest and
single catalog transaction). The answer is the summary as JSON; ``strict`` and a bad
line answers 400 with its ``body:line: reason``.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from pathlib import Path
from typing import Any

from litestar import Request, Response, post

from svc.api.common import api_paths, org_header, request_params, runtime
from svc.api.responses import json_response
from svc.backfill.command import parse_options
from svc.backfill.formats import FORMATS
from svc.backfill.inputs import Source
from svc.backfill.run import BackfillSettings, Summary, run_backfill
from svc.errors import BadRequestError, NotFoundError, PayloadTooLargeError

__all__ = ["backfill_upload"]

UPLOAD_DIRECTORY = "backfill-uploads"
_SUFFIXES = {"gzip": ".gz", "zstd": ".zst", "identity": "", "": ""}


def _flag(value: str | None) -> bool:
    return (value or "").lower() in ("1", "true", "yes")


def _summary(summary: Summary) -> dict[str, Any]:
    return {
        "imported": summary.imported,
        "alreadyImported": bool(summary.skipped),
        "lines": summary.lines,
        "entries": summary.entries,
        "bytes": summary.bytes,
        "streams": len(summary.streams),
        "days": sorted(summary.days),
        "files": summary.files,
        "rejected": dict(summary.rejects),
        "rejects": summary.reported,
        "seconds": round(summary.seconds, 3),
    }


@post(api_paths("/backfill"), status_code=200)
async def backfill_upload(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Import the uploaded body into the tenant's lake; answers the summary."""
    rt = runtime(request)
    config = rt.config.backfill
    if not config.enabled:
        raise NotFoundError("backfill is disabled (backfill.enabled: false)")
    tenant = rt.resolver.single(org_header(request))
    params = await request_params(request)
    fmt = params.get("format") or "auto"
    if fmt not in FORMATS:
        raise BadRequestError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    flags = {
        flag: value
        for flag, name in (
            ("labels", "labels"),
            ("label-fields", "label_fields"),
            ("time-field", "time_field"),
            ("time-format", "time_format"),
            ("time-regex", "time_regex"),
        )
        if (value := params.get(name))
    }
    try:
        options = parse_options(flags)
    except ValueError as exc:
        raise BadRequestError(str(exc)) from None
    encoding = (request.headers.get("content-encoding") or "").strip().lower()
    if encoding not in _SUFFIXES:
        raise BadRequestError(f"unsupported content encoding {encoding}: gzip or zstd")
    rt.require_ready()
    root = Path(rt.config.common.path_prefix)
    path = await _spool(request, root, _SUFFIXES[encoding], config.max_body_size)
    try:
        settings = BackfillSettings(
            root=root,
            tenant=tenant,
            limits=rt.distributor.push_limits(rt.limits_for(tenant)),
            options=options,
            format=fmt,
            row_group_rows=rt.config.ingester.row_group_rows,
            strict=_flag(params.get("strict")),
            dry_run=_flag(params.get("dry_run")),
        )
        source = Source("body", path, path.stat().st_size)
        summary = await asyncio.to_thread(run_backfill, settings, [source])
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
    return json_response({"status": "success", "data": _summary(summary)})


async def _spool(request: Request[Any, Any, Any], root: Path, suffix: str, limit: int) -> Path:
    """Write the body to a file of its own under the data directory (413 over ``limit``)."""
    length = request.headers.get("content-length")
    too_large = f"backfill body over backfill.max_body_size ({limit} bytes)"
    if length is not None and length.isdigit() and int(length) > limit:
        raise PayloadTooLargeError(too_large)
    directory = root / UPLOAD_DIRECTORY
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{uuid.uuid4().hex}{suffix}"
    size = 0
    try:
        with path.open("wb") as file:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise PayloadTooLargeError(too_large)
                file.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path

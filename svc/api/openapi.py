"""The OpenAPI 3 description of the HTTP API, served at ``/svc/api/v1/openapi.json``.

Written by hand from one table of operations (the handlers read their parameters from the
query string or form themselves, so nothing can be generated from their signatures). A
test checks that the table and the application's routes list the same paths and methods.
Every ``/svc/api/v1/...`` operation is also served at ``/loki/api/v1/...``; the aliases
are listed with the same description. The WebSocket ``tail`` is not an HTTP operation.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from litestar import Response, get

from svc.api.responses import json_response
from svc.backfill.formats import FORMATS as BACKFILL_FORMATS

__all__ = ["OPERATIONS", "Operation", "openapi_document", "openapi_json"]

_TENANT: Final = {
    "name": "X-Scope-OrgID",
    "in": "header",
    "required": False,
    "description": "Tenant ID (`a|b` for multi-tenant queries); required with auth_enabled.",
    "schema": {"type": "string", "maxLength": 150},
}


def _param(name: str, description: str, **schema: Any) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": schema.pop("required", False),
        "description": description,
        "schema": schema or {"type": "string"},
    }


QUERY = _param("query", "LogQL expression.", type="string", format="logql", required=True)
SELECTOR = _param("query", "Stream selector.", type="string", format="logql")
START = _param("start", "Start: ns or s epoch, float seconds or RFC 3339.")
END = _param("end", "End, in the same forms as start.")
SINCE = _param("since", "Duration before end, when start is omitted.")
LIMIT = _param("limit", "Maximum entries or series.", type="integer")
STEP = _param("step", "Duration or float seconds.")
DIRECTION = _param(
    "direction", "Order of log lines.", type="string", enum=["forward", "backward", "FORWARD"]
)
TIME = _param("time", "Evaluation time.")
INTERVAL = _param("interval", "Minimum spacing of returned entries.")
MATCH = {
    "name": "match[]",
    "in": "query",
    "required": True,
    "description": "Stream selectors (repeatable).",
    "schema": {"type": "array", "items": {"type": "string", "format": "logql"}},
    "style": "form",
    "explode": True,
}
TARGET_LABELS = _param("targetLabels", "Comma-separated labels to aggregate into.")
AGGREGATE_BY = _param("aggregateBy", "series or labels.", type="string", enum=["series", "labels"])
LINE_LIMIT = _param("line_limit", "Lines scanned.", type="integer")
FLUSH_TENANT = _param("tenant", "Tenant to flush.", type="string")
HEAD_START = _param("start", "Start, integer Unix nanoseconds.", type="integer", required=True)
HEAD_END = _param("end", "End (excluded), integer Unix nanoseconds.", type="integer", required=True)
_ARROW: Final = {"application/vnd.apache.arrow.stream": {"schema": {"type": "string"}}}
_FRAMES: Final = {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}
DELETE_QUERY = _param(
    "query", "Log selector with optional line filters.", type="string", format="logql"
)
DELETE_START = _param("start", "RFC 3339 or 10-digit Unix seconds (required).")
MAX_INTERVAL = _param("max_interval", "Largest shard, a Go duration (s, m, h).")
REQUEST_ID = _param("request_id", "ID of the delete request.")
FORCE = _param("force", "true cancels a partly processed request.")
QUERYTIME = _param("for_querytime_filtering", "true: unfinished requests only (sqlite store).")
SQL_QUERY = _param("query", "SQL text (on POST also the body, or a form or JSON field).")

_TEXT: Final = {"text/plain": {"schema": {"type": "string"}}}
_HTML: Final = {"text/html": {"schema": {"type": "string"}}}
_ANY: Final = {"*/*": {"schema": {"type": "string"}}}
_JSON: Final = {"application/json": {"schema": {"type": "object"}}}
_ERRORS: Final = {
    "400": {"description": "Bad request (message in the body).", "content": _TEXT},
    "401": {"description": "No tenant (`no org id`).", "content": _TEXT},
    "431": {"description": "Request line and headers over 1 MiB.", "content": _TEXT},
    "504": {"description": "Query timed out.", "content": _TEXT},
}
_EXPORT: Final = {
    "application/vnd.columnar.parquet": {"schema": {"type": "string", "format": "binary"}},
    "application/x-ndjson": {"schema": {"type": "string"}},
}
BACKFILL_BODY: Final = {
    "required": True,
    "content": {
        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
        "text/plain": {"schema": {"type": "string"}},
    },
}
_LABELS_SCHEMA: Final = {
    "type": "object",
    "additionalProperties": {"type": "string"},
}
PUSH_BODY: Final = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["streams"],
                "properties": {
                    "streams": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["stream", "values"],
                            "properties": {
                                "stream": _LABELS_SCHEMA,
                                "values": {
                                    "type": "array",
                                    "items": {
                                        "type": "array",
                                        "minItems": 2,
                                        "maxItems": 3,
                                        "prefixItems": [
                                            {"type": "string", "description": "ns epoch"},
                                            {"type": "string", "description": "log line"},
                                            _LABELS_SCHEMA,
                                        ],
                                    },
                                },
                            },
                        },
                    }
                },
            }
        },
        "application/x-protobuf": {
            "schema": {"type": "string", "format": "binary"},
        },
    },
}
OTLP_BODY: Final = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    "resourceLogs": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "resource": {"type": "object"},
                                "scopeLogs": {"type": "array", "items": {"type": "object"}},
                            },
                        },
                    }
                },
            }
        },
        "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}},
    },
}
RULE_GROUP_BODY: Final = {
    "required": True,
    "content": {"application/yaml": {"schema": {"type": "string"}}},
}
_YAML: Final = {"application/yaml": {"schema": {"type": "string"}}}
RULE_FILTERS = (
    _param("type", "alert or record."),
    _param("file", "Namespaces to list (repeatable)."),
    _param("rule_group", "Groups to list (repeatable)."),
    _param("rule_name", "Rules to list (repeatable)."),
)
SQL_BODY: Final = {
    "required": False,
    "content": {
        "text/plain": {"schema": {"type": "string"}},
        "application/sql": {"schema": {"type": "string"}},
        "application/json": {
            "schema": {
                "type": "object",
                "properties": {
                    name: {"type": "string"} for name in ("query", "start", "end", "since")
                },
            }
        },
        "application/x-www-form-urlencoded": {"schema": {"type": "object"}},
    },
}
SQL_RESULTS: Final = {
    **_JSON,
    "text/csv": {"schema": {"type": "string"}},
    "application/vnd.columnar.parquet": {"schema": {"type": "string", "format": "binary"}},
    "application/vnd.apache.parquet": {"schema": {"type": "string", "format": "binary"}},
    "application/vnd.apache.arrow.stream": {"schema": {"type": "string", "format": "binary"}},
}
FORM_BODY: Final = {
    "required": False,
    "content": {"application/x-www-form-urlencoded": {"schema": {"type": "object"}}},
}


class Operation:
    """One row of the table: a path, its methods and what they take and answer."""

    __slots__ = ("body", "methods", "params", "path", "responses", "summary")

    def __init__(
        self,
        path: str,
        methods: str,
        summary: str,
        params: tuple[dict[str, Any], ...] = (),
        *,
        body: dict[str, Any] | None = None,
        ok: str = "200",
        ok_type: dict[str, Any] = _JSON,
    ) -> None:
        self.path = path
        self.methods = tuple(methods.split())
        self.summary = summary
        self.params = params
        self.body = body
        self.responses = {
            ok: {"description": "Success.", "content": ok_type}
            if ok != "204"
            else {"description": "Accepted."}
        }


_API = "/svc/api/v1"
_RANGE = (START, END, SINCE)
OPERATIONS: Final = (
    Operation(f"{_API}/push", "POST", "Push log entries.", body=PUSH_BODY, ok="204"),
    Operation("/otlp/v1/logs", "POST", "Push OTLP logs.", body=OTLP_BODY),
    Operation(
        f"{_API}/query",
        "GET POST",
        "Instant query.",
        (QUERY, LIMIT, TIME, DIRECTION),
        body=FORM_BODY,
    ),
    Operation(
        f"{_API}/query_range",
        "GET POST",
        "Range query.",
        (QUERY, LIMIT, *_RANGE, STEP, INTERVAL, DIRECTION),
        body=FORM_BODY,
    ),
    Operation(f"{_API}/labels", "GET", "Label names.", (*_RANGE, SELECTOR)),
    Operation(f"{_API}/label/{{name}}/values", "GET", "Label values.", (*_RANGE, SELECTOR)),
    Operation(f"{_API}/series", "GET POST", "Streams.", (MATCH, *_RANGE), body=FORM_BODY),
    Operation(
        f"{_API}/index/stats", "GET POST", "Index statistics.", (SELECTOR, *_RANGE), body=FORM_BODY
    ),
    Operation(
        f"{_API}/index/volume",
        "GET POST",
        "Volume.",
        (QUERY, *_RANGE, LIMIT, TARGET_LABELS, AGGREGATE_BY),
        body=FORM_BODY,
    ),
    Operation(
        f"{_API}/index/volume_range",
        "GET POST",
        "Volume over time.",
        (QUERY, *_RANGE, LIMIT, STEP, TARGET_LABELS, AGGREGATE_BY),
        body=FORM_BODY,
    ),
    Operation(f"{_API}/patterns", "GET", "Detected patterns.", (QUERY, *_RANGE, STEP)),
    Operation(
        f"{_API}/export",
        "GET",
        "Every entry of a log query, no limit, streamed oldest first: Parquet "
        "(Accept: application/vnd.columnar.parquet; timestamp, labels, line) or JSON lines.",
        (QUERY, *_RANGE),
        ok_type=_EXPORT,
    ),
    Operation(
        f"{_API}/backfill",
        "POST",
        "Import an uploaded log file of any age straight into the lake (svc backfill's "
        "formats and checks; 404 unless backfill.enabled). Answers the import's summary.",
        (
            _param("format", "Input format.", type="string", enum=list(BACKFILL_FORMATS)),
            _param("labels", 'Labels of every entry, as a selector: {job="x"}.'),
            _param("label_fields", "Comma-separated JSON or logfmt fields that become labels."),
            _param("time_field", "JSON or logfmt field holding the time."),
            _param("time_format", "strptime format of the time."),
            _param("time_regex", "RE2 regex whose ts group (or first group) is the time."),
            _param("strict", "Stop at the first bad line (400).", type="boolean"),
            _param("dry_run", "Parse and validate only.", type="boolean"),
        ),
        body=BACKFILL_BODY,
    ),
    Operation(
        f"{_API}/detected_fields",
        "GET POST",
        "Detected fields.",
        (QUERY, *_RANGE, STEP, LINE_LIMIT, LIMIT),
        body=FORM_BODY,
    ),
    Operation(
        f"{_API}/detected_labels",
        "GET POST",
        "Stream labels with their cardinality.",
        (SELECTOR, *_RANGE),
        body=FORM_BODY,
    ),
    Operation(
        f"{_API}/detected_field/{{name}}/values",
        "GET POST",
        "Values of a detected field.",
        (QUERY, *_RANGE, STEP, LINE_LIMIT, LIMIT),
        body=FORM_BODY,
    ),
    Operation(
        f"{_API}/sql",
        "GET POST",
        "Read-only SQL over the tenant's logs and streams views (and logql()).",
        (SQL_QUERY, *_RANGE),
        body=SQL_BODY,
        ok_type=SQL_RESULTS,
    ),
    Operation(
        f"{_API}/sql/explain",
        "GET",
        "The SQL a LogQL query compiles to.",
        (QUERY, *_RANGE, LIMIT, STEP, DIRECTION),
    ),
    Operation(f"{_API}/format_query", "GET POST", "Pretty-print LogQL.", (QUERY,), body=FORM_BODY),
    Operation(f"{_API}/status/buildinfo", "GET", "Build information."),
    Operation(
        f"{_API}/delete",
        "POST PUT",
        "Create a delete request (retention_enabled).",
        (DELETE_QUERY, DELETE_START, END, MAX_INTERVAL),
        ok="204",
    ),
    Operation(f"{_API}/delete", "GET", "List delete requests.", (START, END, QUERYTIME)),
    Operation(
        f"{_API}/delete", "DELETE", "Cancel a delete request.", (REQUEST_ID, FORCE), ok="204"
    ),
    Operation(f"{_API}/cache/generation_numbers", "GET", "Cache generation number."),
    Operation(f"{_API}/cache/generation_numbers/increase", "POST", "Bump the cache generation."),
    Operation(f"{_API}/openapi.json", "GET", "This description."),
    *(
        op
        for prefix in (_API, "/api/prom")
        for op in (
            Operation(f"{prefix}/rules", "GET", "Rule groups of every namespace.", ok_type=_YAML),
            Operation(
                f"{prefix}/rules/{{namespace}}",
                "GET POST DELETE",
                "Rule groups of a namespace; create or replace a group; delete the namespace.",
                body=RULE_GROUP_BODY,
                ok_type=_YAML,
            ),
            Operation(
                f"{prefix}/rules/{{namespace}}/{{group_name}}",
                "GET DELETE",
                "One rule group; delete it.",
                ok_type=_YAML,
            ),
        )
    ),
    Operation("/prometheus/api/v1/rules", "GET", "Rules and their state.", RULE_FILTERS),
    Operation("/prometheus/api/v1/alerts", "GET", "Active alerts."),
    Operation("/api/prom/push", "POST", "Deprecated push.", body=PUSH_BODY, ok="204"),
    Operation("/api/prom/query", "GET", "Deprecated log query.", (QUERY, LIMIT, *_RANGE)),
    Operation("/api/prom/label", "GET", "Deprecated label names.", _RANGE),
    Operation("/api/prom/label/{name}/values", "GET", "Deprecated label values.", _RANGE),
    Operation("/api/prom/series", "GET", "Deprecated series.", (MATCH, *_RANGE)),
    Operation("/", "GET", "Home page: version and links (browsers go to /ui/).", ok_type=_HTML),
    Operation("/ui", "GET", "The web UI.", ok_type=_HTML),
    Operation(
        "/ui/{file_path}", "GET", "The web UI's files (HTML, JavaScript, CSS).", ok_type=_ANY
    ),
    Operation("/ready", "GET", "Readiness.", ok_type=_TEXT),
    Operation("/metrics", "GET", "Prometheus metrics.", ok_type=_TEXT),
    Operation("/services", "GET", "Internal services and states.", ok_type=_TEXT),
    Operation("/config", "GET", "Effective configuration (YAML).", ok_type=_TEXT),
    Operation("/runtime_config", "GET", "Runtime overrides in force (YAML).", ok_type=_TEXT),
    Operation("/config/tenant/v1/limits", "GET", "The tenant's limits (YAML).", ok_type=_TEXT),
    Operation("/log_level", "GET POST", "Read or set the log level.", ok_type=_TEXT),
    Operation("/flush", "GET POST", "Flush the in-memory head.", ok="204"),
    Operation("/flush/tenant", "POST", "Flush one tenant.", (FLUSH_TENANT,), ok="204"),
    Operation(
        "/ingester/prepare_shutdown", "GET POST DELETE", "Prepare-shutdown flag.", ok_type=_TEXT
    ),
    Operation("/ingester/shutdown", "GET POST", "Shut the ingester down.", ok="204"),
    Operation("/ingester/flush_shutdown", "POST", "Deprecated flush and shutdown.", ok="204"),
    Operation("/sync-indexes", "GET PUT", "Index sync status or trigger.", ok_type=_JSON),
    Operation(
        "/svc/internal/head",
        "GET",
        "A writer's unflushed entries of the tenant, for the readers of a shared catalog.",
        (HEAD_START, HEAD_END),
        ok_type=_ARROW,
    ),
    Operation(
        "/svc/internal/tail",
        "GET",
        "A writer's pushes of the tenant from now on, for the readers' live tails "
        "(length-prefixed frames, kept open).",
        ok_type=_FRAMES,
    ),
    Operation("/ring", "GET", "Ingester ring page.", ok_type=_TEXT),
    Operation("/distributor/ring", "GET", "Distributor ring page.", ok_type=_TEXT),
    Operation("/compactor/ring", "GET", "Compactor ring page.", ok_type=_TEXT),
    Operation("/indexgateway/ring", "GET", "Index gateway ring page.", ok_type=_TEXT),
    Operation("/ruler/ring", "GET", "Ruler ring page.", ok_type=_TEXT),
    Operation("/memberlist", "GET", "Memberlist status page.", ok_type=_TEXT),
)
"""Every HTTP operation; ``/svc/api/v1`` ones are also served under ``/loki/api/v1``."""


def _operation(op: Operation, method: str, path: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "summary": op.summary,
        "operationId": f"{method.lower()} {path}",
        "parameters": [_TENANT, *op.params],
        "responses": {**op.responses, **_ERRORS},
    }
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    for name in names:
        entry["parameters"].append(
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        )
    if op.body is not None and method != "GET":
        entry["requestBody"] = op.body
    return entry


@cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document, with ``/loki/api/v1`` aliases."""
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        aliases = [op.path]
        if op.path.startswith(_API + "/") and not op.path.endswith("openapi.json"):
            aliases.append("/loki/api/v1" + op.path[len(_API) :])
        for path in aliases:
            methods = paths.setdefault(path, {})
            methods.update({m.lower(): _operation(op, m, path) for m in op.methods})
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "svc",
            "version": "1",
            "description": "Multi-tenant log store with Grafana Loki's HTTP API and LogQL.",
        },
        "paths": paths,
    }


@get("/svc/api/v1/openapi.json")
async def openapi_json() -> Response[bytes]:
    """The OpenAPI description of this API."""
    return json_response(openapi_document())

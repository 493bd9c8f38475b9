"""The OpenAPI description lists exactly the application's HTTP operations."""

from __future__ import annotations

import re

import schemathesis
from litestar.routes import HTTPRoute

from svc.api.openapi import openapi_document
from svc.app import create_app
from svc.config import config_from_yaml


def _app_operations() -> set[tuple[str, str]]:
    # Every operation the service can serve: the deletion API needs retention enabled.
    app = create_app(
        config_from_yaml("compactor: {retention_enabled: true, delete_request_store: filesystem}")
    )
    found = set()
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path)
        found |= {(path, m) for m in route.methods if m not in ("HEAD", "OPTIONS")}
    return found


def _documented() -> set[tuple[str, str]]:
    paths = openapi_document()["paths"]
    return {(path, method.upper()) for path, ops in paths.items() for method in ops}


def test_every_route_is_documented_and_every_documented_operation_exists() -> None:
    assert _documented() == _app_operations()


def test_the_document_is_valid_openapi() -> None:
    schema = schemathesis.openapi.from_dict(openapi_document())
    operations = list(schema.get_all_operations())
    assert len(operations) == len(_documented())
    assert all(op.ok() for op in operations)

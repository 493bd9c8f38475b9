"""Service errors: one root, an HTTP status per class.

    ServiceError                 (status 500)
    ├── BadRequestError          (400)
    ├── UnauthorizedError        (401)
    ├── ForbiddenError           (403)
    ├── NotFoundError            (404)
    ├── ConflictError            (409)
    ├── PayloadTooLargeError     (413)
    ├── UnprocessableEntityError (422)
    ├── TooManyRequestsError     (429)
    ├── ServiceUnavailableError  (503)
    └── GatewayTimeoutError      (504)

The message is the exact text of the spec; handlers answer it as a plain-text body.
"""

from __future__ import annotations

from typing import ClassVar

PRODUCT = "the service"
"""What the reference's messages call "Loki" ("contact your the service administrator")."""

__all__ = [
    "PRODUCT",
    "TIMEOUT_MESSAGE",
    "BadRequestError",
    "ConflictError",
    "ForbiddenError",
    "GatewayTimeoutError",
    "NotFoundError",
    "PayloadTooLargeError",
    "ServiceError",
    "ServiceUnavailableError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "UnprocessableEntityError",
]

TIMEOUT_MESSAGE = (
    "request timed out, decrease the duration of the request or add more label matchers "
    "(prefer exact match over regex match) to reduce the amount of data processed"
)
"""The answer (504) of a query past its deadline."""


class ServiceError(Exception):
    """Root of every error the service answers with a status and a message."""

    status: ClassVar[int] = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadRequestError(ServiceError):
    """The request is malformed or violates a limit (400)."""

    status = 400


class UnauthorizedError(ServiceError):
    """No tenant could be identified (401)."""

    status = 401


class ForbiddenError(ServiceError):
    """The feature is disabled for this tenant (403)."""

    status = 403


class NotFoundError(ServiceError):
    """The named resource does not exist (404)."""

    status = 404


class ConflictError(ServiceError):
    """The operation is already running (409)."""

    status = 409


class PayloadTooLargeError(ServiceError):
    """The request body is over the configured size (413)."""

    status = 413


class UnprocessableEntityError(ServiceError):
    """The request is well-formed but holds nothing to act on (422)."""

    status = 422


class TooManyRequestsError(ServiceError):
    """Back off and retry (429)."""

    status = 429


class ServiceUnavailableError(ServiceError):
    """The component is not running (503)."""

    status = 503


class GatewayTimeoutError(ServiceError):
    """The query ran past its timeout (504)."""

    status = 504

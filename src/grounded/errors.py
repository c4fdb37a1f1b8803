"""The error tree. Every error a user can meet has a stable ``code``.

    GroundedError                 code            HTTP
    ├── ConfigError               config_invalid  500  (raised before serving)
    ├── DatabaseError             database_error  503
    │   ├── DatabaseUnavailable   database_unavailable 503
    │   ├── ExtensionMissing      pgvector_missing 503
    │   └── SchemaMismatch        schema_not_current 503
    ├── DataDirError              data_dir_unusable 500
    ├── NotFound                  not_found       404
    ├── Conflict                  conflict        409
    ├── InvalidInput              invalid_input   422
    ├── Unauthenticated           unauthenticated 401
    ├── Forbidden                 forbidden       403
    └── RateLimited               rate_limited    429

The mapping to HTTP lives in ``api/errors.py``, to CLI exit codes in ``cli``;
each in one place. ``message`` is for people and must say what to do;
``details`` is structured and must never carry another tenant's data.
"""

from __future__ import annotations

from typing import Any, ClassVar


class GroundedError(Exception):
    code: ClassVar[str] = "internal_error"
    http_status: ClassVar[int] = 500

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class ConfigError(GroundedError):
    code = "config_invalid"


class DataDirError(GroundedError):
    code = "data_dir_unusable"


class DatabaseError(GroundedError):
    code = "database_error"
    http_status = 503


class DatabaseUnavailable(DatabaseError):
    code = "database_unavailable"


class ExtensionMissing(DatabaseError):
    code = "pgvector_missing"


class SchemaMismatch(DatabaseError):
    code = "schema_not_current"


class NotFound(GroundedError):
    code = "not_found"
    http_status = 404


class Conflict(GroundedError):
    code = "conflict"
    http_status = 409


class InvalidInput(GroundedError):
    code = "invalid_input"
    http_status = 422


class Unauthenticated(GroundedError):
    code = "unauthenticated"
    http_status = 401


class Forbidden(GroundedError):
    code = "forbidden"
    http_status = 403


class RateLimited(GroundedError):
    code = "rate_limited"
    http_status = 429

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
    │   └── ExtractionError       extraction_failed 422 (``reason``: encrypted, zip_bomb, ...)
    ├── Unauthenticated           unauthenticated 401
    ├── Forbidden                 forbidden       403
    ├── RateLimited               rate_limited    429
    ├── ModelError                model_error     502  (names the provider)
    │   └── ModelUnavailable      model_unavailable 503 (transient: retried, then fallback)
    ├── BudgetExceeded            budget_exceeded 429  (tenant's model budget spent)
    ├── EmbeddingMismatch         embedding_model_mismatch 409 (vectors of two models)
    └── UnsupportedLanguage       language_unsupported 422 (no model covers it)

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


class ExtractionError(InvalidInput):
    """A document could not be read safely; ``reason`` is a stable machine word.

    Reasons (stable): empty, truncated, corrupt, encrypted, unsupported_type,
    wrong_type, too_large, zip_bomb, xml_hostile, image_too_large, unsafe_filename.
    The message says what a person can do about it (re-save, remove the password, ...).
    """

    code = "extraction_failed"

    def __init__(self, message: str, *, reason: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details={"reason": reason, **(details or {})})
        self.reason = reason


class Unauthenticated(GroundedError):
    code = "unauthenticated"
    http_status = 401


class Forbidden(GroundedError):
    code = "forbidden"
    http_status = 403


class RateLimited(GroundedError):
    code = "rate_limited"
    http_status = 429


class ModelError(GroundedError):
    """A model provider failed or answered with something unusable.

    ``provider`` is always named so an operator knows which endpoint to look at.
    """

    code = "model_error"
    http_status = 502

    def __init__(
        self, message: str, *, provider: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, details={"provider": provider, **(details or {})})
        self.provider = provider


class ModelUnavailable(ModelError):
    """Transient: timeout, connection refused, 429 or 5xx. Retried, then the next provider."""

    code = "model_unavailable"
    http_status = 503


class BudgetExceeded(GroundedError):
    code = "budget_exceeded"
    http_status = 429


class EmbeddingMismatch(GroundedError):
    """Vectors from two embedding models (or dimensions) were about to be compared."""

    code = "embedding_model_mismatch"
    http_status = 409


class UnsupportedLanguage(GroundedError):
    code = "language_unsupported"
    http_status = 422

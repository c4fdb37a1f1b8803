"""Bearer secrets: how session and API-token values are made, parsed and stored.

A value is ``<prefix><tenant id hex>.<secret>``: 32 random bytes (256 bits,
ASVS 3.2.2 asks for 64+) in URL-safe base64. The tenant id travels in clear so
that the request can bind its tenant before looking the secret up under
row-level security; only the SHA-256 of the whole value is stored. Anything
that does not parse is refused with 401 before any query runs.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Final
from uuid import UUID

from grounded.errors import Unauthenticated

SESSION_PREFIX: Final = "gs1."
TOKEN_PREFIX: Final = "gt1."  # noqa: S105 (a format prefix, not a secret)
_SHAPE = re.compile(r"(gs1|gt1)\.([0-9a-f]{32})\.([A-Za-z0-9_-]{43})")


def mint(prefix: str, tenant_id: UUID) -> tuple[str, bytes]:
    """A new secret value for ``tenant_id`` and the digest to store."""
    value = f"{prefix}{tenant_id.hex}.{secrets.token_urlsafe(32)}"
    return value, digest(value)


def digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("ascii")).digest()


def parse(value: str, prefix: str) -> tuple[UUID, bytes]:
    """(tenant id, digest) of a well-formed value of the expected kind, else 401."""
    found = _SHAPE.fullmatch(value) if len(value) < 128 else None
    if found is None or f"{found.group(1)}." != prefix:
        raise Unauthenticated("the credential is not valid; log in again")
    return UUID(hex=found.group(2)), digest(value)

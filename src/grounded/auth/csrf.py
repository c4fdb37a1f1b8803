"""CSRF defence for cookie sessions (seed 002 ADR-009, ASVS v4 4.2.2, 13.2.3).

Two independent checks on every unsafe request authenticated by a cookie:

1. ``Origin`` must be present and in the explicit allowlist (``null`` and
   foreign origins are refused);
2. the ``X-CSRF-Token`` header must equal the token bound to the session: an
   HMAC of the session value, so it needs no storage, changes with every new
   session, and cannot be computed without the HttpOnly cookie. A cross-site
   form or ``text/plain`` body cannot set a custom header at all.

API tokens carry no ambient authority (a browser never attaches them), so
bearer requests skip both checks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Final

from grounded.errors import Forbidden

CSRF_HEADER: Final = "x-csrf-token"
UNSAFE_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def token_for(session_value: str) -> str:
    mac = hmac.new(session_value.encode("ascii"), b"grounded-csrf-v1", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def default_origins(host: str, port: int) -> list[str]:
    """The serving address, plus its loopback twin, when none are configured."""
    origins = [f"http://{host}:{port}"]
    if host in {"127.0.0.1", "localhost", "0.0.0.0", "::1"}:  # noqa: S104
        origins += [f"http://127.0.0.1:{port}", f"http://localhost:{port}"]
    return sorted(set(origins))


def check_origin(origin: str | None, allowed: list[str], *, required: bool) -> None:
    """Refuse a foreign or ``null`` origin; a missing one only where ``required``."""
    if origin is None:
        if required:
            raise Forbidden("the request has no Origin header; it is refused (CSRF defence)")
        return
    if origin.rstrip("/") not in allowed:
        raise Forbidden("the request's Origin is not allowed (CSRF defence)")


def check_token(session_value: str, header: str | None) -> None:
    if header is None or not hmac.compare_digest(
        header.encode(), token_for(session_value).encode()
    ):
        raise Forbidden(
            "missing or wrong X-CSRF-Token header; use the csrf_token from login or /v1/auth/me"
        )

"""From an HTTP request to a verified Principal: the one path every route takes.

A request may carry a session cookie or ``Authorization: Bearer <token>``,
not both (an ambiguous request is refused rather than guessed at). Any other
Authorization scheme, any malformed value, an unknown or ended credential:
401, never 500. Cookie-authenticated unsafe methods must also pass the Origin
allowlist and the CSRF header (``grounded.auth.csrf``) before the database is
touched, so a forged request changes nothing, not even ``last_seen_at``.
"""

from __future__ import annotations

from fastapi import Request, Response

from grounded.auth import csrf
from grounded.auth.clock import Clock, SystemClock
from grounded.auth.principal import Principal
from grounded.auth.sessions import NewSession, Sessions
from grounded.auth.tokens import Tokens
from grounded.config import Settings
from grounded.db import Database
from grounded.errors import Unauthenticated

COOKIE = "grounded_session"
SECURE_COOKIE = "__Host-grounded_session"
_SYSTEM_CLOCK = SystemClock()


def clock_of(request: Request) -> Clock:
    """The app's clock (tests put a ManualClock on ``app.state.clock``)."""
    found: Clock = getattr(request.app.state, "clock", _SYSTEM_CLOCK)
    return found


def settings_of(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def secure(request: Request) -> bool:
    mode = settings_of(request).auth.cookie_secure
    return mode == "always" or (mode == "auto" and request.url.scheme == "https")


def cookie_name(request: Request) -> str:
    # __Host- makes the browser insist on Secure, Path=/ and no Domain.
    return SECURE_COOKIE if secure(request) else COOKIE


def allowed_origins(request: Request) -> list[str]:
    settings = settings_of(request)
    configured = [o.rstrip("/") for o in settings.auth.allowed_origins]
    return configured or csrf.default_origins(settings.host, settings.port)


def client_address(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def session_value(request: Request) -> str | None:
    return request.cookies.get(cookie_name(request))


def authenticate(request: Request, database: Database) -> Principal:
    """The verified principal of ``request``, or Unauthenticated / Forbidden."""
    settings = settings_of(request)
    header = request.headers.get("authorization")
    cookie = session_value(request)
    if header is not None:
        if cookie is not None:
            raise Unauthenticated("send either a session cookie or a bearer token, not both")
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Unauthenticated("use `Authorization: Bearer <token>`")
        return Tokens(database, clock_of(request)).authenticate(value.strip())
    if cookie is None:
        raise Unauthenticated("log in first (POST /v1/auth/login) or send a bearer token")
    if request.method in csrf.UNSAFE_METHODS:
        csrf.check_origin(request.headers.get("origin"), allowed_origins(request), required=True)
        csrf.check_token(cookie, request.headers.get(csrf.CSRF_HEADER))
    return Sessions(database, settings.auth, clock_of(request)).authenticate(cookie)


def set_session_cookie(request: Request, response: Response, session: NewSession) -> None:
    max_age = settings_of(request).auth.session_absolute_timeout_s
    response.set_cookie(
        cookie_name(request),
        session.value,
        max_age=max_age,
        path="/",
        secure=secure(request),
        httponly=True,
        samesite="lax",
    )


def clear_session_cookie(request: Request, response: Response) -> None:
    response.delete_cookie(
        cookie_name(request), path="/", secure=secure(request), httponly=True, samesite="lax"
    )

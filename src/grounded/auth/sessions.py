"""Server-side sessions (seed 002 ADR-009; ASVS v4 chapter 3).

A session is a random 256-bit value in a cookie; the database keeps only its
SHA-256. It ends when idle for ``session_idle_timeout_s``, at
``session_absolute_timeout_s`` after login, when revoked, or when the user's
``credential_version`` moves (logout, password change, disable). Roles,
groups and the disabled flag are re-read from the user row on every request,
so nothing about them lives in the browser.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from grounded.auth import bearer, csrf
from grounded.auth.clock import Clock
from grounded.auth.permissions import ROLE_PERMISSIONS
from grounded.auth.principal import Principal
from grounded.auth.settings import AuthSettings
from grounded.db import Database
from grounded.db.database import Connection
from grounded.errors import Unauthenticated

EXPIRED = "the session has ended; log in again"


@dataclass(frozen=True)
class NewSession:
    """Returned once, at login: ``value`` goes into the cookie and nowhere else."""

    id: UUID
    value: str
    csrf_token: str
    expires_at: datetime


def start(
    conn: Connection,
    tenant_id: UUID,
    user_id: UUID,
    credential_version: int,
    settings: AuthSettings,
    now: datetime,
) -> NewSession:
    """Mint a new session in a transaction bound to ``tenant_id``."""
    value, digest = bearer.mint(bearer.SESSION_PREFIX, tenant_id)
    expires_at = now + timedelta(seconds=settings.session_absolute_timeout_s)
    row = conn.execute(
        "INSERT INTO sessions (tenant_id, user_id, token_digest, credential_version,"
        " created_at, last_seen_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
        (tenant_id, user_id, digest, credential_version, now, now, expires_at),
    ).fetchone()
    assert row is not None
    return NewSession(row["id"], value, csrf.token_for(value), expires_at)


def user_principal(
    row: dict[str, Any], *, via: str, credential_id: UUID, permissions: frozenset[str] | None = None
) -> Principal:
    """A Principal from a joined user row; a token narrows the role's permissions."""
    granted = ROLE_PERMISSIONS[row["role"]]
    effective = granted if permissions is None else granted & permissions
    return Principal(
        kind="user",
        id=row["user_id"],
        tenant_id=row["tenant_id"],
        roles=frozenset({row["role"]} if "admin" in effective else {"user"}),
        groups=frozenset(row["groups"]),
        permissions=effective,
        via="session" if via == "session" else "token",
        credential_id=credential_id,
    )


class Sessions:
    def __init__(self, database: Database, settings: AuthSettings, clock: Clock) -> None:
        self._db = database
        self._settings = settings
        self._clock = clock

    def authenticate(self, value: str) -> Principal:
        """The principal of a live session, else 401 (malformed values never reach SQL)."""
        tenant_id, digest = bearer.parse(value, bearer.SESSION_PREFIX)
        now = self._clock.now()
        idle = timedelta(seconds=self._settings.session_idle_timeout_s)
        with self._db.transaction(tenant_id) as conn:
            row = conn.execute(
                "SELECT s.id AS session_id, s.credential_version AS session_version,"
                " s.last_seen_at, s.expires_at, u.id AS user_id, u.tenant_id, u.role, u.groups,"
                " u.disabled, u.credential_version"
                " FROM sessions s JOIN users u ON u.id = s.user_id"
                " JOIN tenants t ON t.id = s.tenant_id AND t.deleted_at IS NULL"
                " WHERE s.token_digest = %s AND s.revoked_at IS NULL",
                (digest,),
            ).fetchone()
            if row is None:
                live = False
            else:
                live = (
                    not row["disabled"]
                    and row["session_version"] == row["credential_version"]
                    and now < row["expires_at"]
                    and now - row["last_seen_at"] < idle
                )
                conn.execute(
                    "UPDATE sessions SET last_seen_at = %s, revoked_at = %s WHERE id = %s",
                    (
                        now if live else row["last_seen_at"],
                        None if live else now,
                        row["session_id"],
                    ),
                )
        if row is None or not live:
            raise Unauthenticated(EXPIRED)
        return user_principal(row, via="session", credential_id=row["session_id"])

    def revoke(self, conn: Connection, session_id: UUID) -> None:
        conn.execute(
            "UPDATE sessions SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
            (self._clock.now(), session_id),
        )

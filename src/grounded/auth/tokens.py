"""API tokens for scripts and service identities (issue 3 item 6; seed 001 ADR-010).

A token is scoped to one tenant and a set of permissions, stored as a SHA-256
digest, shown once at creation, and revocable. A token made by a user acts as
that user, narrowed to its permissions, and dies with the user (disabled,
password changed, or revoked). A *service* token (no user; made by an admin or
by `grounded token create`) is its own principal of kind ``service`` with the
groups given at creation: batch jobs and the MCP server present one, so no
internal path runs unfiltered.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from grounded.auth import bearer
from grounded.auth.clock import Clock
from grounded.auth.permissions import check_permissions
from grounded.auth.principal import Principal
from grounded.auth.sessions import user_principal
from grounded.auth.users import check_groups
from grounded.db import Database
from grounded.errors import Forbidden, InvalidInput, NotFound, Unauthenticated

COLUMNS = "id, tenant_id, name, user_id, permissions, groups, created_at, expires_at, revoked_at"


@dataclass(frozen=True)
class TokenInfo:
    id: UUID
    name: str
    user_id: UUID | None
    permissions: list[str]
    groups: list[str]
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> TokenInfo:
        return cls(
            id=row["id"],
            name=row["name"],
            user_id=row["user_id"],
            permissions=sorted(row["permissions"]),
            groups=list(row["groups"]),
            created_at=row["created_at"],
            expires_at=row["expires_at"],
            revoked_at=row["revoked_at"],
        )


def insert_token(
    conn: Any,
    tenant_id: UUID,
    *,
    name: str,
    permissions: frozenset[str],
    user_id: UUID | None,
    groups: list[str],
    created_by: UUID | None,
    expires_at: datetime | None,
) -> tuple[str, TokenInfo]:
    """Store a new token (bound app connection or owner's); returns (secret, info)."""
    if not 1 <= len(name.strip()) <= 100:
        raise InvalidInput("name: 1-100 characters", details={"field": "name"})
    value, digest = bearer.mint(bearer.TOKEN_PREFIX, tenant_id)
    cursor = conn.execute(
        f"INSERT INTO api_tokens (tenant_id, name, token_digest, user_id, permissions, groups,"
        f" created_by, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {COLUMNS}",
        (
            tenant_id,
            name.strip(),
            digest,
            user_id,
            sorted(permissions),
            check_groups(groups),
            created_by,
            expires_at,
        ),
    )
    row = cursor.fetchone()
    if not isinstance(row, dict):
        row = dict(zip([c.name for c in cursor.description], row, strict=True))
    return value, TokenInfo.from_row(row)


class Tokens:
    def __init__(self, database: Database, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    def create(
        self,
        principal: Principal,
        *,
        name: str,
        permissions: list[str],
        service: bool = False,
        groups: list[str] | None = None,
        expires_at: datetime | None = None,
    ) -> tuple[str, TokenInfo]:
        """A token for the principal itself, or (admins only) a service token.

        A token never carries a permission its creator lacks.
        """
        wanted = check_permissions(permissions)
        if not all(principal.can(p) for p in wanted):
            raise Forbidden("a token cannot carry permissions its creator does not hold")
        if service and not principal.is_admin:
            raise Forbidden("service tokens need the admin role")
        if not service and principal.kind != "user":
            raise InvalidInput("only users hold personal tokens; ask for a service token")
        if groups and not service:
            raise InvalidInput(
                "groups: personal tokens use their user's groups", details={"field": "groups"}
            )
        if expires_at is not None and expires_at <= self._clock.now():
            raise InvalidInput("expires_at: must be in the future", details={"field": "expires_at"})
        with self._db.transaction(principal.tenant_id) as conn:
            return insert_token(
                conn,
                principal.tenant_id,
                name=name,
                permissions=wanted,
                user_id=None if service else principal.id,
                groups=groups or [],
                created_by=principal.id,
                expires_at=expires_at,
            )

    def visible(self, principal: Principal) -> list[TokenInfo]:
        """Admins see every token of the tenant; users their own."""
        with self._db.transaction(principal.tenant_id) as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM api_tokens WHERE (%s OR user_id = %s)"
                " ORDER BY created_at, id",
                (principal.is_admin, principal.id),
            ).fetchall()
        return [TokenInfo.from_row(r) for r in rows]

    def revoke(self, principal: Principal, token_id: UUID) -> TokenInfo:
        """Revoke a token; a foreign, missing or not-yours id is the same 404."""
        with self._db.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                f"UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, %s)"
                f" WHERE id = %s AND (%s OR user_id = %s) RETURNING {COLUMNS}",
                (self._clock.now(), token_id, principal.is_admin, principal.id),
            ).fetchone()
        if row is None:
            raise NotFound("no such token")
        return TokenInfo.from_row(row)

    def authenticate(self, value: str) -> Principal:
        """The principal a live token stands for, else 401."""
        tenant_id, digest = bearer.parse(value, bearer.TOKEN_PREFIX)
        now = self._clock.now()
        with self._db.transaction(tenant_id) as conn:
            row = conn.execute(
                "SELECT t.id AS token_id, t.tenant_id, t.user_id, t.permissions,"
                " t.groups AS token_groups, t.expires_at, u.role, u.groups, u.disabled"
                " FROM api_tokens t LEFT JOIN users u ON u.id = t.user_id"
                " JOIN tenants n ON n.id = t.tenant_id AND n.deleted_at IS NULL"
                " WHERE t.token_digest = %s AND t.revoked_at IS NULL",
                (digest,),
            ).fetchone()
            live = (
                row is not None
                and (row["expires_at"] is None or now < row["expires_at"])
                and (row["user_id"] is None or row["disabled"] is False)
            )
            if row is not None and live:
                conn.execute(
                    "UPDATE api_tokens SET last_used_at = %s WHERE id = %s", (now, row["token_id"])
                )
        if row is None or not live:
            raise Unauthenticated("the token is not valid, revoked or expired")
        permissions = frozenset(row["permissions"])
        if row["user_id"] is not None:
            return user_principal(
                row, via="token", credential_id=row["token_id"], permissions=permissions
            )
        return Principal(
            kind="service",
            id=row["token_id"],
            tenant_id=row["tenant_id"],
            roles=frozenset({"admin"}) if "admin" in permissions else frozenset(),
            groups=frozenset(row["token_groups"]),
            permissions=permissions,
            via="token",
            credential_id=row["token_id"],
        )

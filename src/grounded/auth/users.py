"""Users of a tenant: rows, validation, and admin management.

Every function takes the acting principal (or a tenant-bound connection)
first; the tenant always comes from it, never from a request body. Disabling a
user or setting its password ends all of its sessions and revokes its tokens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from grounded.auth.passwords import Hasher, check_policy
from grounded.auth.principal import Principal
from grounded.auth.settings import AuthSettings
from grounded.db import Database
from grounded.db.database import Connection
from grounded.errors import Conflict, Forbidden, InvalidInput, NotFound

ROLES = ("user", "admin")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,189}$")
_GROUP = re.compile(r"^[A-Za-z0-9._:@-]{1,100}$")
COLUMNS = (
    "id, tenant_id, email, display_name, role, groups, disabled, credential_version,"
    " created_at, updated_at"
)


@dataclass(frozen=True)
class User:
    id: UUID
    tenant_id: UUID
    email: str
    display_name: str | None
    role: str
    groups: list[str]
    disabled: bool
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> User:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            email=row["email"],
            display_name=row["display_name"],
            role=row["role"],
            groups=list(row["groups"]),
            disabled=row["disabled"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )


def normalize_email(email: str) -> str:
    value = email.strip().lower()
    if len(value) > 254 or not _EMAIL.match(value):
        raise InvalidInput(
            "email: give an address like name@example.org", details={"field": "email"}
        )
    return value


def check_groups(groups: list[str]) -> list[str]:
    if len(groups) > 100 or not all(_GROUP.match(g) for g in groups):
        raise InvalidInput(
            "groups: up to 100 names of 1-100 letters, digits or ._:@-", details={"field": "groups"}
        )
    return sorted(set(groups))


def insert_user(
    conn: Connection | Any,
    tenant_id: UUID,
    *,
    email: str,
    password_hash: str,
    role: str,
    groups: list[str] | None = None,
    display_name: str | None = None,
) -> UUID:
    """Insert one user (app connection bound to ``tenant_id``, or the owner's).

    A taken e-mail in the tenant is a Conflict.
    """
    if role not in ROLES:
        raise InvalidInput("role: user or admin", details={"field": "role"})
    cursor = conn.execute(
        "INSERT INTO users (tenant_id, email, password_hash, role, groups, display_name)"
        " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, email) DO NOTHING RETURNING id",
        (tenant_id, email, password_hash, role, groups or [], display_name),
    )
    row = cursor.fetchone()
    if row is None:
        raise Conflict("a user with this email already exists", details={"field": "email"})
    return UUID(str(row["id"] if isinstance(row, dict) else row[0]))


def end_credentials(conn: Connection, user_id: UUID, now: datetime, *, tokens: bool) -> None:
    """Lock the user row, move its credential version, revoke its sessions (and tokens).

    The row lock orders this against concurrent logins and checks; the new
    credential version makes any session minted from the old one invalid even
    if its row escaped the UPDATE below.
    """
    conn.execute("SELECT 1 FROM users WHERE id = %s FOR UPDATE", (user_id,))
    conn.execute(
        "UPDATE users SET credential_version = credential_version + 1, updated_at = %s"
        " WHERE id = %s",
        (now, user_id),
    )
    conn.execute(
        "UPDATE sessions SET revoked_at = %s WHERE user_id = %s AND revoked_at IS NULL",
        (now, user_id),
    )
    if tokens:
        conn.execute(
            "UPDATE api_tokens SET revoked_at = %s WHERE user_id = %s AND revoked_at IS NULL",
            (now, user_id),
        )


def _no_new_admins(role: str) -> None:
    # Seed 002 ADR-009: an admin is created only by the local command with a
    # hidden password prompt; the API can make users and demote admins.
    if role != "user":
        raise Forbidden(
            "role: the API creates users only; make an admin with "
            "`grounded admin create` on the server",
            details={"field": "role"},
        )


def require_admin(principal: Principal) -> None:
    if not principal.is_admin:
        raise Forbidden("this needs the admin role")


class Users:
    """Admin management of the principal's tenant's users."""

    def __init__(self, database: Database, settings: AuthSettings, hasher: Hasher) -> None:
        self._db = database
        self._settings = settings
        self._hasher = hasher

    def page(
        self, principal: Principal, *, limit: int = 50, after: UUID | None = None
    ) -> list[User]:
        """Users in creation order, ``limit`` at a time after the user ``after``."""
        require_admin(principal)
        with self._db.transaction(principal.tenant_id) as conn:
            if after is None:
                rows = conn.execute(
                    f"SELECT {COLUMNS} FROM users ORDER BY created_at, id LIMIT %s", (limit,)
                ).fetchall()
            else:
                rows = conn.execute(
                    f"SELECT {COLUMNS} FROM users WHERE (created_at, id) >"
                    " (SELECT created_at, id FROM users WHERE id = %s)"
                    " ORDER BY created_at, id LIMIT %s",
                    (after, limit),
                ).fetchall()
        return [User.from_row(r) for r in rows]

    def get(self, principal: Principal, user_id: UUID) -> User:
        """One user; a foreign or missing id is the same 404."""
        if not (principal.is_admin or (principal.kind == "user" and principal.id == user_id)):
            raise NotFound("no such user")
        with self._db.transaction(principal.tenant_id) as conn:
            row = conn.execute(f"SELECT {COLUMNS} FROM users WHERE id = %s", (user_id,)).fetchone()
        if row is None:
            raise NotFound("no such user")
        return User.from_row(row)

    def create(
        self,
        principal: Principal,
        *,
        email: str,
        password: str,
        role: str = "user",
        groups: list[str] | None = None,
        display_name: str | None = None,
    ) -> User:
        require_admin(principal)
        _no_new_admins(role)
        address = normalize_email(email)
        check_policy(password, self._settings)
        hashed = self._hasher.hash(password)
        with self._db.transaction(principal.tenant_id) as conn:
            user_id = insert_user(
                conn,
                principal.tenant_id,
                email=address,
                password_hash=hashed,
                role=role,
                groups=check_groups(groups or []),
                display_name=display_name,
            )
            row = conn.execute(f"SELECT {COLUMNS} FROM users WHERE id = %s", (user_id,)).fetchone()
        assert row is not None
        return User.from_row(row)

    def update(
        self,
        principal: Principal,
        user_id: UUID,
        *,
        now: datetime,
        display_name: str | None = None,
        role: str | None = None,
        groups: list[str] | None = None,
        disabled: bool | None = None,
        password: str | None = None,
    ) -> User:
        """Change a user. Disabling or setting a password ends its sessions and tokens;
        an admin can demote another admin but cannot promote anyone, nor disable or
        demote itself (the tenant would lose its admin)."""
        require_admin(principal)
        if role is not None:
            _no_new_admins(role)
        if principal.id == user_id and (disabled or (role is not None and role != "admin")):
            raise Conflict("an admin cannot disable or demote itself; ask another admin")
        hashed = None
        if password is not None:
            check_policy(password, self._settings)
            hashed = self._hasher.hash(password)
        with self._db.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                f"SELECT {COLUMNS} FROM users WHERE id = %s FOR UPDATE", (user_id,)
            ).fetchone()
            if row is None:
                raise NotFound("no such user")
            conn.execute(
                "UPDATE users SET display_name = %s, role = %s, groups = %s, disabled = %s,"
                " password_hash = COALESCE(%s, password_hash), updated_at = %s WHERE id = %s",
                (
                    display_name if display_name is not None else row["display_name"],
                    role or row["role"],
                    check_groups(groups) if groups is not None else row["groups"],
                    disabled if disabled is not None else row["disabled"],
                    hashed,
                    now,
                    user_id,
                ),
            )
            if disabled or hashed is not None:
                end_credentials(conn, user_id, now, tokens=True)
            updated = conn.execute(
                f"SELECT {COLUMNS} FROM users WHERE id = %s", (user_id,)
            ).fetchone()
        assert updated is not None
        return User.from_row(updated)

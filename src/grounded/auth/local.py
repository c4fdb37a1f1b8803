"""Local operator actions, run as the database owner by `grounded` commands.

Creating tenants, the first admin of a tenant and service tokens happens on
the server machine, by an operator who can already read the data directory
(seed 002 ADR-009: an admin is created only by a local command with a hidden
password prompt). These functions take an owner connection; request handling
never has one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.rows import dict_row

from grounded.auth.passwords import check_policy, hasher_for
from grounded.auth.permissions import check_permissions
from grounded.auth.settings import AuthSettings
from grounded.auth.tokens import TokenInfo, insert_token
from grounded.auth.users import insert_user, normalize_email
from grounded.errors import Conflict, InvalidInput, NotFound

OwnerConnection = psycopg.Connection[Any]
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}$")


@dataclass(frozen=True)
class Tenant:
    id: UUID
    slug: str
    name: str
    created_at: datetime


def connect(owner_url: str) -> OwnerConnection:
    return psycopg.connect(owner_url, connect_timeout=10, row_factory=dict_row)


def create_tenant(conn: OwnerConnection, slug: str, name: str | None = None) -> Tenant:
    """A new tenant; the slug is its login name (2-63 of a-z, 0-9, '-')."""
    if not _SLUG.match(slug):
        raise InvalidInput(
            "slug: 2-63 lowercase letters, digits or '-', starting with a letter or digit",
            details={"field": "slug"},
        )
    row = conn.execute(
        "INSERT INTO tenants (slug, name) VALUES (%s, %s) ON CONFLICT (slug) DO NOTHING"
        " RETURNING id, slug, name, created_at",
        (slug, name or slug),
    ).fetchone()
    if row is None:
        raise Conflict(f"tenant {slug!r} already exists", details={"slug": slug})
    return Tenant(**row)


def list_tenants(conn: OwnerConnection) -> list[Tenant]:
    rows = conn.execute(
        "SELECT id, slug, name, created_at FROM tenants WHERE deleted_at IS NULL ORDER BY slug"
    ).fetchall()
    return [Tenant(**r) for r in rows]


def tenant_id(conn: OwnerConnection, slug: str) -> UUID:
    row = conn.execute(
        "SELECT id FROM tenants WHERE slug = %s AND deleted_at IS NULL", (slug,)
    ).fetchone()
    if row is None:
        raise NotFound(
            f"no tenant {slug!r}; create it with `grounded tenant create {slug}`",
            details={"tenant": slug},
        )
    return UUID(str(row["id"]))


def create_admin(
    conn: OwnerConnection, settings: AuthSettings, slug: str, email: str, password: str
) -> UUID:
    """The admin of tenant ``slug``; the password must pass the policy."""
    tenant = tenant_id(conn, slug)
    address = normalize_email(email)
    check_policy(password, settings)
    return insert_user(
        conn,
        tenant,
        email=address,
        password_hash=hasher_for(settings).hash(password),
        role="admin",
    )


def create_service_token(
    conn: OwnerConnection,
    slug: str,
    name: str,
    permissions: list[str],
    groups: list[str],
    expires_at: datetime | None = None,
) -> tuple[str, TokenInfo]:
    """A service identity's token for tenant ``slug`` (shown once by the caller)."""
    return insert_token(
        conn,
        tenant_id(conn, slug),
        name=name,
        permissions=check_permissions(permissions),
        user_id=None,
        groups=groups,
        created_by=None,
        expires_at=expires_at,
    )


def revoke_token(conn: OwnerConnection, token_id: UUID, now: datetime) -> None:
    row = conn.execute(
        "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, %s) WHERE id = %s RETURNING id",
        (now, token_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"no token {token_id}")

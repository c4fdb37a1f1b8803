"""API schemas for auth, users and tokens (pydantic lives at the edge).

Request models forbid unknown fields: a body that tries to set ``tenant_id``,
``owner_id``, ``role`` on sign-up or ``acl`` is refused with 422 naming the
field, never silently honoured (issue 3, "spoofed ownership fields").
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from grounded.auth.tokens import TokenInfo
from grounded.auth.users import User


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoginRequest(Strict):
    tenant: str = Field(max_length=63, description="The tenant's slug (its login name).")
    email: str = Field(max_length=254)
    password: str = Field(max_length=4096)


class RegisterRequest(Strict):
    tenant: str = Field(max_length=63)
    email: str = Field(max_length=254)
    password: str = Field(max_length=4096)
    display_name: str | None = Field(default=None, max_length=200)


class PasswordChange(Strict):
    current_password: str = Field(max_length=4096)
    new_password: str = Field(max_length=4096)


class UserPublic(BaseModel):
    id: UUID
    email: str
    display_name: str | None
    role: Literal["user", "admin"]
    groups: list[str]
    disabled: bool
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, user: User) -> UserPublic:
        return cls(
            id=user.id,
            email=user.email,
            display_name=user.display_name,
            role=user.role,
            groups=user.groups,
            disabled=user.disabled,
            created_at=user.created_at,
            updated_at=user.updated_at,
        )


class SessionPublic(BaseModel):
    user: UserPublic
    csrf_token: str = Field(description="Send as X-CSRF-Token on every unsafe request.")
    expires_at: datetime = Field(description="Absolute end of the session.")


class MePublic(BaseModel):
    kind: Literal["user", "service", "system"]
    id: UUID
    tenant_id: UUID
    roles: list[str]
    groups: list[str]
    permissions: list[str]
    via: Literal["session", "token", "local"]
    csrf_token: str | None = Field(description="The session's CSRF token (cookie sessions).")


class Accepted(BaseModel):
    status: Literal["accepted"] = "accepted"


class UserCreate(Strict):
    email: str = Field(max_length=254)
    password: str = Field(max_length=4096)
    role: Literal["user", "admin"] = Field(
        default="user",
        description="Only `user`: admins are made by `grounded admin create` (seed 002 ADR-009).",
    )
    groups: list[str] = Field(default_factory=list, max_length=100)
    display_name: str | None = Field(default=None, max_length=200)


class UserUpdate(Strict):
    display_name: str | None = Field(default=None, max_length=200)
    role: Literal["user", "admin"] | None = Field(
        default=None, description="`user` demotes an admin; promotion is a local command."
    )
    groups: list[str] | None = Field(default=None, max_length=100)
    disabled: bool | None = None
    password: str | None = Field(default=None, max_length=4096)


class UserPage(BaseModel):
    items: list[UserPublic]
    next_after: UUID | None = Field(description="Pass as `after` for the next page; null at end.")


class TokenCreate(Strict):
    name: str = Field(min_length=1, max_length=100)
    permissions: list[str] = Field(min_length=1, max_length=10)
    service: bool = Field(
        default=False, description="A service identity (admins only) instead of a personal token."
    )
    groups: list[str] = Field(
        default_factory=list, max_length=100, description="ACL groups of a service token."
    )
    expires_at: datetime | None = None


class TokenPublic(BaseModel):
    id: UUID
    name: str
    user_id: UUID | None
    permissions: list[str]
    groups: list[str]
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None

    @classmethod
    def of(cls, info: TokenInfo) -> TokenPublic:
        return cls(**info.__dict__)


class TokenCreated(TokenPublic):
    token: str = Field(description="The secret, shown this once; only its digest is stored.")

"""`/v1/users`: admin management of the tenant's users."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter, Query, Request, status

from grounded.api import credentials
from grounded.api.deps import AdminDep, DatabaseDep
from grounded.api.schemas_auth import UserCreate, UserPage, UserPublic, UserUpdate
from grounded.auth.passwords import hasher_for
from grounded.auth.users import Users
from grounded.db import Database

router = APIRouter(prefix="/v1/users", tags=["users"])


def _users(request: Request, database: Database) -> Users:
    settings = credentials.settings_of(request).auth
    return Users(database, settings, hasher_for(settings))


@router.get("", response_model=UserPage, summary="List users (admin)")
def list_users(
    principal: AdminDep,
    request: Request,
    database: DatabaseDep,
    limit: int = Query(50, ge=1, le=500),
    after: UUID | None = Query(None, description="The last id of the previous page."),
) -> UserPage:
    items = _users(request, database).page(principal, limit=limit, after=after)
    return UserPage(
        items=[UserPublic.of(u) for u in items],
        next_after=items[-1].id if len(items) == limit else None,
    )


@router.post(
    "", response_model=UserPublic, status_code=status.HTTP_201_CREATED, summary="Add a user (admin)"
)
def create_user(
    body: UserCreate, principal: AdminDep, request: Request, database: DatabaseDep
) -> UserPublic:
    user = _users(request, database).create(
        principal,
        email=body.email,
        password=body.password,
        role=body.role,
        groups=body.groups,
        display_name=body.display_name,
    )
    return UserPublic.of(user)


@router.get("/{user_id}", response_model=UserPublic, summary="One user (admin)")
def get_user(
    user_id: UUID, principal: AdminDep, request: Request, database: DatabaseDep
) -> UserPublic:
    return UserPublic.of(_users(request, database).get(principal, user_id))


@router.patch(
    "/{user_id}",
    response_model=UserPublic,
    summary="Change a user (admin); disabling or a new password ends its sessions and tokens",
)
def update_user(
    user_id: UUID, body: UserUpdate, principal: AdminDep, request: Request, database: DatabaseDep
) -> UserPublic:
    user = _users(request, database).update(
        principal,
        user_id,
        now=credentials.clock_of(request).now(),
        display_name=body.display_name,
        role=body.role,
        groups=body.groups,
        disabled=body.disabled,
        password=body.password,
    )
    return UserPublic.of(user)

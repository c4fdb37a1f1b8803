"""`/v1/tokens`: API tokens for scripts and service identities (shown once)."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter, Request, status

from grounded.api import credentials
from grounded.api.deps import DatabaseDep, PrincipalDep
from grounded.api.schemas_auth import TokenCreate, TokenCreated, TokenPublic
from grounded.auth.tokens import Tokens

router = APIRouter(prefix="/v1/tokens", tags=["tokens"])


@router.get("", response_model=list[TokenPublic], summary="Your tokens (admins: all)")
def list_tokens(
    principal: PrincipalDep, request: Request, database: DatabaseDep
) -> list[TokenPublic]:
    found = Tokens(database, credentials.clock_of(request)).visible(principal)
    return [TokenPublic.of(t) for t in found]


@router.post(
    "",
    response_model=TokenCreated,
    status_code=status.HTTP_201_CREATED,
    summary="Create a token; the secret is in this response only",
)
def create_token(
    body: TokenCreate, principal: PrincipalDep, request: Request, database: DatabaseDep
) -> TokenCreated:
    secret, info = Tokens(database, credentials.clock_of(request)).create(
        principal,
        name=body.name,
        permissions=body.permissions,
        service=body.service,
        groups=body.groups,
        expires_at=body.expires_at,
    )
    return TokenCreated(token=secret, **TokenPublic.of(info).model_dump())


@router.delete("/{token_id}", status_code=status.HTTP_204_NO_CONTENT, summary="Revoke a token")
def revoke_token(
    token_id: UUID, principal: PrincipalDep, request: Request, database: DatabaseDep
) -> None:
    Tokens(database, credentials.clock_of(request)).revoke(principal, token_id)

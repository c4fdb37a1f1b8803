"""Annotated dependencies shared by routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from grounded.api.credentials import authenticate
from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import Forbidden


def _database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


DatabaseDep = Annotated[Database, Depends(_database)]


def _principal(request: Request, database: DatabaseDep) -> Principal:
    """Every route's identity: cookie or bearer, verified (see api/credentials.py)."""
    return authenticate(request, database)


PrincipalDep = Annotated[Principal, Depends(_principal)]


def _admin(principal: PrincipalDep) -> Principal:
    if not principal.is_admin:
        raise Forbidden("this needs the admin role")
    return principal


AdminDep = Annotated[Principal, Depends(_admin)]


def _asker(principal: PrincipalDep) -> Principal:
    if not principal.can("ask"):
        raise Forbidden("this credential lacks the 'ask' permission (search and answers)")
    return principal


AskDep = Annotated[Principal, Depends(_asker)]

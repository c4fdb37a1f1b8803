"""Annotated dependencies shared by routers."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from grounded.db import Database


def _database(request: Request) -> Database:
    database: Database = request.app.state.database
    return database


DatabaseDep = Annotated[Database, Depends(_database)]

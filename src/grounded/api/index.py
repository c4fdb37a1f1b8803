"""Index administration over REST (admin only): /v1/index/*.

Thin: each route composes ``grounded.index`` calls; refusals (stale or
foreign generation, another embedding model, rollback past history) are the
domain's typed errors, mapped to 404/409 by the one error handler.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from grounded.api.deps import AdminDep, DatabaseDep
from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.index import Builder, BuildReport, publish, rebuild, refresh, rollback, status
from grounded.index.embedder import GatewayEmbedder, PassageEmbedder

router = APIRouter(prefix="/v1/index", tags=["index"])


class BuildRequest(BaseModel):
    incremental: bool = Field(
        default=False, description="Write only what changed since the live snapshot."
    )
    publish: bool = Field(default=False, description="Publish the build at once.")
    vectors: bool = Field(default=True, description="Embed units through the model gateway.")


class RebuildRequest(BaseModel):
    vectors: bool = Field(default=True, description="Embed units through the model gateway.")


class PublishRequest(BaseModel):
    generation: int = Field(ge=1, description="The ready generation to make live.")


@contextmanager
def _builder(
    request: Request, database: Database, principal: Principal, vectors: bool
) -> Iterator[Builder]:
    settings: Settings = request.app.state.settings
    embedder: PassageEmbedder | None = None
    gateway = None
    if vectors:
        from grounded.gateway import open_gateway

        gateway = open_gateway(settings, database)
        live = status(database, principal, limit=1).live
        embedder = GatewayEmbedder(
            gateway, principal, require_model=live.embedding_model if live else None
        )
    try:
        yield Builder(database, settings.index, embedder)
    finally:
        if gateway is not None:
            gateway.close()


def _report(report: BuildReport) -> dict[str, Any]:
    return {
        "snapshot": report.snapshot.as_dict(),
        "indexed": report.indexed,
        "deleted": report.deleted,
        "reused_vectors": report.reused_vectors,
        "embedded": report.embedded,
        "seconds": report.seconds,
    }


@router.get("/status", summary="Live snapshot, staleness, pending changes, history")
def get_status(principal: AdminDep, database: DatabaseDep) -> dict[str, Any]:
    return status(database, principal).as_dict()


@router.post("/build", summary="Build a new generation beside the live one")
def post_build(
    body: BuildRequest, request: Request, principal: AdminDep, database: DatabaseDep
) -> dict[str, Any]:
    with _builder(request, database, principal, body.vectors) as builder:
        report = builder.build(principal, incremental=body.incremental)
        if body.publish:
            live = publish(database, principal, report.snapshot.generation)
            return {**_report(report), "snapshot": live.as_dict()}
        return _report(report)


@router.post("/publish", summary="Make a ready generation live (checked, atomic)")
def post_publish(
    body: PublishRequest, principal: AdminDep, database: DatabaseDep
) -> dict[str, Any]:
    return publish(database, principal, body.generation).as_dict()


@router.post("/rollback", summary="Serve the previous snapshot in history again")
def post_rollback(principal: AdminDep, database: DatabaseDep) -> dict[str, Any]:
    return rollback(database, principal).as_dict()


@router.post("/rebuild", summary="Recreate every derived structure from canonical rows")
def post_rebuild(
    body: RebuildRequest, request: Request, principal: AdminDep, database: DatabaseDep
) -> dict[str, Any]:
    with _builder(request, database, principal, body.vectors) as builder:
        return _report(rebuild(builder, principal))


@router.post("/refresh", summary="Index and publish what changed (no-op when current)")
def post_refresh(
    body: RebuildRequest, request: Request, principal: AdminDep, database: DatabaseDep
) -> dict[str, Any]:
    with _builder(request, database, principal, body.vectors) as builder:
        report = refresh(builder, principal)
        return {"changed": False} if report is None else {"changed": True, **_report(report)}

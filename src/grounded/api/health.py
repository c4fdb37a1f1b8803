"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from grounded.api.deps import DatabaseDep
from grounded.health import readiness

router = APIRouter(tags=["health"])


class CheckPublic(BaseModel):
    name: str
    ok: bool
    detail: str


class ReadinessPublic(BaseModel):
    ready: bool
    checks: list[CheckPublic]


@router.get("/healthz", summary="The process is up")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get(
    "/readyz",
    summary="Ready to serve: database, migrations, pgvector, queue",
    response_model=ReadinessPublic,
    responses={503: {"model": ReadinessPublic, "description": "Not ready; see checks"}},
)
def readyz(database: DatabaseDep) -> JSONResponse:
    checks = readiness(database)
    body = ReadinessPublic(
        ready=all(c.ok for c in checks),
        checks=[CheckPublic(name=c.name, ok=c.ok, detail=c.detail) for c in checks],
    )
    return JSONResponse(body.model_dump(), status_code=200 if body.ready else 503)

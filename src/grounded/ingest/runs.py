"""Ingestion runs: what a user sees about background work on a document.

One run per (document version, pipeline version). The worker moves it through
the stages; each completed stage is recorded, so a killed worker's retry picks
up where it stopped, and nothing a stage wrote is written twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal
from uuid import UUID

from psycopg.types.json import Jsonb

from grounded.auth.principal import Principal
from grounded.db import Connection, Database
from grounded.errors import NotFound

Stage = Literal["queued", "detect", "extract", "chunk", "enrich", "embed", "index", "done"]
STAGES: Final[tuple[Stage, ...]] = (
    "detect",
    "extract",
    "chunk",
    "enrich",
    "embed",
    "index",
)
# Rough share of a run's time per stage, for a progress figure people can read.
_WEIGHT: Final[dict[str, float]] = {
    "detect": 0.02,
    "extract": 0.45,
    "chunk": 0.05,
    "enrich": 0.08,
    "embed": 0.35,
    "index": 0.05,
}

_COLUMNS = (
    "id, document_id, document_version_id, pipeline_version, status, stage, completed_stages,"
    " progress, attempts, error_code, error, timings, detail, created_at, started_at,"
    " finished_at, updated_at"
)


@dataclass(frozen=True)
class Run:
    id: UUID
    document_id: UUID
    document_version_id: UUID
    pipeline_version: str
    status: str
    stage: str
    completed_stages: list[str]
    progress: float
    attempts: int
    error_code: str | None
    error: str | None
    timings: dict[str, float]
    detail: dict[str, Any]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    updated_at: datetime

    def done(self, stage: str) -> bool:
        return stage in self.completed_stages


def create_or_get(
    conn: Connection,
    principal: Principal,
    *,
    document_id: UUID,
    version_id: UUID,
    pipeline_version: str,
) -> tuple[Run, bool]:
    """The run for this version and pipeline; (run, created)."""
    row = conn.execute(
        f"INSERT INTO ingest_runs (tenant_id, document_id, document_version_id, pipeline_version)"
        f" VALUES (%s, %s, %s, %s) ON CONFLICT (document_version_id, pipeline_version)"
        f" DO NOTHING RETURNING {_COLUMNS}",
        (principal.tenant_id, document_id, version_id, pipeline_version),
    ).fetchone()
    if row is not None:
        return Run(**row), True
    existing = conn.execute(
        f"SELECT {_COLUMNS} FROM ingest_runs WHERE document_version_id = %s"
        " AND pipeline_version = %s",
        (version_id, pipeline_version),
    ).fetchone()
    assert existing is not None
    return Run(**existing), False


def get(db: Database, principal: Principal, run_id: UUID) -> Run:
    with db.transaction(principal.tenant_id) as conn:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM ingest_runs WHERE id = %s", (run_id,)
        ).fetchone()
    if row is None:
        raise NotFound(f"ingest run {run_id} not found", details={"id": str(run_id)})
    return Run(**row)


def lock(conn: Connection, run_id: UUID) -> Run:
    """The run, row-locked for the rest of the transaction (one worker at a time)."""
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM ingest_runs WHERE id = %s FOR UPDATE", (run_id,)
    ).fetchone()
    if row is None:
        raise NotFound(f"ingest run {run_id} not found", details={"id": str(run_id)})
    return Run(**row)


def latest_for_documents(
    db: Database, principal: Principal, document_ids: list[UUID]
) -> dict[UUID, Run]:
    """The newest run of each document (for status in lists)."""
    if not document_ids:
        return {}
    with db.transaction(principal.tenant_id) as conn:
        rows = conn.execute(
            f"SELECT DISTINCT ON (document_id) {_COLUMNS} FROM ingest_runs"
            " WHERE document_id = ANY(%s) ORDER BY document_id, created_at DESC, id DESC",
            (document_ids,),
        ).fetchall()
    return {r["document_id"]: Run(**r) for r in rows}


def failed(db: Database, principal: Principal, limit: int = 100) -> list[Run]:
    """The dead-letter view: runs that gave up, newest first."""
    with db.transaction(principal.tenant_id) as conn:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM ingest_runs WHERE status = 'failed'"
            " ORDER BY finished_at DESC NULLS LAST, id LIMIT %s",
            (limit,),
        ).fetchall()
    return [Run(**r) for r in rows]


def start(conn: Connection, run: Run) -> None:
    conn.execute(
        "UPDATE ingest_runs SET status = 'running', attempts = attempts + 1, error = NULL,"
        " error_code = NULL, started_at = coalesce(started_at, now()), updated_at = now()"
        " WHERE id = %s",
        (run.id,),
    )
    conn.execute("UPDATE documents SET status = 'processing' WHERE id = %s", (run.document_id,))


def complete_stage(
    conn: Connection, run_id: UUID, stage: str, seconds: float, detail: dict[str, Any] | None = None
) -> None:
    """Record a finished stage, its time and anything a person should see."""
    row = conn.execute(
        "SELECT completed_stages, timings FROM ingest_runs WHERE id = %s", (run_id,)
    ).fetchone()
    assert row is not None
    completed = list(dict.fromkeys([*row["completed_stages"], stage]))
    progress = min(1.0, sum(_WEIGHT.get(s, 0) for s in completed))
    following = _next_stage(stage)
    conn.execute(
        "UPDATE ingest_runs SET completed_stages = %s, stage = %s, progress = %s,"
        " timings = timings || %s, detail = detail || %s, updated_at = now() WHERE id = %s",
        (
            completed,
            following,
            round(progress, 3),
            Jsonb({stage: round(seconds, 4)}),
            Jsonb(detail or {}, dumps=lambda v: json.dumps(v, default=str)),
            run_id,
        ),
    )


def finish(conn: Connection, run: Run) -> None:
    conn.execute(
        "UPDATE ingest_runs SET status = 'done', stage = 'done', progress = 1,"
        " finished_at = now(), updated_at = now() WHERE id = %s",
        (run.id,),
    )
    conn.execute("UPDATE documents SET status = 'ready' WHERE id = %s", (run.document_id,))


def fail(
    conn: Connection, run_id: UUID, document_id: UUID, *, code: str, message: str, final: bool
) -> None:
    """Record an error. ``final``: no more retries, the document is marked failed."""
    conn.execute(
        "UPDATE ingest_runs SET error_code = %s, error = %s, updated_at = now(),"
        " status = CASE WHEN %s THEN 'failed' ELSE 'queued' END,"
        " finished_at = CASE WHEN %s THEN now() END WHERE id = %s",
        (code, message[:2000], final, final, run_id),
    )
    if final:
        conn.execute("UPDATE documents SET status = 'failed' WHERE id = %s", (document_id,))


def _next_stage(stage: str) -> str:
    index = [str(s) for s in STAGES].index(stage)
    return STAGES[index + 1] if index + 1 < len(STAGES) else "done"

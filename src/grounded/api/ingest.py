"""Uploads and ingestion status over REST (admin only)."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, File, Form, Request, UploadFile, status

from grounded.api.deps import AdminDep, DatabaseDep
from grounded.api.knowledge_schemas import DocumentPublic, IngestStatus
from grounded.errors import InvalidInput
from grounded.ingest import runs
from grounded.ingest.jobs import defer_run
from grounded.ingest.pipeline import pipeline_version
from grounded.ingest.upload import UploadRequest, accept
from grounded.knowledge import Document, Documents, check_groups
from grounded.storage import BlobStore
from grounded.storage.blobs import TooLarge

router = APIRouter(prefix="/v1", tags=["documents"])


def document_public(document: Document, run: runs.Run | None) -> DocumentPublic:
    data: dict[str, Any] = dataclasses.asdict(document)
    data["ingest"] = status_public(run) if run is not None else None
    return DocumentPublic.model_validate(data)


def status_public(run: runs.Run) -> IngestStatus:
    data = dataclasses.asdict(run)
    data["run_id"] = data.pop("id")
    return IngestStatus.model_validate(data)


@router.post(
    "/documents",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Upload a file; ingestion runs in the background",
)
def upload(
    request: Request,
    principal: AdminDep,
    database: DatabaseDep,
    file: Annotated[
        UploadFile, File(description="The document (PDF, Office, HTML, text, CSV, image, audio).")
    ],
    title: Annotated[str | None, Form(max_length=1000)] = None,
    document_id: Annotated[UUID | None, Form(description="Upload a new version of it.")] = None,
    external_id: Annotated[
        str | None, Form(max_length=1000, description="Your id; re-uploads become versions.")
    ] = None,
    source_id: Annotated[UUID | None, Form()] = None,
    acl_groups: Annotated[str | None, Form(description="Comma-separated group names.")] = None,
    metadata: Annotated[str | None, Form(description="A JSON object.")] = None,
) -> DocumentPublic:
    """Stores the bytes (content-addressed; the same bytes again make no new version),
    then returns at once with the document and its queued run; poll
    `GET /v1/documents/{id}` for the stage, progress, error and timings."""
    settings = request.app.state.settings
    limit = settings.max_upload_mb * 1024 * 1024
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit + 1024 * 1024:
        raise TooLarge(
            f"the upload is larger than the limit of {settings.max_upload_mb} MiB",
            details={"max_bytes": limit},
        )
    accepted = accept(
        database,
        BlobStore(settings.raw_dir),
        principal,
        file.file,
        UploadRequest(
            filename=file.filename or "upload",
            title=title,
            document_id=document_id,
            external_id=external_id,
            source_id=source_id,
            acl_groups=tuple(check_groups(_split(acl_groups))),
            metadata=_json_object(metadata),
        ),
        max_bytes=limit,
        pipeline_version=pipeline_version(_chunking(settings)),
    )
    if accepted.new_run:
        defer_run(request.app.state.queue, principal.tenant_id, accepted.run)
    return document_public(accepted.document, accepted.run)


@router.post("/documents/{document_id}/reprocess", summary="Run ingestion again")
def reprocess(
    request: Request, document_id: UUID, principal: AdminDep, database: DatabaseDep
) -> DocumentPublic:
    """Re-queue the newest run of a document (after a failure, or a worker that vanished)."""
    document = Documents(database).get(principal, document_id)
    run = runs.latest_for_documents(database, principal, [document_id]).get(document_id)
    if run is None:
        raise InvalidInput(
            "the document has no uploaded version to process", details={"field": "document_id"}
        )
    if run.status != "done":
        with database.transaction(principal.tenant_id) as conn:
            conn.execute(
                "UPDATE ingest_runs SET status = 'queued', attempts = 0,"
                " finished_at = NULL WHERE id = %s",
                (run.id,),
            )
        defer_run(request.app.state.queue, principal.tenant_id, run)
    return document_public(document, runs.get(database, principal, run.id))


@router.get("/ingest/failed", summary="Dead letters: runs that gave up, newest first")
def failed_runs(principal: AdminDep, database: DatabaseDep) -> list[IngestStatus]:
    return [status_public(r) for r in runs.failed(database, principal)]


def _chunking(settings: Any) -> Any:
    from grounded.ingest.chunking import ChunkingConfig

    return ChunkingConfig()


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _json_object(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"metadata is not JSON: {exc.msg}", details={"field": "metadata"}
        ) from exc
    if not isinstance(parsed, dict):
        raise InvalidInput("metadata must be a JSON object", details={"field": "metadata"})
    return parsed

"""Accepting a file: raw zone, document + version, run, job.

The bytes are streamed into the content-addressed raw zone with the size
limit enforced as they arrive. A document is found by ``document_id`` or
``external_id`` (a re-upload becomes a new version; the same bytes again make
none), or else created. The run row is committed before the job is deferred,
so a job never looks for a run that is not there; the queueing lock keeps one
job per run in the queue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, BinaryIO
from uuid import UUID

from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import InvalidInput
from grounded.ingest import runs
from grounded.ingest.safety import safe_filename
from grounded.knowledge import Document, Documents, DocumentVersion
from grounded.storage import BlobStore


@dataclass(frozen=True)
class Accepted:
    document: Document
    version: DocumentVersion
    run: runs.Run
    new_version: bool
    new_run: bool


@dataclass(frozen=True)
class UploadRequest:
    filename: str
    title: str | None = None
    document_id: UUID | None = None
    external_id: str | None = None
    source_id: UUID | None = None
    acl_groups: tuple[str, ...] = ()
    metadata: dict[str, Any] | None = None


def accept(
    database: Database,
    blobs: BlobStore,
    principal: Principal,
    stream: BinaryIO | Iterable[bytes],
    request: UploadRequest,
    *,
    max_bytes: int,
    pipeline_version: str,
) -> Accepted:
    """Store the bytes and register the version and its run (the job is deferred by the caller)."""
    filename = safe_filename(request.filename)
    if request.document_id is not None and request.external_id is not None:
        raise InvalidInput(
            "give document_id or external_id, not both", details={"field": "external_id"}
        )
    blob = blobs.put_stream(principal.tenant_id, stream, max_bytes=max_bytes)
    documents = Documents(database)
    document = _find_or_create(database, documents, principal, request, filename)
    version, new_version = documents.add_version(
        principal, document.id, content_sha256=blob.sha256, byte_size=blob.size, filename=filename
    )
    with database.transaction(principal.tenant_id) as conn:
        run, new_run = runs.create_or_get(
            conn,
            principal,
            document_id=document.id,
            version_id=version.id,
            pipeline_version=pipeline_version,
        )
        if new_run:
            conn.execute("UPDATE documents SET status = 'queued' WHERE id = %s", (document.id,))
    return Accepted(documents.get(principal, document.id), version, run, new_version, new_run)


def _find_or_create(
    database: Database,
    documents: Documents,
    principal: Principal,
    request: UploadRequest,
    filename: str,
) -> Document:
    if request.document_id is not None:
        return documents.get(principal, request.document_id)
    if request.external_id is not None:
        with database.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                "SELECT id FROM documents WHERE external_id = %s AND deleted_at IS NULL",
                (request.external_id,),
            ).fetchone()
        if row is not None:
            return documents.get(principal, row["id"])
    return documents.create(
        principal,
        title=request.title or filename,
        source_id=request.source_id,
        external_id=request.external_id,
        acl_groups=request.acl_groups,
        metadata=request.metadata,
    )

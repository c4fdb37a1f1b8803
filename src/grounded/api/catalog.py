"""Sources and documents over REST (admin only). Uploads live in the ingest router."""

from __future__ import annotations

import dataclasses
from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query, status

from grounded.api.deps import AdminDep, DatabaseDep
from grounded.api.ingest import document_public
from grounded.api.knowledge_schemas import (
    DocumentPage,
    DocumentPatch,
    DocumentPublic,
    DocumentVersionPublic,
    RestoreRequest,
    SourceCreate,
    SourcePage,
    SourcePatch,
    SourcePublic,
)
from grounded.ingest import runs
from grounded.knowledge import Documents, Sources

router = APIRouter(prefix="/v1")
LimitQuery = Annotated[int, Query(ge=1, le=200, description="Items per page.")]
VersionQuery = Annotated[int, Query(ge=1, description="The version you read.")]


@router.get("/sources", tags=["sources"], summary="Page through sources")
def list_sources(
    principal: AdminDep,
    database: DatabaseDep,
    cursor: str | None = None,
    limit: LimitQuery = 50,
    include_deleted: bool = False,
) -> SourcePage:
    page = Sources(database).page(
        principal, cursor=cursor, limit=limit, include_deleted=include_deleted
    )
    return SourcePage(
        items=[SourcePublic.model_validate(dataclasses.asdict(s)) for s in page.items],
        next_cursor=page.next_cursor,
    )


@router.post(
    "/sources", tags=["sources"], status_code=status.HTTP_201_CREATED, summary="Register a source"
)
def create_source(body: SourceCreate, principal: AdminDep, database: DatabaseDep) -> SourcePublic:
    source = Sources(database).create(
        principal, kind=body.kind, name=body.name, uri=body.uri, metadata=body.metadata
    )
    return SourcePublic.model_validate(dataclasses.asdict(source))


@router.get("/sources/{source_id}", tags=["sources"], summary="One source")
def get_source(source_id: UUID, principal: AdminDep, database: DatabaseDep) -> SourcePublic:
    return SourcePublic.model_validate(
        dataclasses.asdict(Sources(database).get(principal, source_id))
    )


@router.patch("/sources/{source_id}", tags=["sources"], summary="Rename or re-point a source")
def patch_source(
    source_id: UUID, body: SourcePatch, principal: AdminDep, database: DatabaseDep
) -> SourcePublic:
    source = Sources(database).patch(
        principal, source_id, body.version, name=body.name, uri=body.uri, metadata=body.metadata
    )
    return SourcePublic.model_validate(dataclasses.asdict(source))


@router.delete(
    "/sources/{source_id}",
    tags=["sources"],
    summary="Tombstone a source (409 with the ids of live records that use it)",
)
def delete_source(
    source_id: UUID, principal: AdminDep, database: DatabaseDep, version: VersionQuery
) -> SourcePublic:
    source = Sources(database).delete(principal, source_id, version)
    return SourcePublic.model_validate(dataclasses.asdict(source))


@router.post("/sources/{source_id}/restore", tags=["sources"], summary="Restore a source")
def restore_source(
    source_id: UUID, body: RestoreRequest, principal: AdminDep, database: DatabaseDep
) -> SourcePublic:
    source = Sources(database).restore(principal, source_id, body.version)
    return SourcePublic.model_validate(dataclasses.asdict(source))


@router.get("/documents", tags=["documents"], summary="Page through documents")
def list_documents(
    principal: AdminDep,
    database: DatabaseDep,
    cursor: str | None = None,
    limit: LimitQuery = 50,
    include_deleted: bool = False,
) -> DocumentPage:
    page = Documents(database).page(
        principal, cursor=cursor, limit=limit, include_deleted=include_deleted
    )
    latest = runs.latest_for_documents(database, principal, [d.id for d in page.items])
    return DocumentPage(
        items=[document_public(d, latest.get(d.id)) for d in page.items],
        next_cursor=page.next_cursor,
    )


@router.get("/documents/{document_id}", tags=["documents"], summary="One document")
def get_document(document_id: UUID, principal: AdminDep, database: DatabaseDep) -> DocumentPublic:
    document = Documents(database).get(principal, document_id)
    latest = runs.latest_for_documents(database, principal, [document_id])
    return document_public(document, latest.get(document_id))


@router.patch(
    "/documents/{document_id}",
    tags=["documents"],
    summary="Retitle, restrict to groups, or change metadata",
)
def patch_document(
    document_id: UUID, body: DocumentPatch, principal: AdminDep, database: DatabaseDep
) -> DocumentPublic:
    document = Documents(database).patch(
        principal,
        document_id,
        body.version,
        title=body.title,
        metadata=body.metadata,
        acl_groups=tuple(body.acl_groups) if body.acl_groups is not None else None,
    )
    return DocumentPublic.model_validate(dataclasses.asdict(document))


@router.delete(
    "/documents/{document_id}",
    tags=["documents"],
    summary="Tombstone a document (409 if live knowledge items cite it)",
)
def delete_document(
    document_id: UUID, principal: AdminDep, database: DatabaseDep, version: VersionQuery
) -> DocumentPublic:
    document = Documents(database).delete(principal, document_id, version)
    return DocumentPublic.model_validate(dataclasses.asdict(document))


@router.post("/documents/{document_id}/restore", tags=["documents"], summary="Restore a document")
def restore_document(
    document_id: UUID, body: RestoreRequest, principal: AdminDep, database: DatabaseDep
) -> DocumentPublic:
    document = Documents(database).restore(principal, document_id, body.version)
    return DocumentPublic.model_validate(dataclasses.asdict(document))


@router.get(
    "/documents/{document_id}/versions",
    tags=["documents"],
    summary="Every version of a document, oldest first",
)
def document_versions(
    document_id: UUID, principal: AdminDep, database: DatabaseDep
) -> list[DocumentVersionPublic]:
    return [
        DocumentVersionPublic.model_validate(dataclasses.asdict(v))
        for v in Documents(database).versions(principal, document_id)
    ]

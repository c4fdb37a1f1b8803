"""API schemas for the knowledge endpoints (Create / Update / Public families).

Request bodies forbid unknown fields: a body that tries to set ``tenant_id``,
``owner_id``, ``created_by`` or anything else the server decides is refused
with 422 naming the field, never honoured.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

CONFIDENCE_DOC = (
    "Declared confidence: `verified` (a person checked it against its source), `inferred` "
    "(derived), `unverified` (nobody vouches for it). Labels are writer declarations, not "
    "probabilities. Omitted on create: stored empty, effectively `inferred`."
)
ConfidenceLabel = Literal["verified", "inferred", "unverified"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class VersionedRequest(Strict):
    version: int = Field(ge=1, description="The version you read; a stale one gets 409.")


class KnowledgeItemCreate(Strict):
    body: str = Field(min_length=1, max_length=100_000, description="The statement or passage.")
    basis: dict[str, Any] = Field(default_factory=dict, description="Evidence pointer.")
    category: str | None = Field(default=None, max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=50)
    pinned: bool = False
    confidence: ConfidenceLabel | None = Field(default=None, description=CONFIDENCE_DOC)
    source_id: UUID | None = None
    document_id: UUID | None = None
    kind: Literal["statement", "passage", "extraction"] = Field(
        default="statement", description="`extraction` (machine generated) defaults to unverified."
    )
    submit: bool = Field(default=False, description="Submit for review at once (pending).")


class KnowledgeSummaryCreate(Strict):
    inputs: list[UUID] = Field(min_length=1, max_length=100, description="Live items summarised.")
    body: str = Field(min_length=1, max_length=100_000)
    basis: dict[str, Any] = Field(default_factory=dict)
    category: str | None = Field(default=None, max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=50)
    confidence: ConfidenceLabel | None = Field(
        default=None,
        description=CONFIDENCE_DOC + " Omitted: the minimum of `inferred` and the inputs' labels.",
    )
    submit: bool = False


class KnowledgeItemPatch(VersionedRequest):
    """A narrow lifecycle patch: confidence and review state are kept."""

    category: str | None = Field(default=None, max_length=200)
    tags: list[str] | None = Field(default=None, max_length=50)
    pinned: bool | None = None


class KnowledgeItemRevision(VersionedRequest):
    """New body and/or basis: the item returns to review and its label is re-derived."""

    body: str | None = Field(default=None, min_length=1, max_length=100_000)
    basis: dict[str, Any] | None = None
    confidence: ConfidenceLabel | None = Field(
        default=None, description=CONFIDENCE_DOC + " Omitted: derived from the item and inputs."
    )
    inputs: list[UUID] = Field(default_factory=list, max_length=100)


class ReviewRequest(VersionedRequest):
    action: Literal["submit", "verify", "reject"]
    note: str | None = Field(
        default=None, max_length=5000, description="Required to verify/reject."
    )
    source_link: str | None = Field(
        default=None, max_length=4000, description="Required to verify."
    )
    captured_at: datetime | None = Field(default=None, description="Required to verify.")


class KnowledgeItemPublic(BaseModel):
    id: UUID
    kind: str
    body: str
    basis: dict[str, Any]
    category: str | None
    tags: list[str]
    pinned: bool
    confidence: str | None = Field(description="The stored label (may be empty or historical).")
    effective_confidence: ConfidenceLabel = Field(description=CONFIDENCE_DOC)
    review_state: Literal["draft", "pending", "verified", "rejected"]
    version: int
    source_id: UUID | None
    document_id: UUID | None
    derived_from: list[UUID]
    source_link: str | None
    captured_at: datetime | None
    verified_by: UUID | None
    verified_at: datetime | None
    review_note: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None


class SourceCreate(Strict):
    kind: Literal["upload", "url", "system", "records"]
    name: str = Field(min_length=1, max_length=500)
    uri: str | None = Field(default=None, max_length=4000)
    metadata: dict[str, Any] = Field(default_factory=dict)


class SourcePatch(VersionedRequest):
    name: str | None = Field(default=None, min_length=1, max_length=500)
    uri: str | None = Field(default=None, max_length=4000)
    metadata: dict[str, Any] | None = None


class SourcePublic(BaseModel):
    id: UUID
    kind: str
    name: str
    uri: str | None
    metadata: dict[str, Any]
    version: int
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None


class DocumentPatch(VersionedRequest):
    title: str | None = Field(default=None, min_length=1, max_length=1000)
    acl_groups: list[str] | None = Field(
        default=None, description="Only principals in one of these groups may see it; [] = all."
    )
    metadata: dict[str, Any] | None = None


class IngestStatus(BaseModel):
    """Background work on the document's newest version (seed 001 ADR-009)."""

    run_id: UUID
    document_version_id: UUID
    status: Literal["queued", "running", "done", "failed"]
    stage: str = Field(description="detect, extract, chunk, enrich, embed, index or done.")
    progress: float = Field(description="0 to 1, weighted by the usual time of each stage.")
    attempts: int
    error_code: str | None
    error: str | None = Field(description="What went wrong, in words a person can act on.")
    timings: dict[str, float] = Field(description="Seconds spent per finished stage.")
    detail: dict[str, Any] = Field(description="Type, pages, chunk counts, warnings, models.")
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class DocumentPublic(BaseModel):
    id: UUID
    source_id: UUID | None
    external_id: str | None
    title: str
    acl_groups: list[str]
    metadata: dict[str, Any]
    current_version_id: UUID | None
    status: str
    version: int
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    ingest: IngestStatus | None = None


class DocumentVersionPublic(BaseModel):
    id: UUID
    document_id: UUID
    version_no: int
    content_sha256: str
    byte_size: int
    mime_type: str | None
    filename: str | None
    created_at: datetime


class EventPublic(BaseModel):
    id: int
    occurred_at: datetime
    actor_kind: str
    actor_id: UUID | None
    entity_type: str
    entity_id: UUID
    action: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class RestoreRequest(VersionedRequest):
    pass


class KnowledgePage(BaseModel):
    items: list[KnowledgeItemPublic]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at end.")


class SourcePage(BaseModel):
    items: list[SourcePublic]
    next_cursor: str | None


class DocumentPage(BaseModel):
    items: list[DocumentPublic]
    next_cursor: str | None

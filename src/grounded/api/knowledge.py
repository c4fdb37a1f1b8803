"""Knowledge items, review and history over REST (admin only; seed 002 ADR-006/009)."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Query, status

from grounded.api.deps import AdminDep, DatabaseDep
from grounded.api.knowledge_schemas import (
    EventPublic,
    KnowledgeItemCreate,
    KnowledgeItemPatch,
    KnowledgeItemPublic,
    KnowledgeItemRevision,
    KnowledgePage,
    KnowledgeSummaryCreate,
    RestoreRequest,
    ReviewRequest,
)
from grounded.errors import InvalidInput
from grounded.knowledge import (
    ItemFilter,
    KnowledgeItem,
    KnowledgeItems,
    NewItem,
    ReviewInput,
    list_events,
)

router = APIRouter(prefix="/v1", tags=["knowledge"])

StateQuery = Annotated[str | None, Query(description="Only items in this review state.")]
CategoryQuery = Annotated[str | None, Query(description="Only items in this category.")]
LimitQuery = Annotated[int, Query(ge=1, le=200, description="Items per page.")]


def public(item: KnowledgeItem) -> KnowledgeItemPublic:
    data: dict[str, Any] = dataclasses.asdict(item)
    data["effective_confidence"] = item.effective_confidence
    return KnowledgeItemPublic.model_validate(data)


@router.get("/knowledge", summary="List knowledge items (legacy array form)")
def list_items_legacy(
    principal: AdminDep,
    database: DatabaseDep,
    state: StateQuery = None,
    category: CategoryQuery = None,
    limit: LimitQuery = 200,
) -> list[KnowledgeItemPublic]:
    """The first page as a plain array, kept for clients of the original list shape
    (seed 002 ADR-006). New clients use `/v1/knowledge/page`."""
    page = KnowledgeItems(database).page(
        principal, limit=limit, filters=ItemFilter(review_state=state, category=category)
    )
    return [public(i) for i in page.items]


@router.get("/knowledge/page", summary="Page through knowledge items")
def page_items(
    principal: AdminDep,
    database: DatabaseDep,
    state: StateQuery = None,
    category: CategoryQuery = None,
    cursor: str | None = None,
    limit: LimitQuery = 50,
    include_deleted: bool = False,
) -> KnowledgePage:
    """Items in creation order; stable under concurrent writes (keyset cursor)."""
    page = KnowledgeItems(database).page(
        principal,
        cursor=cursor,
        limit=limit,
        filters=ItemFilter(review_state=state, category=category, include_deleted=include_deleted),
    )
    return KnowledgePage(items=[public(i) for i in page.items], next_cursor=page.next_cursor)


@router.post("/knowledge", status_code=status.HTTP_201_CREATED, summary="Add a knowledge item")
def create_item(
    body: KnowledgeItemCreate, principal: AdminDep, database: DatabaseDep
) -> KnowledgeItemPublic:
    new = NewItem(
        body=body.body,
        basis=body.basis,
        category=body.category,
        tags=tuple(body.tags),
        pinned=body.pinned,
        confidence=body.confidence,
        source_id=body.source_id,
        document_id=body.document_id,
        kind=body.kind,
        submit=body.submit,
    )
    return public(KnowledgeItems(database).create(principal, new))


@router.post(
    "/knowledge/summaries",
    status_code=status.HTTP_201_CREATED,
    summary="Add a generated summary of live items",
)
def create_summary(
    body: KnowledgeSummaryCreate, principal: AdminDep, database: DatabaseDep
) -> KnowledgeItemPublic:
    new = NewItem(
        body=body.body,
        basis=body.basis,
        category=body.category,
        tags=tuple(body.tags),
        confidence=body.confidence,
        submit=body.submit,
    )
    return public(KnowledgeItems(database).summarize(principal, body.inputs, new))


@router.get("/knowledge/{item_id}", summary="One knowledge item")
def get_item(
    item_id: UUID, principal: AdminDep, database: DatabaseDep, include_deleted: bool = False
) -> KnowledgeItemPublic:
    return public(KnowledgeItems(database).get(principal, item_id, include_deleted=include_deleted))


@router.patch("/knowledge/{item_id}", summary="Change category, tags or pin")
def patch_item(
    item_id: UUID, body: KnowledgeItemPatch, principal: AdminDep, database: DatabaseDep
) -> KnowledgeItemPublic:
    return public(
        KnowledgeItems(database).patch(
            principal,
            item_id,
            body.version,
            category=body.category,
            tags=tuple(body.tags) if body.tags is not None else None,
            pinned=body.pinned,
        )
    )


@router.post("/knowledge/{item_id}/revisions", summary="Revise body or basis")
def revise_item(
    item_id: UUID, body: KnowledgeItemRevision, principal: AdminDep, database: DatabaseDep
) -> KnowledgeItemPublic:
    return public(
        KnowledgeItems(database).revise(
            principal,
            item_id,
            body.version,
            body=body.body,
            basis=body.basis,
            confidence_label=body.confidence,
            inputs=tuple(body.inputs),
        )
    )


@router.post("/knowledge/{item_id}/review", summary="Submit, verify or reject")
def review_item(
    item_id: UUID, body: ReviewRequest, principal: AdminDep, database: DatabaseDep
) -> KnowledgeItemPublic:
    """Verifying needs `source_link`, `captured_at` and `note`; the verifier is you."""
    decision = ReviewInput(
        action=body.action,
        note=body.note,
        source_link=body.source_link,
        captured_at=body.captured_at,
    )
    return public(KnowledgeItems(database).review(principal, item_id, body.version, decision))


@router.delete("/knowledge/{item_id}", summary="Tombstone an item")
def delete_item(
    item_id: UUID,
    principal: AdminDep,
    database: DatabaseDep,
    version: Annotated[int, Query(ge=1, description="The version you read.")],
) -> KnowledgeItemPublic:
    return public(KnowledgeItems(database).delete(principal, item_id, version))


@router.post("/knowledge/{item_id}/restore", summary="Restore a tombstoned item")
def restore_item(
    item_id: UUID, body: RestoreRequest, principal: AdminDep, database: DatabaseDep
) -> KnowledgeItemPublic:
    return public(KnowledgeItems(database).restore(principal, item_id, body.version))


@router.get("/events", summary="The append-only event log", tags=["history"])
def events(
    principal: AdminDep,
    database: DatabaseDep,
    entity: Annotated[
        str | None, Query(description="`TYPE:ID`, e.g. `knowledge_item:3f2c...`; omit for all.")
    ] = None,
    after: Annotated[int, Query(ge=0, description="Events after this id.")] = 0,
    limit: LimitQuery = 100,
) -> list[EventPublic]:
    entity_type, entity_id = _parse_entity(entity)
    with database.transaction(principal.tenant_id) as conn:
        found = list_events(
            conn, entity_type=entity_type, entity_id=entity_id, after_id=after, limit=limit
        )
    return [EventPublic.model_validate(dataclasses.asdict(e)) for e in found]


_ENTITY_TYPES = {"source", "document", "document_version", "knowledge_item"}


def _parse_entity(entity: str | None) -> tuple[str | None, UUID | None]:
    if entity is None:
        return None, None
    kind, _, raw_id = entity.partition(":")
    if kind not in _ENTITY_TYPES:
        raise InvalidInput(
            f"entity type must be one of {', '.join(sorted(_ENTITY_TYPES))}",
            details={"field": "entity"},
        )
    if not raw_id:
        return kind, None
    try:
        return kind, UUID(raw_id)
    except ValueError as exc:
        raise InvalidInput("entity id is not a UUID", details={"field": "entity"}) from exc

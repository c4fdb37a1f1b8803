"""Knowledge items: reviewed statements with history, versions and declared confidence.

Every method takes the verified Principal first and runs in one transaction
bound to its tenant: the row, its event, the catalog revision and the index
outbox entry commit together or not at all (seed 000 ADR-016, seed 002
ADR-006). Nothing here deletes a row: deletes are tombstones.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final, Literal
from uuid import UUID

from grounded.auth.principal import Principal
from grounded.db import Connection, Database
from grounded.errors import InvalidInput, NotFound
from grounded.knowledge import confidence, history, review
from grounded.knowledge.confidence import Label
from grounded.knowledge.confidence import effective as effective_label
from grounded.knowledge.paging import Page, keyset_page
from grounded.knowledge.rows import check_text, lock_for_change, public, require_live, set_deleted

MAX_BODY_CHARS: Final = 100_000
MAX_SHORT_CHARS: Final = 200
MAX_TAGS: Final = 50
MAX_INPUTS: Final = 100

Kind = Literal["statement", "passage", "summary", "extraction"]

_COLUMNS = (
    "id, source_id, document_id, kind, body, basis, category, tags, pinned, confidence,"
    " review_state, version, derived_from, source_link, captured_at, verified_by, verified_at,"
    " review_note, created_by, updated_by, created_at, updated_at, deleted_at"
)


@dataclass(frozen=True)
class KnowledgeItem:
    id: UUID
    source_id: UUID | None
    document_id: UUID | None
    kind: str
    body: str
    basis: dict[str, Any]
    category: str | None
    tags: list[str]
    pinned: bool
    confidence: str | None
    review_state: str
    version: int
    derived_from: list[UUID]
    source_link: str | None
    captured_at: datetime | None
    verified_by: UUID | None
    verified_at: datetime | None
    review_note: str | None
    created_by: UUID | None
    updated_by: UUID | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None

    @property
    def effective_confidence(self) -> Label:
        return effective_label(self.confidence)


@dataclass(frozen=True)
class NewItem:
    body: str
    basis: dict[str, Any] = field(default_factory=dict)
    category: str | None = None
    tags: tuple[str, ...] = ()
    pinned: bool = False
    confidence: str | None = None
    source_id: UUID | None = None
    document_id: UUID | None = None
    kind: Kind = "statement"
    submit: bool = False


@dataclass(frozen=True)
class ItemFilter:
    review_state: str | None = None
    category: str | None = None
    include_deleted: bool = False


class KnowledgeItems:
    """The service over ``knowledge_items``."""

    def __init__(self, database: Database) -> None:
        self._db = database

    # -- reads ---------------------------------------------------------------

    def get(
        self, principal: Principal, item_id: UUID, *, include_deleted: bool = False
    ) -> KnowledgeItem:
        with self._db.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM knowledge_items WHERE id = %s", (item_id,)
            ).fetchone()
        if row is None or (row["deleted_at"] is not None and not include_deleted):
            raise NotFound(f"knowledge item {item_id} not found", details={"id": str(item_id)})
        return KnowledgeItem(**row)

    def page(
        self,
        principal: Principal,
        *,
        cursor: str | None = None,
        limit: int = 50,
        filters: ItemFilter = ItemFilter(),
    ) -> Page[KnowledgeItem]:
        """Items in creation order (created_at, id), one page at a time."""
        clauses: list[str] = []
        params: dict[str, Any] = {}
        if not filters.include_deleted:
            clauses.append("deleted_at IS NULL")
        if filters.review_state is not None:
            if filters.review_state not in review.STATES:
                raise InvalidInput(
                    f"review_state must be one of {', '.join(review.STATES)}",
                    details={"field": "review_state"},
                )
            clauses.append("review_state = %(state)s")
            params["state"] = filters.review_state
        if filters.category is not None:
            clauses.append("category = %(category)s")
            params["category"] = filters.category
        with self._db.transaction(principal.tenant_id) as conn:
            rows, next_cursor = keyset_page(
                conn, "knowledge_items", _COLUMNS, clauses, params, cursor=cursor, limit=limit
            )
        return Page([KnowledgeItem(**r) for r in rows], next_cursor)

    # -- writes --------------------------------------------------------------

    def create(self, principal: Principal, new: NewItem) -> KnowledgeItem:
        """Add an item. Omitted confidence stores empty legacy metadata (effectively
        inferred); generated extraction is unverified unless a label is given."""
        _check_item_fields(new.body, new.category, new.tags)
        label = confidence.parse_input(new.confidence)
        if label is None and new.kind == "extraction":
            label = confidence.EXTRACTION_LABEL
        if new.kind == "summary":
            raise InvalidInput(
                "summaries are created with summarize(), which records their inputs",
                details={"field": "kind"},
            )
        state = "pending" if new.submit else "draft"
        with self._db.transaction(principal.tenant_id) as conn:
            require_live(conn, "sources", new.source_id, "source_id")
            require_live(conn, "documents", new.document_id, "document_id")
            row = _insert(conn, principal, new, label, state, derived_from=[])
            history.record(
                conn,
                principal,
                entity_type="knowledge_item",
                entity_id=row["id"],
                action="created",
                before=None,
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return KnowledgeItem(**row)

    def summarize(self, principal: Principal, input_ids: list[UUID], new: NewItem) -> KnowledgeItem:
        """A generated summary of live inputs. Omitted confidence is the minimum of
        ``inferred`` and the inputs' effective labels, read under lock in this
        transaction so a concurrent relabel cannot slip between check and commit."""
        if not input_ids or len(input_ids) > MAX_INPUTS:
            raise InvalidInput(
                f"a summary needs 1 to {MAX_INPUTS} inputs", details={"field": "inputs"}
            )
        _check_item_fields(new.body, new.category, new.tags)
        explicit = confidence.parse_input(new.confidence)
        with self._db.transaction(principal.tenant_id) as conn:
            labels = _locked_input_labels(conn, input_ids)
            label = confidence.derived(explicit, labels)
            summary = replace(new, kind="summary", pinned=False)  # pin is never inherited
            row = _insert(
                conn,
                principal,
                summary,
                label,
                "pending" if new.submit else "draft",
                derived_from=input_ids,
            )
            history.record(
                conn,
                principal,
                entity_type="knowledge_item",
                entity_id=row["id"],
                action="summarized",
                before=None,
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return KnowledgeItem(**row)

    def revise(
        self,
        principal: Principal,
        item_id: UUID,
        expected_version: int,
        *,
        body: str | None = None,
        basis: dict[str, Any] | None = None,
        confidence_label: str | None = None,
        inputs: tuple[UUID, ...] = (),
    ) -> KnowledgeItem:
        """Replace the body and/or basis. The item returns to review; its label is
        explicit or derived from itself and any extra inputs; pin is not inherited."""
        if body is None and basis is None:
            raise InvalidInput("a revision changes body or basis", details={"field": "body"})
        if body is not None:
            check_text(body, "body", MAX_BODY_CHARS)
        explicit = confidence.parse_input(confidence_label)
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(
                conn, "knowledge_items", "knowledge item", item_id, expected_version
            )
            input_labels = [before["confidence"], *_locked_input_labels(conn, list(inputs))]
            label = confidence.derived(explicit, input_labels)
            row = conn.execute(
                f"""UPDATE knowledge_items SET body = %s, basis = %s, confidence = %s,
                    review_state = %s, pinned = false, derived_from = %s,
                    verified_by = NULL, verified_at = NULL, source_link = NULL,
                    captured_at = NULL, review_note = NULL,
                    version = version + 1, updated_by = %s, updated_at = now()
                    WHERE id = %s RETURNING {_COLUMNS}""",
                (
                    body if body is not None else before["body"],
                    history.snapshot(basis if basis is not None else before["basis"]),
                    label,
                    review.after_content_change(before["review_state"]),
                    list(dict.fromkeys([*before["derived_from"], *inputs])),
                    principal.id,
                    item_id,
                ),
            ).fetchone()
            assert row is not None
            history.record(
                conn,
                principal,
                entity_type="knowledge_item",
                entity_id=item_id,
                action="revised",
                before=public(before),
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return KnowledgeItem(**row)

    def patch(
        self,
        principal: Principal,
        item_id: UUID,
        expected_version: int,
        *,
        category: str | None = None,
        tags: tuple[str, ...] | None = None,
        pinned: bool | None = None,
    ) -> KnowledgeItem:
        """A narrow lifecycle patch: category, tags, pin. Confidence and review state
        are kept (seed 000 ADR-016)."""
        _check_item_fields("x", category, tags or ())
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(
                conn, "knowledge_items", "knowledge item", item_id, expected_version
            )
            row = conn.execute(
                f"""UPDATE knowledge_items SET category = %s, tags = %s, pinned = %s,
                    version = version + 1, updated_by = %s, updated_at = now()
                    WHERE id = %s RETURNING {_COLUMNS}""",
                (
                    category if category is not None else before["category"],
                    list(tags) if tags is not None else before["tags"],
                    pinned if pinned is not None else before["pinned"],
                    principal.id,
                    item_id,
                ),
            ).fetchone()
            assert row is not None
            history.record(
                conn,
                principal,
                entity_type="knowledge_item",
                entity_id=item_id,
                action="patched",
                before=public(before),
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return KnowledgeItem(**row)

    def review(
        self,
        principal: Principal,
        item_id: UUID,
        expected_version: int,
        decision: review.ReviewInput,
    ) -> KnowledgeItem:
        """Submit, verify or reject. Verifying records link, capture time, verifier, note."""
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(
                conn, "knowledge_items", "knowledge item", item_id, expected_version
            )
            target = review.next_state(before["review_state"], decision)
            verifying = decision.action == "verify"
            row = conn.execute(
                f"""UPDATE knowledge_items SET review_state = %s,
                    source_link = %s, captured_at = %s, review_note = %s,
                    verified_by = %s, verified_at = CASE WHEN %s THEN now() END,
                    version = version + 1, updated_by = %s, updated_at = now()
                    WHERE id = %s RETURNING {_COLUMNS}""",
                (
                    target,
                    decision.source_link if verifying else before["source_link"],
                    decision.captured_at if verifying else before["captured_at"],
                    decision.note,
                    principal.id if verifying else None,
                    verifying,
                    principal.id,
                    item_id,
                ),
            ).fetchone()
            assert row is not None
            history.record(
                conn,
                principal,
                entity_type="knowledge_item",
                entity_id=item_id,
                action=f"review.{decision.action}",
                before=public(before),
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return KnowledgeItem(**row)

    def delete(self, principal: Principal, item_id: UUID, expected_version: int) -> KnowledgeItem:
        """Tombstone the item (it leaves retrieval; its history and lineage stay)."""
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(
                conn, "knowledge_items", "knowledge item", item_id, expected_version
            )
            row = set_deleted(
                conn, "knowledge_items", _COLUMNS, item_id, deleted=True, updated_by=principal.id
            )
            history.record(
                conn,
                principal,
                entity_type="knowledge_item",
                entity_id=item_id,
                action="deleted",
                before=public(before),
                after=row,
                entity_version=row["version"],
                index_op="delete",
            )
        return KnowledgeItem(**row)

    def restore(self, principal: Principal, item_id: UUID, expected_version: int) -> KnowledgeItem:
        """Bring a tombstoned item back, if what it references is live."""
        with self._db.transaction(principal.tenant_id) as conn:
            before = lock_for_change(
                conn,
                "knowledge_items",
                "knowledge item",
                item_id,
                expected_version,
                allow_deleted=True,
            )
            if before["deleted_at"] is None:
                return KnowledgeItem(**public(before))
            require_live(conn, "sources", before["source_id"], "source_id")
            require_live(conn, "documents", before["document_id"], "document_id")
            row = set_deleted(
                conn, "knowledge_items", _COLUMNS, item_id, deleted=False, updated_by=principal.id
            )
            history.record(
                conn,
                principal,
                entity_type="knowledge_item",
                entity_id=item_id,
                action="restored",
                before=public(before),
                after=row,
                entity_version=row["version"],
                index_op="upsert",
            )
        return KnowledgeItem(**row)


# -- internals ---------------------------------------------------------------


def _check_item_fields(body: str, category: str | None, tags: tuple[str, ...]) -> None:
    check_text(body, "body", MAX_BODY_CHARS)
    if category is not None:
        check_text(category, "category", MAX_SHORT_CHARS)
    if len(tags) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags", details={"field": "tags"})
    for tag in tags:
        check_text(tag, "tags", MAX_SHORT_CHARS)


def _insert(
    conn: Connection,
    principal: Principal,
    new: NewItem,
    label: str | None,
    state: str,
    *,
    derived_from: list[UUID],
) -> dict[str, Any]:
    row = conn.execute(
        f"""INSERT INTO knowledge_items (tenant_id, source_id, document_id, kind, body, basis,
            category, tags, pinned, confidence, review_state, derived_from, created_by,
            updated_by)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
            RETURNING {_COLUMNS}""",
        (
            principal.tenant_id,
            new.source_id,
            new.document_id,
            new.kind,
            new.body,
            history.snapshot(new.basis),
            new.category,
            list(new.tags),
            new.pinned,
            label,
            state,
            derived_from,
            principal.id,
            principal.id,
        ),
    ).fetchone()
    assert row is not None
    return dict(row)


def _locked_input_labels(conn: Connection, ids: list[UUID]) -> list[str | None]:
    """Stored labels of live inputs, share-locked until commit; all must exist."""
    if not ids:
        return []
    rows = conn.execute(
        "SELECT id, confidence FROM knowledge_items WHERE id = ANY(%s) AND deleted_at IS NULL "
        "ORDER BY id FOR SHARE",
        (list(ids),),
    ).fetchall()
    found = {r["id"] for r in rows}
    missing = [str(i) for i in ids if i not in found]
    if missing:
        raise InvalidInput(
            f"inputs are not live knowledge items: {', '.join(missing)}",
            details={"field": "inputs", "ids": missing},
        )
    return [r["confidence"] for r in rows]

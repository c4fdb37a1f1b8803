"""The knowledge lifecycle against a real PostgreSQL: history, review, concurrency, deletes."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime

import psycopg
import pytest

from grounded.auth import Principal
from grounded.db import Database
from grounded.errors import Conflict, InvalidInput, NotFound
from grounded.knowledge import (
    Documents,
    KnowledgeItems,
    NewItem,
    ReviewInput,
    Sources,
    list_events,
)
from tests.conftest import make_tenant

pytestmark = pytest.mark.integration


@pytest.fixture
def admin(owner: psycopg.Connection) -> Principal:
    return Principal("user", uuid.uuid4(), make_tenant(owner, "acme"), frozenset({"admin"}))


@pytest.fixture
def other(owner: psycopg.Connection) -> Principal:
    return Principal("user", uuid.uuid4(), make_tenant(owner, "globex"), frozenset({"admin"}))


def _events(database: Database, who: Principal, entity_id: uuid.UUID) -> list[str]:
    with database.transaction(who.tenant_id) as conn:
        return [e.action for e in list_events(conn, entity_type=None, entity_id=entity_id)]


def test_newcomer_flow_add_revise_verify_history(database: Database, admin: Principal) -> None:
    items = KnowledgeItems(database)
    item = items.create(
        admin,
        NewItem(
            body="The warranty lasts 24 months.",
            submit=True,
            confidence="verified",
            tags=("warranty",),
        ),
    )
    assert (item.review_state, item.version, item.confidence) == ("pending", 1, "verified")
    verified = items.review(
        admin,
        item.id,
        1,
        ReviewInput(
            "verify",
            note="checked against the contract",
            source_link="https://example.com/c",
            captured_at=datetime(2026, 11, 1, tzinfo=UTC),
        ),
    )
    assert verified.review_state == "verified" and verified.verified_by == admin.id
    revised = items.revise(admin, item.id, 2, body="The warranty lasts 36 months.")
    assert revised.review_state == "pending"  # a changed body needs review again
    assert revised.verified_by is None and revised.source_link is None
    assert revised.confidence == "inferred"  # min(inferred, verified): a revision claims less
    assert _events(database, admin, item.id) == ["created", "review.verify", "revised"]
    with database.transaction(admin.tenant_id) as conn:
        events = list_events(conn, entity_type="knowledge_item", entity_id=item.id)
    assert events[2].before is not None and events[2].after is not None
    assert events[2].before["body"] == "The warranty lasts 24 months."
    assert events[2].after["body"] == "The warranty lasts 36 months."
    assert "tenant_id" not in events[2].after


def test_confidence_storage_rules(
    database: Database, admin: Principal, owner: psycopg.Connection
) -> None:
    items = KnowledgeItems(database)
    legacy = items.create(admin, NewItem(body="omitted label"))
    assert legacy.confidence is None and legacy.effective_confidence == "inferred"
    extraction = items.create(admin, NewItem(body="machine extracted", kind="extraction"))
    assert extraction.confidence == "unverified"
    # An unknown historical value stays stored and counts as unverified.
    owner.execute("UPDATE knowledge_items SET confidence = 'high' WHERE id = %s", (legacy.id,))
    historical = items.get(admin, legacy.id)
    assert historical.confidence == "high" and historical.effective_confidence == "unverified"
    verified = items.create(admin, NewItem(body="vouched", confidence="verified", pinned=True))
    summary = items.summarize(
        admin, [verified.id, historical.id], NewItem(body="summary of both", pinned=True)
    )
    assert summary.confidence == "unverified" and summary.pinned is False
    assert summary.derived_from == [verified.id, historical.id]
    explicit = items.summarize(admin, [verified.id], NewItem(body="s", confidence="verified"))
    assert explicit.confidence == "verified"
    # A narrow patch keeps confidence and review state.
    patched = items.patch(admin, verified.id, 1, category="policy", pinned=False)
    assert (patched.confidence, patched.review_state) == ("verified", "draft")
    with pytest.raises(InvalidInput, match="inputs are not live"):
        items.summarize(admin, [uuid.uuid4()], NewItem(body="from nothing"))


def test_concurrent_updates_exactly_one_wins(database: Database, admin: Principal) -> None:
    items = KnowledgeItems(database)
    item = items.create(admin, NewItem(body="original"))
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def update(text: str) -> None:
        barrier.wait()
        try:
            items.revise(admin, item.id, 1, body=text)
            outcomes.append("won")
        except Conflict:
            outcomes.append("409")

    threads = [threading.Thread(target=update, args=(t,)) for t in ("first", "second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["409", "won"]
    final = items.get(admin, item.id)
    assert final.version == 2 and final.body in {"first", "second"}
    assert _events(database, admin, item.id) == ["created", "revised"]


def test_stale_version_is_409_and_writes_nothing(database: Database, admin: Principal) -> None:
    items = KnowledgeItems(database)
    item = items.create(admin, NewItem(body="v1"))
    items.patch(admin, item.id, 1, tags=("a",))
    with pytest.raises(Conflict) as caught:
        items.revise(admin, item.id, 1, body="lost update")
    assert caught.value.details["current_version"] == 2
    assert _events(database, admin, item.id) == ["created", "patched"]


def test_referenced_source_cannot_be_deleted(
    database: Database, admin: Principal, owner: psycopg.Connection
) -> None:
    sources, documents, items = Sources(database), Documents(database), KnowledgeItems(database)
    source = sources.create(admin, kind="upload", name="handbook.pdf")
    document = documents.create(admin, title="Handbook", source_id=source.id)
    item = items.create(admin, NewItem(body="fact", source_id=source.id, document_id=document.id))
    with pytest.raises(Conflict) as caught:
        sources.delete(admin, source.id, 1)
    referrers = {(r["type"], r["id"]) for r in caught.value.details["referenced_by"]}
    assert referrers == {("document", str(document.id)), ("knowledge_item", str(item.id))}
    with pytest.raises(Conflict):
        documents.delete(admin, document.id, document.version)
    items.delete(admin, item.id, 1)
    documents.delete(admin, document.id, document.version)
    deleted = sources.delete(admin, source.id, 1)
    assert deleted.deleted_at is not None
    with pytest.raises(NotFound):
        sources.get(admin, source.id)
    # Restoring the item before its document and source is refused...
    with pytest.raises(InvalidInput, match="source_id"):
        items.restore(admin, item.id, 2)
    restored_source = sources.restore(admin, source.id, 2)
    assert restored_source.deleted_at is None
    # ...and nothing was ever physically deleted.
    counts = owner.execute(
        "SELECT (SELECT count(*) FROM sources), (SELECT count(*) FROM documents),"
        " (SELECT count(*) FROM knowledge_items)"
    ).fetchone()
    assert counts == (1, 1, 1)
    assert _events(database, admin, source.id) == ["created", "deleted", "restored"]


def test_document_versions_are_content_addressed(database: Database, admin: Principal) -> None:
    documents = Documents(database)
    document = documents.create(admin, title="Report")
    first, created = documents.add_version(
        admin, document.id, content_sha256="a" * 64, byte_size=10, filename="r.pdf"
    )
    assert created and first.version_no == 1
    same, created_again = documents.add_version(
        admin, document.id, content_sha256="a" * 64, byte_size=10
    )
    assert not created_again and same.id == first.id
    second, _ = documents.add_version(admin, document.id, content_sha256="b" * 64, byte_size=11)
    assert second.version_no == 2
    assert [v.version_no for v in documents.versions(admin, document.id)] == [1, 2]
    assert documents.get(admin, document.id).current_version_id == second.id


@pytest.mark.parametrize(
    ("new", "field"),
    [
        (NewItem(body=""), "body"),
        (NewItem(body="x" * 100_001), "body"),
        (NewItem(body="ok", confidence="certain"), "confidence"),
        (NewItem(body="ok", confidence="Verified"), "confidence"),
        (NewItem(body="ok", source_id=uuid.uuid4()), "source_id"),
        (NewItem(body="nul\x00byte"), "body"),
    ],
)
def test_bad_input_names_the_field_and_writes_nothing(
    database: Database, admin: Principal, owner: psycopg.Connection, new: NewItem, field: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        KnowledgeItems(database).create(admin, new)
    assert caught.value.details["field"] == field
    assert owner.execute("SELECT count(*) FROM events").fetchone() == (0,)
    assert owner.execute("SELECT count(*) FROM knowledge_items").fetchone() == (0,)


def test_verify_needs_every_review_field(
    database: Database, admin: Principal, owner: psycopg.Connection
) -> None:
    items = KnowledgeItems(database)
    item = items.create(admin, NewItem(body="claim", submit=True))
    with pytest.raises(InvalidInput) as caught:
        items.review(admin, item.id, 1, ReviewInput("verify", note="ok"))
    assert caught.value.details["fields"] == ["source_link", "captured_at"]
    assert _events(database, admin, item.id) == ["created"]


def test_other_tenants_ids_look_missing(
    database: Database, admin: Principal, other: Principal
) -> None:
    items, sources = KnowledgeItems(database), Sources(database)
    theirs = items.create(other, NewItem(body="CANARY other tenant"))
    their_source = sources.create(other, kind="system", name="CANARY source")
    for call in (
        lambda: items.get(admin, theirs.id),
        lambda: items.revise(admin, theirs.id, 1, body="hijack"),
        lambda: items.delete(admin, theirs.id, 1),
        lambda: sources.delete(admin, their_source.id, 1),
    ):
        with pytest.raises(NotFound) as caught:
            call()
        assert "CANARY" not in caught.value.message
    with pytest.raises(InvalidInput, match="source_id"):
        items.create(admin, NewItem(body="x", source_id=their_source.id))
    assert items.page(admin).items == []
    assert items.get(other, theirs.id).body == "CANARY other tenant"


def test_pages_are_stable_and_complete(database: Database, admin: Principal) -> None:
    items = KnowledgeItems(database)
    created = [items.create(admin, NewItem(body=f"item {i}")).id for i in range(7)]
    seen: list[uuid.UUID] = []
    cursor = None
    while True:
        page = items.page(admin, cursor=cursor, limit=3)
        seen.extend(i.id for i in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == created
    with pytest.raises(InvalidInput):
        items.page(admin, cursor="not-a-cursor")

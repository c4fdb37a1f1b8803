"""Arranging canonical rows for index tests, as the owner (no service shortcuts hidden).

``HashingEmbedder`` is test data, not a model fake: a deterministic
feature-hashing bag of words, so similar texts really are closer and the
HNSW/exact mechanics can be checked without loading a neural model.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import psycopg

Owner = psycopg.Connection[tuple[object, ...]]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def add_document(
    owner: Owner,
    tenant: uuid.UUID,
    title: str,
    chunks: Sequence[str],
    *,
    acl: Sequence[str] = (),
    language: str | None = None,
    metadata: str = "{}",
) -> tuple[uuid.UUID, list[uuid.UUID]]:
    doc = owner.execute(
        "INSERT INTO documents (tenant_id, title, acl_groups, metadata, status)"
        " VALUES (%s, %s, %s, %s::jsonb, 'ready') RETURNING id",
        (tenant, title, list(acl), metadata),
    ).fetchone()
    assert doc is not None
    doc_id = doc[0]
    version = owner.execute(
        "INSERT INTO document_versions (tenant_id, document_id, version_no, content_sha256,"
        " byte_size) VALUES (%s, %s, 1, %s, %s) RETURNING id",
        (tenant, doc_id, _sha(title + "".join(chunks)), 10),
    ).fetchone()
    assert version is not None
    owner.execute(
        "UPDATE documents SET current_version_id = %s WHERE id = %s", (version[0], doc_id)
    )
    ids = []
    for ordinal, text in enumerate(chunks):
        row = owner.execute(
            "INSERT INTO chunks (tenant_id, document_id, document_version_id, ordinal, modality,"
            " text, language, content_sha256) VALUES (%s, %s, %s, %s, 'text', %s, %s, %s)"
            " RETURNING id",
            (tenant, doc_id, version[0], ordinal, text, language, _sha(text)),
        ).fetchone()
        assert row is not None
        ids.append(row[0])
    bump(owner, tenant)
    return doc_id, ids  # type: ignore[return-value]


def add_item(
    owner: Owner,
    tenant: uuid.UUID,
    body: str,
    *,
    review_state: str = "draft",
    confidence: str | None = None,
    category: str | None = None,
) -> uuid.UUID:
    row = owner.execute(
        "INSERT INTO knowledge_items (tenant_id, body, review_state, confidence, category)"
        " VALUES (%s, %s, %s, %s, %s) RETURNING id",
        (tenant, body, review_state, confidence, category),
    ).fetchone()
    assert row is not None
    bump(owner, tenant)
    return row[0]  # type: ignore[return-value]


def delete_document(owner: Owner, tenant: uuid.UUID, doc_id: uuid.UUID) -> None:
    owner.execute("UPDATE documents SET deleted_at = now() WHERE id = %s", (doc_id,))
    bump(owner, tenant)


def bump(owner: Owner, tenant: uuid.UUID) -> None:
    """What every catalog write does (knowledge.history.record)."""
    owner.execute(
        "INSERT INTO catalog_revisions AS c (tenant_id, revision) VALUES (%s, 1)"
        " ON CONFLICT (tenant_id) DO UPDATE SET revision = c.revision + 1",
        (tenant,),
    )


class HashingEmbedder:
    """Feature-hashed bag of words, unit length: deterministic test vectors."""

    def __init__(self, dim: int = 32, model_id: str = "test/hashing") -> None:
        self._dim = dim
        self._model = f"{model_id}-{dim}"

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    def _one(self, text: str) -> npt.NDArray[np.float32]:
        v = np.zeros(self._dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
            v[h % self._dim] += 1.0 if (h >> 32) & 1 else -1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self._dim))

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._one(text)


CORPUS = [
    ("Warranty policy", ["The warranty lasts 24 months from delivery.", "Returns need a receipt."]),
    ("Pump manual", ["Error E-42 means the pump is dry.", "Prime the pump before starting."]),
    ("保修政策", ["产品保修期为二十四个月。", "退货需要提供收据。"]),
    (
        "Política de garantía",
        ["La garantía dura veinticuatro meses.", "Las devoluciones requieren recibo."],
    ),
]

"""The read path: hybrid candidates -> RRF -> bounded preference -> rerank -> small-to-big.

Input is a verified Principal and a query with optional filters; the
eligible corpus (tenant, ACL groups, review state, confidence, categories,
documents, live) is decided by the index from the principal before IDF, ranks
and fusion (seed 000 ADR-016), never by a caller-built filter. Every search
writes a ``retrieval_runs`` receipt that is enough to reconstruct the
selection: both candidate lists with ranks and raw scores, fused B, factor,
effective confidence, weight, policy, reranker and its scores, config,
tokeniser ids, snapshot generation and fingerprint, and timings per stage.
"""

from __future__ import annotations

import time
import unicodedata
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from psycopg.types.json import Jsonb

from grounded.auth.acl import can_see
from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import InvalidInput
from grounded.gateway import Gateway
from grounded.index import EligibilitySpec, IndexReader
from grounded.knowledge.confidence import effective
from grounded.knowledge.history import snapshot as json_snapshot
from grounded.retrieve import fusion, preference

MAX_QUERY_CHARS: Final = 2000
CONFIG_VERSION: Final = "retrieve-1"


@dataclass(frozen=True)
class SearchRequest:
    query: str
    k: int = 8
    candidate_k: int = 50
    rerank: bool = True
    rerank_depth: int = 20
    confidence_weight: float = 0.0
    min_relevance: float = 0.0
    confidence: frozenset[str] | None = None
    categories: frozenset[str] | None = None
    document_ids: frozenset[str] | None = None
    review_states: frozenset[str] | None = None
    unit_kinds: frozenset[str] | None = None
    modes: frozenset[str] = frozenset({"bm25", "dense"})


@dataclass(frozen=True)
class Hit:
    rank: int
    unit_kind: str
    chunk_id: str
    document_id: str | None
    document_title: str | None
    source_name: str | None
    text: str
    parent_id: str | None
    parent_text: str | None
    provenance: dict[str, Any]
    score: float
    fused_score: float
    final_score: float
    rerank_score: float | None
    confidence: str
    created_at: datetime


@dataclass(frozen=True)
class SearchResult:
    run_id: uuid.UUID
    hits: list[Hit]
    receipt: dict[str, Any] = field(repr=False)


class Retriever:
    def __init__(self, database: Database, reader: IndexReader, gateway: Gateway) -> None:
        self.database = database
        self.reader = reader
        self.gateway = gateway

    def search(self, principal: Principal, request: SearchRequest) -> SearchResult:
        query = clean_query(request.query)
        _check(request)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        query_vector, query_model = None, None
        if "dense" in request.modes:
            embedded = self.gateway.embed(principal, [query], "query")
            query_vector, query_model = embedded.vectors[0], embedded.model
        timings["embed_query"] = time.perf_counter() - t0

        t = time.perf_counter()
        candidates = self.reader.candidates(
            principal,
            query,
            _spec(principal, request),
            k=request.candidate_k,
            query_vector=query_vector,
            query_model=query_model,
        )
        timings["candidates"] = time.perf_counter() - t
        lexical = candidates.lexical if "bm25" in request.modes else []
        dense = candidates.dense if "dense" in request.modes else []

        t = time.perf_counter()
        fused = fusion.rrf([[c.unit_id for c in lexical], [c.unit_id for c in dense]])
        units = _load_units(self.database, principal, list(fused))
        ranked = preference.order(
            [
                preference.Ranked(uid, fused[uid], units[uid]["label"], units[uid]["created_at"])
                for uid in fused
                if uid in units
            ],
            request.confidence_weight,
            request.min_relevance,
        )
        timings["fuse"] = time.perf_counter() - t

        t = time.perf_counter()
        rerank_scores: dict[str, float] = {}
        rerank_receipt: dict[str, Any] | None = None
        ordered = ranked
        if request.rerank and ranked:
            head = ranked[: request.rerank_depth]
            result = self.gateway.rerank(
                principal, query, [_embedded_text(units[r.unit_id]) for r in head]
            )
            rerank_receipt = result.receipt.as_dict()
            rerank_scores = {r.unit_id: result.value.scores[i] for i, r in enumerate(head)}
            ordered = [head[i] for i in result.value.order()] + ranked[request.rerank_depth :]
        timings["rerank"] = time.perf_counter() - t

        hits = _small_to_big(ordered, units, rerank_scores, request)
        timings["total"] = time.perf_counter() - t0
        receipt = _receipt(
            principal,
            request,
            query,
            candidates,
            lexical,
            dense,
            fused,
            ranked,
            units,
            rerank_scores,
            rerank_receipt,
            hits,
            timings,
        )
        run_id = self._store(principal, query, request, receipt, candidates.snapshot.id)
        return SearchResult(run_id, hits, receipt)

    def _store(
        self,
        principal: Principal,
        query: str,
        request: SearchRequest,
        receipt: dict[str, Any],
        snapshot_id: str,
    ) -> uuid.UUID:
        with self.database.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                "INSERT INTO retrieval_runs (tenant_id, principal, query, request, receipt,"
                " snapshot_id) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    principal.tenant_id,
                    Jsonb(principal.describe()),
                    query,
                    json_snapshot(_request_json(request)),
                    json_snapshot(receipt),
                    uuid.UUID(snapshot_id),
                ),
            ).fetchone()
        assert row is not None
        return uuid.UUID(str(row["id"]))


def clean_query(query: str) -> str:
    """Normalise; refuse empty, over-long, or control-character-only queries."""
    text = unicodedata.normalize("NFKC", query)
    text = "".join(ch if unicodedata.category(ch)[0] != "C" or ch in "\t\n" else " " for ch in text)
    text = " ".join(text.split())
    if not text:
        raise InvalidInput("the query is empty", details={"field": "query"})
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(
            f"the query is {len(text)} characters; the limit is {MAX_QUERY_CHARS}",
            details={"field": "query", "max_chars": MAX_QUERY_CHARS},
        )
    return text


def _check(request: SearchRequest) -> None:
    preference.check_weight(request.confidence_weight)
    if not 1 <= request.k <= 100:
        raise InvalidInput("k must be between 1 and 100", details={"field": "k"})
    if not 1 <= request.candidate_k <= 1000:
        raise InvalidInput(
            "candidate_k must be between 1 and 1000", details={"field": "candidate_k"}
        )
    if not request.modes or not request.modes <= {"bm25", "dense"}:
        raise InvalidInput("modes must be bm25 and/or dense", details={"field": "modes"})
    if request.min_relevance < 0:
        raise InvalidInput("min_relevance must be >= 0", details={"field": "min_relevance"})


def _spec(principal: Principal, request: SearchRequest) -> EligibilitySpec:
    review_states = request.review_states
    if not principal.is_admin:
        if review_states is not None and review_states != {"verified"}:
            raise InvalidInput(
                "only admins may search knowledge that is not verified",
                details={"field": "review_states"},
            )
        review_states = frozenset({"verified"})  # public retrieval: verified knowledge only
    return EligibilitySpec(
        unit_kinds=request.unit_kinds,
        review_states=review_states,
        confidence=request.confidence,
        categories=request.categories,
        document_ids=request.document_ids,
    )


_CHUNK_SQL = """
SELECT c.id::text AS id, 'chunk' AS kind, c.text, c.context_line, c.provenance, c.created_at,
       c.document_id::text AS document_id, d.title AS document_title, d.acl_groups,
       coalesce(v.filename, d.external_id, s.name) AS source_name,
       d.metadata->>'confidence' AS stored_label,
       p.id::text AS parent_id, p.text AS parent_text
FROM chunks c JOIN documents d ON d.id = c.document_id
LEFT JOIN document_versions v ON v.id = c.document_version_id
LEFT JOIN sources s ON s.id = d.source_id
LEFT JOIN chunks p ON p.id = c.parent_chunk_id
WHERE c.id = ANY(%s) AND d.deleted_at IS NULL
"""
_ITEM_SQL = """
SELECT i.id::text AS id, 'item' AS kind, i.body AS text, NULL AS context_line,
       '{}'::jsonb AS provenance,
       i.created_at, i.document_id::text AS document_id, d.title AS document_title,
       coalesce(d.acl_groups, '{}') AS acl_groups, s.name AS source_name,
       i.confidence AS stored_label, NULL AS parent_id, NULL AS parent_text
FROM knowledge_items i LEFT JOIN documents d ON d.id = i.document_id
LEFT JOIN sources s ON s.id = i.source_id
WHERE i.id = ANY(%s) AND i.deleted_at IS NULL
"""


def _load_units(
    database: Database, principal: Principal, ids: list[str]
) -> dict[str, dict[str, Any]]:
    """Text, provenance, parent and label of each candidate, re-checked for ACL."""
    if not ids:
        return {}
    keys = [uuid.UUID(i) for i in ids]
    with database.transaction(principal.tenant_id) as conn:
        rows = [
            *conn.execute(_CHUNK_SQL, (keys,)).fetchall(),
            *conn.execute(_ITEM_SQL, (keys,)).fetchall(),
        ]
    units: dict[str, dict[str, Any]] = {}
    for row in rows:
        if not can_see(principal, row["acl_groups"]):
            continue
        unit = dict(row)
        unit["label"] = effective(row["stored_label"])
        units[row["id"]] = unit
    return units


def _embedded_text(unit: dict[str, Any]) -> str:
    """The passage exactly as the write path embedded it, so the reranker's embeddings
    come from the gateway cache instead of the model."""
    context = unit.get("context_line")
    return f"{context}\n{unit['text']}" if context else str(unit["text"])


def _small_to_big(
    ordered: list[preference.Ranked],
    units: dict[str, dict[str, Any]],
    rerank_scores: dict[str, float],
    request: SearchRequest,
) -> list[Hit]:
    """Top k by the final order, one hit per parent section (the best child cites it)."""
    hits: list[Hit] = []
    parents_seen: set[str] = set()
    for ranked in ordered:
        unit = units[ranked.unit_id]
        parent = unit["parent_id"]
        if parent is not None and parent in parents_seen:
            continue
        if parent is not None:
            parents_seen.add(parent)
        final = ranked.final(request.confidence_weight)
        hits.append(
            Hit(
                rank=len(hits) + 1,
                unit_kind=unit["kind"],
                chunk_id=ranked.unit_id,
                document_id=unit["document_id"],
                document_title=unit["document_title"],
                source_name=unit["source_name"],
                text=unit["text"],
                parent_id=parent,
                parent_text=unit["parent_text"],
                provenance=unit["provenance"] or {},
                score=rerank_scores.get(ranked.unit_id, final),
                fused_score=ranked.fused,
                final_score=final,
                rerank_score=rerank_scores.get(ranked.unit_id),
                confidence=ranked.label,
                created_at=ranked.created_at,
            )
        )
        if len(hits) == request.k:
            break
    return hits


def _request_json(request: SearchRequest) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in request.__dataclass_fields__:
        value = getattr(request, name)
        out[name] = sorted(value) if isinstance(value, frozenset) else value
    return out


def _receipt(
    principal: Principal,
    request: SearchRequest,
    query: str,
    candidates: Any,
    lexical: list[Any],
    dense: list[Any],
    fused: dict[str, float],
    ranked: list[preference.Ranked],
    units: dict[str, dict[str, Any]],
    rerank_scores: dict[str, float],
    rerank_receipt: dict[str, Any] | None,
    hits: list[Hit],
    timings: dict[str, float],
) -> dict[str, Any]:
    weight = request.confidence_weight
    return {
        "config_version": CONFIG_VERSION,
        "query": query,
        "request": _request_json(request),
        "principal": principal.describe(),
        "snapshot": {
            "id": candidates.snapshot.id,
            "generation": candidates.snapshot.generation,
            "corpus_fingerprint": candidates.snapshot.corpus_fingerprint,
            "catalog_revision": candidates.snapshot.catalog_revision,
            "stale": candidates.snapshot.stale,
            "mode": candidates.snapshot.mode,
            "tokenizers": candidates.snapshot.tokenizers,
            "bm25": candidates.snapshot.bm25,
            "embedding_model": candidates.snapshot.embedding_model,
        },
        "eligible": candidates.eligible,
        "query_terms": candidates.query_terms,
        "bm25": [{"rank": c.rank, "id": c.unit_id, "score": c.score} for c in lexical],
        "dense": [{"rank": c.rank, "id": c.unit_id, "score": c.score} for c in dense],
        "dense_complete": candidates.dense_complete,
        "dense_method": candidates.dense_method,
        "dense_reason": candidates.dense_reason,
        "fusion": {"method": "rrf", "k": fusion.K, "weights": [1, 1]},
        "preference": {
            "policy": preference.POLICY,
            "weight": weight,
            "min_relevance": request.min_relevance,
        },
        "ranked": [
            {
                "id": r.unit_id,
                "fused": r.fused,
                "label": r.label,
                "factor": preference.factor(r.label, weight),
                "final": r.final(weight),
                "created_at": r.created_at.isoformat(),
            }
            for r in ranked
        ],
        "dropped_after_fusion": sorted(set(fused) - {r.unit_id for r in ranked}),
        "rerank": (
            {"receipt": rerank_receipt, "depth": request.rerank_depth, "scores": rerank_scores}
            if rerank_receipt
            else None
        ),
        "results": [{"rank": h.rank, "id": h.chunk_id, "parent_id": h.parent_id} for h in hits],
        "timings_ms": {k: round(v * 1000, 2) for k, v in timings.items()},
    }

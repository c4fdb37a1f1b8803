"""Search over REST: hybrid retrieval for any signed-in principal (POST /v1/search)."""

from __future__ import annotations

import dataclasses
import threading
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from grounded.api.deps import AskDep, DatabaseDep, PrincipalDep
from grounded.errors import NotFound
from grounded.index import IndexReader
from grounded.retrieve import Retriever, SearchRequest

router = APIRouter(prefix="/v1", tags=["search"])
_lock = threading.Lock()


class SearchBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        max_length=10_000,
        description="What to look for (capped at 2,000 "
        "characters after normalisation; longer is refused, not cut).",
    )
    k: int = Field(default=8, ge=1, le=100, description="Results to return.")
    candidate_k: int = Field(default=50, ge=1, le=1000, description="Candidates per signal.")
    rerank: bool = Field(
        default=True,
        description="Rerank the top fused candidates with the gateway's rerank "
        "task (a cross-encoder if configured, else the labelled e5 + lexical fallback).",
    )
    confidence_weight: float = Field(
        default=0.0,
        description="w in [0, 0.5]: final = B * (1 + w*c), c = +1 verified, "
        "0 inferred, -1 unverified (policy confidence-v1). 0 = plain RRF order.",
    )
    min_relevance: float = Field(default=0.0, ge=0, description="Cut on the final score.")
    confidence: list[Literal["verified", "inferred", "unverified"]] | None = None
    categories: list[str] | None = None
    document_ids: list[UUID] | None = None
    review_states: list[Literal["draft", "pending", "verified", "rejected"]] | None = Field(
        default=None, description="Admins only; others always search verified knowledge."
    )
    modes: list[Literal["bm25", "dense"]] = Field(default=["bm25", "dense"])
    explain: bool = Field(default=False, description="Return the full receipt inline.")
    include_parent: bool = Field(default=True, description="Return each hit's parent section.")


class HitPublic(BaseModel):
    rank: int
    unit_kind: str
    chunk_id: UUID
    document_id: UUID | None
    document_title: str | None
    source_name: str | None
    text: str
    parent_text: str | None
    provenance: dict[str, Any]
    score: float
    fused_score: float
    final_score: float
    rerank_score: float | None
    confidence: str
    created_at: datetime


class SearchPublic(BaseModel):
    retrieval_run_id: UUID
    results: list[HitPublic]
    receipt: dict[str, Any] | None = None


def retriever_for(request: Request, database: Any) -> Retriever:
    """One gateway and index reader per app, created on first use."""
    state = request.app.state
    with _lock:
        if getattr(state, "retriever", None) is None:
            from grounded.gateway import open_gateway

            state.retriever = Retriever(
                database,
                IndexReader(database, state.settings.index),
                open_gateway(state.settings, database),
            )
    retriever: Retriever = state.retriever
    return retriever


@router.post("/search", summary="Hybrid search with receipts")
def search(
    body: SearchBody, request: Request, principal: AskDep, database: DatabaseDep
) -> SearchPublic:
    """BM25 and dense candidates over what you may see, fused by RRF (k=60), optionally
    preferring declared confidence within a bounded weight, reranked, one hit per section."""
    found = retriever_for(request, database).search(
        principal,
        SearchRequest(
            query=body.query,
            k=body.k,
            candidate_k=body.candidate_k,
            rerank=body.rerank,
            confidence_weight=body.confidence_weight,
            min_relevance=body.min_relevance,
            confidence=_set(body.confidence),
            categories=_set(body.categories),
            document_ids=_set([str(d) for d in body.document_ids] if body.document_ids else None),
            review_states=_set(body.review_states),
            modes=frozenset(body.modes),
        ),
    )
    hits = []
    for hit in found.hits:
        data = dataclasses.asdict(hit)
        if not body.include_parent:
            data["parent_text"] = None
        hits.append(HitPublic.model_validate(data))
    return SearchPublic(
        retrieval_run_id=found.run_id, results=hits, receipt=found.receipt if body.explain else None
    )


@router.get("/search/runs/{run_id}", summary="A stored retrieval receipt")
def get_run(run_id: UUID, principal: PrincipalDep, database: DatabaseDep) -> dict[str, Any]:
    """The receipt of one of your searches (admins: any in the tenant): enough to
    reconstruct the selection."""
    with database.transaction(principal.tenant_id) as conn:
        row = conn.execute(
            "SELECT id, principal, query, request, receipt, created_at FROM retrieval_runs"
            " WHERE id = %s",
            (run_id,),
        ).fetchone()
    if row is None or not (principal.is_admin or row["principal"].get("id") == str(principal.id)):
        raise NotFound(f"retrieval run {run_id} was not found", details={"run_id": str(run_id)})
    return {
        "id": str(row["id"]),
        "query": row["query"],
        "request": row["request"],
        "receipt": row["receipt"],
        "created_at": row["created_at"].isoformat(),
    }


def _set(values: list[Any] | None) -> frozenset[Any] | None:
    return frozenset(values) if values is not None else None

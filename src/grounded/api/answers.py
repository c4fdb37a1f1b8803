"""Grounded answers over REST: ask, fetch a stored answer, and the abstention metric."""

from __future__ import annotations

import dataclasses
import threading
from datetime import datetime
from typing import Any
from uuid import UUID

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from grounded.answer import Answer, Answerer, AnswerRequest
from grounded.api.deps import AskDep, DatabaseDep, PrincipalDep
from grounded.api.search import retriever_for

router = APIRouter(prefix="/v1", tags=["answers"])
_lock = threading.Lock()


class AnswerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        max_length=10_000,
        description="The question (capped at 2,000 characters after normalisation; longer is "
        "refused, not cut).",
    )
    retrieval_run_id: UUID | None = Field(
        default=None,
        description="Answer from the results of an earlier POST /v1/search of yours instead "
        "of searching again. Only server-side retrieval records enter a prompt.",
    )
    k: int | None = Field(
        default=None, ge=1, le=20, description="Sections retrieved as evidence (default 6)."
    )
    confidence_weight: float | None = Field(
        default=None, ge=0, le=0.5, description="Bounded preference for verified evidence."
    )
    retry: bool | None = Field(
        default=None, description="Retry once with a rewritten question before abstaining."
    )
    include_attempts: bool = Field(
        default=False, description="Return every attempt's receipt inline (contexts, verdicts)."
    )


class CitationPublic(BaseModel):
    number: int
    chunk_id: UUID
    document_id: UUID | None
    document_title: str | None
    source_name: str | None
    provenance: dict[str, Any]
    quote: str | None
    quote_start: int | None = Field(description="Offset of the quote in the cited section.")
    quote_end: int | None
    confidence: str


class AnswerPublic(BaseModel):
    id: UUID
    question: str
    text: str
    abstained: bool
    abstain_reason: str | None
    mode: str = Field(description="'generative' (an LLM) or 'extractive' (no LLM configured).")
    citations: list[CitationPublic]
    claims: list[dict[str, Any]] = Field(description="Per-claim support and verifier output.")
    support_rate: float | None
    citation_precision: float | None
    retrieval_run_ids: list[UUID]
    context_id: UUID | None
    prompt_version: str
    timings_ms: dict[str, float]
    created_at: datetime | None
    attempts: list[dict[str, Any]] | None = None


def answerer_for(request: Request, database: Any) -> Answerer:
    """One answerer per app, sharing the search path's gateway and index reader."""
    retriever = retriever_for(request, database)
    state = request.app.state
    with _lock:
        if getattr(state, "answerer", None) is None:
            state.answerer = Answerer(database, retriever, retriever.gateway, state.settings.answer)
    answerer: Answerer = state.answerer
    return answerer


def public(answer: Answer, include_attempts: bool = False) -> AnswerPublic:
    data = dataclasses.asdict(answer)
    if not include_attempts:
        data["attempts"] = None
    return AnswerPublic.model_validate(data)


@router.post("/answers", summary="Answer a question with verified citations, or abstain")
def ask(
    body: AnswerBody, request: Request, principal: AskDep, database: DatabaseDep
) -> AnswerPublic:
    """Retrieves what you may see, builds a context from server-side records only,
    generates (an LLM, or an extractive answer when none is configured), checks every
    claim against the section it cites, retries once, and otherwise abstains with the
    reason. The answer and its receipts are stored (GET /v1/answers/{id})."""
    answer = answerer_for(request, database).answer(
        principal,
        AnswerRequest(
            question=body.question,
            retrieval_run_id=body.retrieval_run_id,
            k=body.k,
            confidence_weight=body.confidence_weight,
            retry=body.retry,
        ),
    )
    return public(answer, body.include_attempts)


@router.get("/answers/stats", summary="Answers and abstention rate")
def stats(
    request: Request,
    principal: PrincipalDep,
    database: DatabaseDep,
    since: datetime | None = Query(default=None, description="Count answers from this time."),
) -> dict[str, Any]:
    """Admins see the tenant's figures; other users their own."""
    return answerer_for(request, database).stats(principal, since)


@router.get("/answers/{answer_id}", summary="A stored answer with its receipts")
def get_answer(
    answer_id: UUID, request: Request, principal: PrincipalDep, database: DatabaseDep
) -> AnswerPublic:
    return public(answerer_for(request, database).get(principal, answer_id), True)

"""Grounded answers: retrieve -> context -> generate -> verify -> answer or abstain.

The promise of the product (seed 001 ADR-007, seed 002 ADR-012): an answer
is released only when every claim cites a section of the prepared context
that supports it. A failed attempt is retried once with a rewritten question
(a new server-side retrieval run); a second failure is an abstention that
says what was missing. Every attempt (retrieval run, context, generation
receipt, per-claim verdicts) is stored with the answer, so it can be fetched,
audited and counted later; the abstention rate is a tracked metric.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from psycopg.types.json import Jsonb

from grounded.answer import claims as claim_split
from grounded.answer import context as contexts
from grounded.answer import gate, prompting
from grounded.answer.settings import AnswerSettings
from grounded.answer.verification import ClaimCheck, check_claims
from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import BudgetExceeded, InvalidInput, ModelError, NotFound
from grounded.gateway import Gateway
from grounded.gateway.types import GenerateRequest
from grounded.logging import get_logger
from grounded.retrieve import Retriever, SearchRequest
from grounded.retrieve.service import clean_query

_CJK: Final = re.compile(r"[\u3400-\u9fff]")
log = get_logger("grounded.answer")


@dataclass(frozen=True)
class AnswerRequest:
    question: str
    retrieval_run_id: uuid.UUID | None = None
    k: int | None = None
    confidence_weight: float | None = None
    retry: bool | None = None


@dataclass(frozen=True)
class Citation:
    number: int
    chunk_id: str
    document_id: str | None
    document_title: str | None
    source_name: str | None
    provenance: dict[str, Any]
    quote: str | None
    quote_start: int | None
    quote_end: int | None
    confidence: str


@dataclass(frozen=True)
class Answer:
    id: uuid.UUID
    question: str
    text: str
    abstained: bool
    abstain_reason: str | None
    mode: str
    citations: list[Citation]
    claims: list[dict[str, Any]]
    support_rate: float | None
    citation_precision: float | None
    retrieval_run_ids: list[uuid.UUID]
    context_id: uuid.UUID | None
    prompt_version: str
    attempts: list[dict[str, Any]] = field(repr=False)
    timings_ms: dict[str, float] = field(default_factory=dict)
    created_at: datetime | None = None


@dataclass
class _Attempt:
    run_id: uuid.UUID
    context: contexts.Context | None = None
    text: str = ""
    extractive: bool = False
    checks: list[ClaimCheck] = field(default_factory=list)
    failure: str | None = None
    fatal: bool = False  # a model or budget failure: retrying would meet it again
    record: dict[str, Any] = field(default_factory=dict)


class Answerer:
    def __init__(
        self,
        database: Database,
        retriever: Retriever,
        gateway: Gateway,
        settings: AnswerSettings | None = None,
    ) -> None:
        self.database = database
        self.retriever = retriever
        self.gateway = gateway
        self.settings = settings or AnswerSettings()

    def answer(self, principal: Principal, request: AnswerRequest) -> Answer:
        question = clean_query(request.question)
        k = request.k or self.settings.evidence_k
        if not 1 <= k <= 20:
            raise InvalidInput("k must be between 1 and 20", details={"field": "k"})
        weight = (
            self.settings.confidence_weight
            if request.confidence_weight is None
            else request.confidence_weight
        )
        retry = self.settings.retry if request.retry is None else request.retry
        timings: dict[str, float] = {}
        started = time.perf_counter()
        run_id = request.retrieval_run_id or self._search(principal, question, k, weight, timings)
        attempts = [self._attempt(principal, question, run_id, timings)]
        if attempts[0].failure is not None and retry and not attempts[0].fatal:
            rewritten = self._rewrite(principal, question, attempts[0])
            if rewritten is not None:
                attempts[0].record["rewritten_query"] = rewritten
                run_id = self._search(principal, rewritten, k, weight, timings)
                attempts.append(self._attempt(principal, question, run_id, timings))
        timings["total"] = time.perf_counter() - started
        return self._store(principal, question, attempts, timings)

    def get(self, principal: Principal, answer_id: uuid.UUID) -> Answer:
        """A stored answer; another tenant's, or (for non-admins) another user's, is not found."""
        with self.database.transaction(principal.tenant_id) as conn:
            row = conn.execute("SELECT * FROM answers WHERE id = %s", (answer_id,)).fetchone()
        if row is None or not (
            principal.is_admin or row["principal"].get("id") == str(principal.id)
        ):
            raise NotFound(
                f"answer {answer_id} was not found", details={"answer_id": str(answer_id)}
            )
        return _from_row(row)

    def stats(self, principal: Principal, since: datetime | None = None) -> dict[str, Any]:
        """Answers and abstentions (admins: the tenant's; others: their own)."""
        clauses: list[str] = ["true"]
        params: list[Any] = []
        if not principal.is_admin:
            clauses.append("principal->>'id' = %s")
            params.append(str(principal.id))
        if since is not None:
            clauses.append("created_at >= %s")
            params.append(since)
        with self.database.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                "SELECT count(*) AS total,"
                " count(*) FILTER (WHERE status = 'abstained') AS abstained,"
                " count(*) FILTER (WHERE mode = 'extractive') AS extractive"
                f" FROM answers WHERE {' AND '.join(clauses)}",
                params,
            ).fetchone()
        assert row is not None
        total = int(row["total"])
        return {
            "answers": total,
            "abstained": int(row["abstained"]),
            "abstention_rate": round(row["abstained"] / total, 4) if total else None,
            "extractive": int(row["extractive"]),
            "since": since.isoformat() if since else None,
        }

    # --- steps ---------------------------------------------------------------

    def _search(
        self,
        principal: Principal,
        query: str,
        k: int,
        weight: float,
        timings: dict[str, float],
    ) -> uuid.UUID:
        t = time.perf_counter()
        found = self.retriever.search(
            principal, SearchRequest(query=query, k=k, confidence_weight=weight)
        )
        timings["retrieve"] = timings.get("retrieve", 0.0) + time.perf_counter() - t
        return found.run_id

    def _attempt(
        self, principal: Principal, question: str, run_id: uuid.UUID, timings: dict[str, float]
    ) -> _Attempt:
        attempt = _Attempt(run_id)
        t = time.perf_counter()
        ctx = contexts.prepare(
            self.database, principal, run_id, question, self.settings.context_budget_chars
        )
        _add(timings, "context", t)
        attempt.context = ctx
        coverage = gate.coverage(question, ctx.evidence)
        attempt.record = {
            "retrieval_run_id": str(run_id),
            "context_id": str(ctx.id),
            "evidence": len(ctx.evidence),
            "excluded": list(ctx.excluded),
            "coverage": coverage.as_json(),
        }
        if not ctx.evidence:
            attempt.failure = "no eligible evidence was found for the question"
            return attempt
        t = time.perf_counter()
        try:
            generated = self.gateway.generate(
                principal,
                GenerateRequest(
                    messages=prompting.answer_messages(question, ctx.evidence),
                    evidence=tuple(e.without_instructions() for e in ctx.evidence),
                    max_output_tokens=self.settings.max_output_tokens,
                    question=question,
                ),
            )
        except (ModelError, BudgetExceeded) as exc:
            return _model_failed(attempt, "generate", exc)
        finally:
            _add(timings, "generate", t)
        attempt.text = generated.value.text.strip()
        attempt.extractive = generated.value.extractive
        attempt.record["generation"] = {
            "text": attempt.text,
            "extractive": attempt.extractive,
            "finish_reason": generated.value.finish_reason,
            "receipt": generated.receipt.as_dict(),
        }
        if attempt.extractive:
            # Extractive sentences always match their source; what needs checking is
            # whether the sources are about the question at all.
            refusal = gate.refusal(coverage, self.settings.min_coverage)
            if refusal is not None:
                attempt.failure = refusal
                return attempt
        own = claim_split.abstention(attempt.text)
        if own is not None:
            attempt.failure = own
            return attempt
        parsed = claim_split.split(attempt.text)
        if not parsed:
            attempt.failure = "the answer made no checkable claim"
            return attempt
        t = time.perf_counter()
        try:
            attempt.checks = check_claims(self.gateway, principal, parsed, ctx)
        except (ModelError, BudgetExceeded) as exc:
            return _model_failed(attempt, "verify", exc)
        finally:
            _add(timings, "verify", t)
        attempt.record["claims"] = [c.as_json() for c in attempt.checks]
        failed = [c for c in attempt.checks if not c.supported]
        if failed:
            attempt.failure = "; ".join(
                f"claim {c.claim.index} is not supported ({c.problem})" for c in failed[:3]
            )
        return attempt

    def _rewrite(self, principal: Principal, question: str, failed: _Attempt) -> str | None:
        """A different query for the second retrieval: the model's, or keywords offline."""
        rewritten = prompting.keyword_rewrite(question)
        if not failed.extractive and failed.text:
            result = self.gateway.generate(
                principal,
                GenerateRequest(
                    messages=prompting.rewrite_messages(question), max_output_tokens=64
                ),
            )
            line = result.value.text.strip().splitlines()[0:1]
            if line and not result.value.extractive and line[0].strip():
                rewritten = line[0].strip()[:500]
        same = " ".join(rewritten.split()).lower() == " ".join(question.split()).lower()
        return None if same else rewritten

    def _store(
        self,
        principal: Principal,
        question: str,
        attempts: list[_Attempt],
        timings: dict[str, float],
    ) -> Answer:
        last = attempts[-1]
        answered = last.failure is None
        abstain_reason = None if answered else last.failure
        text = last.text if answered else _abstention_text(question, str(abstain_reason))
        checks = last.checks if answered else []
        citations = _citations(last, checks) if answered else []
        claims_json = [c.as_json() for c in checks]
        mode = "extractive" if any(a.extractive for a in attempts) else "generative"
        run_ids = list(dict.fromkeys(a.run_id for a in attempts))
        context_id = last.context.id if last.context else None
        timings_ms = {k: round(v * 1000, 2) for k, v in timings.items()}
        records = [dict(a.record, failure=a.failure) for a in attempts]
        with self.database.transaction(principal.tenant_id) as conn:
            row = conn.execute(
                "INSERT INTO answers (tenant_id, principal, question, status, mode, text,"
                " abstain_reason, citations, claims, attempts, context_id, retrieval_run_ids,"
                " prompt_version, timings) VALUES"
                " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
                (
                    principal.tenant_id,
                    Jsonb(principal.describe()),
                    question,
                    "answered" if answered else "abstained",
                    mode,
                    text,
                    abstain_reason,
                    Jsonb([c.__dict__ for c in citations]),
                    Jsonb(claims_json),
                    Jsonb(records),
                    context_id,
                    run_ids,
                    prompting.ANSWER_PROMPT,
                    Jsonb(timings_ms),
                ),
            ).fetchone()
        assert row is not None
        log.info(
            "answer_abstained" if not answered else "answer_released",
            answer_id=str(row["id"]),
            tenant_id=str(principal.tenant_id),
            mode=mode,
            attempts=len(attempts),
            claims=len(claims_json),
            total_ms=timings_ms.get("total"),
        )
        return _from_row(row)


def _model_failed(attempt: _Attempt, task: str, exc: ModelError | BudgetExceeded) -> _Attempt:
    """Never a fabricated answer: a model that is down or over budget is an abstention."""
    attempt.failure = f"the {task} model could not be used ({exc.code}: {exc.message})"
    attempt.fatal = True
    attempt.record["error"] = {"task": task, "code": exc.code, "message": exc.message}
    return attempt


def _add(timings: dict[str, float], name: str, started: float) -> None:
    timings[name] = timings.get(name, 0.0) + time.perf_counter() - started


def _citations(attempt: _Attempt, checks: list[ClaimCheck]) -> list[Citation]:
    """One citation per evidence number used, quoting the span that supported its claim."""
    assert attempt.context is not None
    out: dict[int, Citation] = {}
    for check in checks:
        for cited in check.citations:
            evidence = attempt.context.by_number(cited.number)
            if evidence is None or not cited.supported or cited.number in out:
                continue
            quote = cited.quote
            out[cited.number] = Citation(
                number=cited.number,
                chunk_id=evidence.chunk_id,
                document_id=evidence.document_id,
                document_title=evidence.document_title,
                source_name=evidence.source_name,
                provenance=evidence.provenance,
                quote=quote.text if quote else None,
                quote_start=quote.start if quote else None,
                quote_end=quote.end if quote else None,
                confidence=evidence.confidence,
            )
    return [out[n] for n in sorted(out)]


def _abstention_text(question: str, reason: str) -> str:
    if _CJK.search(question):
        return f"无法根据您可访问的文档回答这个问题：{reason}。"
    return f"I cannot answer this from the documents available to you: {reason}."


def _from_row(row: dict[str, Any]) -> Answer:
    claims = list(row["claims"])
    cited = [c for claim in claims for c in claim["citations"]]
    return Answer(
        id=row["id"],
        question=row["question"],
        text=row["text"],
        abstained=row["status"] == "abstained",
        abstain_reason=row["abstain_reason"],
        mode=row["mode"],
        citations=[Citation(**c) for c in row["citations"]],
        claims=claims,
        support_rate=(sum(c["supported"] for c in claims) / len(claims)) if claims else None,
        citation_precision=(sum(c["supported"] for c in cited) / len(cited)) if cited else None,
        retrieval_run_ids=list(row["retrieval_run_ids"]),
        context_id=row["context_id"],
        prompt_version=row["prompt_version"],
        attempts=list(row["attempts"]),
        timings_ms=dict(row["timings"]),
        created_at=row["created_at"],
    )

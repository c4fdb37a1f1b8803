"""Claim-level verification before release (seed 001 ADR-007, seed 002 ADR-012).

Every claim must cite, every cited number must exist in the context, and the
cited section must support the claim according to the gateway's ``verify``
task (an LLM judge when configured, else its labelled heuristic). Sentences
that read as instructions to an assistant are masked out of the evidence
first: a planted instruction is data, so a claim it alone "supports" fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grounded.answer.claims import Claim
from grounded.answer.context import Context, Evidence
from grounded.answer.text import Span, sentence_spans, terms
from grounded.auth.principal import Principal
from grounded.gateway import Gateway


@dataclass(frozen=True)
class CitationCheck:
    number: int
    chunk_id: str | None
    supported: bool
    score: float
    reasons: tuple[str, ...]
    quote: Span | None


@dataclass(frozen=True)
class ClaimCheck:
    claim: Claim
    supported: bool
    citations: tuple[CitationCheck, ...]
    problem: str | None = None
    verifier: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.claim.index,
            "text": self.claim.text,
            "supported": self.supported,
            "problem": self.problem,
            "citations": [
                {
                    "number": c.number,
                    "chunk_id": c.chunk_id,
                    "supported": c.supported,
                    "score": c.score,
                    "reasons": list(c.reasons),
                    "quote": None
                    if c.quote is None
                    else {"start": c.quote.start, "end": c.quote.end, "text": c.quote.text},
                }
                for c in self.citations
            ],
            "verifier": self.verifier,
        }


def check_claims(
    gateway: Gateway, principal: Principal, claims: list[Claim], context: Context
) -> list[ClaimCheck]:
    return [_check(gateway, principal, claim, context) for claim in claims]


def _check(gateway: Gateway, principal: Principal, claim: Claim, context: Context) -> ClaimCheck:
    if not claim.citations:
        return ClaimCheck(claim, False, (), "the claim cites no evidence")
    checks: list[CitationCheck] = []
    verifier: dict[str, Any] = {}
    for number in claim.citations:
        evidence = context.by_number(number)
        if evidence is None:
            checks.append(
                CitationCheck(
                    number,
                    None,
                    False,
                    0.0,
                    (f"cites [{number}], but the context has [1]-[{len(context.evidence)}]",),
                    None,
                )
            )
            continue
        text = evidence.without_instructions()
        if not text.strip():
            checks.append(
                CitationCheck(
                    number,
                    evidence.chunk_id,
                    False,
                    0.0,
                    ("the cited section holds only instructions, which are not evidence",),
                    None,
                )
            )
            continue
        result = gateway.verify(principal, claim.text, text)
        verifier = {
            "provider": result.receipt.provider,
            "model": result.receipt.model,
            "fallback": result.receipt.fallback,
        }
        checks.append(
            CitationCheck(
                number,
                evidence.chunk_id,
                result.value.supported,
                result.value.score,
                result.value.reasons,
                best_quote(claim.text, evidence),
            )
        )
    supported = any(c.supported for c in checks)
    problem = None
    if not supported:
        problem = "; ".join(r for c in checks for r in c.reasons[:1]) or "not supported"
    return ClaimCheck(claim, supported, tuple(checks), problem, verifier)


def best_quote(claim: str, evidence: Evidence) -> Span | None:
    """The evidence sentence sharing most of the claim's terms (not an instruction)."""
    wanted = terms(claim)
    blocked = set(evidence.instructions)
    best: tuple[float, int, Span] | None = None
    for index, span in enumerate(sentence_spans(evidence.text)):
        if (span.start, span.end) in blocked:
            continue
        share = len(wanted & terms(span.text)) / len(wanted) if wanted else 0.0
        if best is None or share > best[0]:
            best = (share, -index, span)
    return best[2] if best is not None and best[0] > 0 else None

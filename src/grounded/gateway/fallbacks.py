"""Deterministic stand-ins for tasks no offline model covers (MODELS.md).

No cross-encoder, NLI model or competent LLM ships in a package, so with no
provider configured these keep the platform honest rather than absent. Every
result they produce is labelled with a ``local/fallback-...`` model id and
``fallback=True`` in its receipt, so nobody mistakes them for a model.

Each function is pure given the embedder passed in (same input, same output).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from grounded.gateway.types import (
    DescribeRequest,
    EnrichRequest,
    GenerateRequest,
    Generation,
    Ranking,
    RerankRequest,
    SqlDraft,
    SqlRequest,
    Verdict,
    VerifyRequest,
)

RERANK_MODEL = "local/fallback-rerank-e5-lexical-v1"
VERIFY_MODEL = "local/fallback-verify-heuristic-v2"
GENERATE_MODEL = "local/fallback-extractive-v2"
ENRICH_MODEL = "local/fallback-context-line-v1"
DESCRIBE_MODEL = "local/fallback-describe-ocr-v1"
SQL_MODEL = "local/fallback-sql-patterns-v1"

Embed = Callable[[Sequence[str], bool], npt.NDArray[np.float32]]
"""(texts, is_query) -> unit vectors."""

_WORD = re.compile(r"[0-9]+(?:[.,][0-9]+)*|[^\W\d_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|cannot|can't|doesn't|don't|isn't|aren't|wasn't|without|"
    r"nunca|ningún|ninguna|sin)\b|不|没|無|无|非|未",
    re.IGNORECASE,
)
_SHORTLIST = 3  # evidence sentences embedded per verified claim, chosen by term overlap
_GENERATE_SHORTLIST = 8  # sentences embedded for an extractive answer, across all sections
_MARGIN = 0.05  # how close to the best sentence another must be to join the answer
_RANK_PENALTY = 0.01  # per section of retrieval rank
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")  # "3.5" stays whole
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "by",
        "with",
        "as",
        "at",
        "from",
        "that",
        "this",
        "it",
        "its",
        "what",
        "which",
        "who",
        "how",
        "when",
        "where",
        "why",
        "do",
        "does",
        "did",
        "de",
        "la",
        "el",
        "los",
        "las",
        "en",
        "y",
        "o",
        "que",
        "un",
        "una",
        "por",
        "con",
        "para",
        "del",
        "se",
        "es",
    ]
)


def terms(text: str) -> set[str]:
    """Lower-case content words; Chinese as single characters and bigrams."""
    out: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            chars = [c for c in word if _CJK.match(c)]
            out.update(chars)
            out.update(a + b for a, b in itertools.pairwise(chars))
        elif word not in _STOP:
            out.add(word)
    return out


def _overlap(query: set[str], passage: set[str]) -> float:
    return len(query & passage) / len(query) if query else 0.0


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and len(s.strip()) > 1]


def _shortlist(wanted: set[str], candidates: list[str], n: int) -> list[str]:
    """The ``n`` sentences sharing most terms with ``wanted``, in their original order.

    e5 runs at tens of milliseconds per sentence on a CPU, so only sentences that
    share words with the question or claim are worth embedding at all.
    """
    if len(candidates) <= n:
        return candidates
    ranked = sorted(
        range(len(candidates)), key=lambda i: (-_overlap(wanted, terms(candidates[i])), i)
    )
    return [candidates[i] for i in sorted(ranked[:n])]


def rerank(request: RerankRequest, embed: Embed) -> Ranking:
    """0.8 x e5 cosine over the whole passage + 0.2 x share of query terms it contains."""
    if not request.passages:
        return Ranking(scores=())
    query = embed([request.query], True)[0]
    passages = embed(list(request.passages), False)
    dense = passages @ query
    wanted = terms(request.query)
    scores = tuple(
        round(0.8 * float(d) + 0.2 * _overlap(wanted, terms(p)), 6)
        for d, p in zip(dense, request.passages, strict=True)
    )
    return Ranking(scores=scores)


def verify(request: VerifyRequest, embed: Embed) -> Verdict:
    """Support = the best evidence sentence is similar AND numbers and negation agree.

    A heuristic, not entailment: it catches invented numbers, flipped negations
    and claims about something else; it cannot catch subtle paraphrased errors.
    """
    reasons: list[str] = []
    claim_terms = terms(request.claim)
    evidence_sentences = _shortlist(
        claim_terms, sentences(request.evidence) or [request.evidence], _SHORTLIST
    )
    claim_vec = embed([request.claim], True)[0]
    sims = embed(evidence_sentences, False) @ claim_vec
    best = int(np.argmax(sims))
    similarity = float(sims[best])
    lexical = _overlap(claim_terms, terms(request.evidence))
    score = 0.6 * similarity + 0.4 * lexical
    missing = [n for n in _NUMBER.findall(request.claim) if n not in request.evidence]
    if missing:
        reasons.append(f"numbers not in evidence: {', '.join(missing)}")
    claim_negated = bool(_NEGATION.search(request.claim))
    if claim_negated != bool(_NEGATION.search(evidence_sentences[best])):
        reasons.append("negation differs from the closest evidence sentence")
    if score < 0.6:
        reasons.append(f"weak overlap with evidence (score {score:.2f})")
    supported = not reasons
    if supported:
        reasons.append(f"closest evidence sentence: {evidence_sentences[best][:160]}")
    return Verdict(supported=supported, score=round(score, 4), reasons=tuple(reasons))


def generate(request: GenerateRequest, embed: Embed, *, max_sentences: int = 3) -> Generation:
    """An extractive answer: the evidence sentences closest to the question, cited [n].

    Evidence numbering follows ``request.evidence`` (1-based), which callers
    order by relevance, so earlier sections win close calls. The best sentence
    always leads; others join only when nearly as close (within ``_MARGIN``),
    which keeps the answer short and on the question. With no evidence there is
    nothing to extract, and the answer says so instead of inventing.
    """
    question = request.question or next(
        (m.content for m in reversed(request.messages) if m.role == "user"), ""
    )
    wanted = terms(question)
    every = [
        (number, sentence)
        for number, passage in enumerate(request.evidence, start=1)
        for sentence in sentences(passage)
    ]
    # Only the sentences sharing most of the question's terms are embedded (e5 costs
    # tens of ms per sentence on a CPU); ties go to earlier, better-ranked sections.
    ranked = sorted(range(len(every)), key=lambda i: (-_overlap(wanted, terms(every[i][1])), i))
    candidates = [every[i] for i in sorted(ranked[:_GENERATE_SHORTLIST])]
    if not question or not candidates:
        return Generation(
            text="The provided documents do not contain an answer.",
            extractive=True,
            finish_reason="no_evidence",
        )
    sims = embed([c[1] for c in candidates], False) @ embed([question], True)[0]
    scores = [
        0.6 * float(sims[i])
        + 0.4 * _overlap(wanted, terms(candidates[i][1]))
        - _RANK_PENALTY * (candidates[i][0] - 1)
        for i in range(len(candidates))
    ]
    ranked = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    best = scores[ranked[0]]
    picked = sorted(i for i in ranked[:max_sentences] if scores[i] >= best - _MARGIN)
    text = " ".join(f"{candidates[i][1]} [{candidates[i][0]}]" for i in picked)
    return Generation(text=text, extractive=True, finish_reason="extractive")


def enrich(request: EnrichRequest) -> str:
    """A context line from the document title and heading path: no model, no guessing."""
    parts = [p.strip() for p in (request.title, *request.heading_path) if p and p.strip()]
    return " > ".join(dict.fromkeys(parts))


def describe(request: DescribeRequest) -> str:
    """A description built from the caption and the text found in the image."""
    parts = ["Image"]
    if request.caption:
        parts.append(f"captioned {request.caption.strip()!r}")
    text = " ".join(request.ocr_text.split())
    if text:
        parts.append(f"containing the text: {text[:500]}")
    else:
        parts.append("with no readable text")
    return ", ".join(parts) + "."


_AGGREGATES = (
    (re.compile(r"\b(?:average|mean|avg)\b|平均|promedio", re.I), "AVG"),
    (re.compile(r"\b(?:total|sum)\b|总|合计|suma", re.I), "SUM"),
    (re.compile(r"\b(?:maximum|max|highest|largest|most)\b|最大|最高|máximo", re.I), "MAX"),
    (re.compile(r"\b(?:minimum|min|lowest|smallest|least)\b|最小|最低|mínimo", re.I), "MIN"),
    (re.compile(r"\b(?:how many|count|number of)\b|多少|几个|cuántos", re.I), "COUNT"),
)


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def sql(request: SqlRequest) -> SqlDraft:
    """One aggregate over one column when the question names both; otherwise refuse.

    This recognises "average/total/max/min/how many <column>" and nothing
    more; anything else returns an empty draft with the reason, so the caller
    abstains instead of running a wrong query.
    """
    question = request.question.lower()
    column = next(
        (c for c in sorted(request.columns, key=len, reverse=True) if c.lower() in question),
        None,
    )
    for pattern, function in _AGGREGATES:
        if not pattern.search(question):
            continue
        if function == "COUNT":
            return SqlDraft(
                sql=f"SELECT COUNT(*) AS value FROM {_quote(request.table)}",
                explanation="pattern: count of rows",
            )
        if column is not None:
            return SqlDraft(
                sql=f"SELECT {function}({_quote(column)}) AS value FROM {_quote(request.table)}",
                explanation=f"pattern: {function.lower()} of column {column!r}",
            )
    return SqlDraft(sql="", explanation="no SQL model configured and no simple pattern matched")

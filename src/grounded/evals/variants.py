"""Variants: what is being compared, each a name and a call over (principal, query).

A variant returns corpus ids in rank order (and, for an answering variant,
an ``AnswerOutcome``), so the runner and the metrics never care whether the
ids came from BM25 alone, the full hybrid pipeline or an answer's citations.
Retrieval variants all go through ``Retriever.search`` and so each query
leaves the same ``retrieval_runs`` receipt as a user's search. New kinds
(an "answer" variant over ``grounded.answer``) join by ``register``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.errors import InvalidInput
from grounded.evals.metrics import AnswerOutcome
from grounded.gateway import Gateway
from grounded.retrieve import Hit, Retriever, SearchRequest

HYBRID: Final = frozenset({"bm25", "dense"})


@dataclass(frozen=True)
class Outcome:
    ranked: tuple[str, ...]  # corpus ids, best first, each once
    run_id: str | None = None  # the retrieval receipt
    answer: AnswerOutcome | None = None


@dataclass(frozen=True)
class Variant:
    name: str
    run: Callable[[Principal, str], Outcome]


@dataclass(frozen=True)
class VariantContext:
    """What a variant factory may use; ``ids`` maps document ids to corpus ids."""

    retriever: Retriever
    gateway: Gateway
    ids: Mapping[str, str]
    k: int
    candidate_k: int
    settings: Settings | None = None


Factory = Callable[[VariantContext], Variant]
_FACTORIES: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    """Make ``name`` usable in a suite's ``[run] variants``."""
    _FACTORIES[name] = factory


def names() -> list[str]:
    return sorted(_FACTORIES)


def build(variant_names: Sequence[str], context: VariantContext) -> list[Variant]:
    unknown = [n for n in variant_names if n not in _FACTORIES]
    if unknown:
        raise InvalidInput(
            f"unknown variant {unknown[0]!r}; known: {', '.join(names())}",
            details={"variant": unknown[0]},
        )
    return [_FACTORIES[n](context) for n in variant_names]


def corpus_ids(hits: Sequence[Hit], ids: Mapping[str, str]) -> tuple[str, ...]:
    """Hits -> corpus ids in rank order, a document once (hits are one per section)."""
    return tuple(
        dict.fromkeys(ids[h.document_id] for h in hits if h.document_id and h.document_id in ids)
    )


def _search(name: str, modes: frozenset[str], rerank: bool) -> Factory:
    def factory(ctx: VariantContext) -> Variant:
        def run(principal: Principal, query: str) -> Outcome:
            found = ctx.retriever.search(
                principal,
                SearchRequest(
                    query=query, k=ctx.k, candidate_k=ctx.candidate_k, modes=modes, rerank=rerank
                ),
            )
            return Outcome(corpus_ids(found.hits, ctx.ids), str(found.run_id))

        return Variant(name, run)

    return factory


def _parent_rerank(ctx: VariantContext) -> Variant:
    """Hybrid, then the gateway reranker over each hit's *parent section* text.

    Issue 8 asks whether reranking the parent text (small-to-big) beats the
    chunk text the search reranks; this measures it without changing search.
    The receipt is the hybrid search's; the rerank scores are not in it.
    """
    depth = 20

    def run(principal: Principal, query: str) -> Outcome:
        found = ctx.retriever.search(
            principal,
            SearchRequest(query=query, k=ctx.k, candidate_k=ctx.candidate_k, rerank=False),
        )
        head, tail = found.hits[:depth], found.hits[depth:]
        if head:
            result = ctx.gateway.rerank(principal, query, [h.parent_text or h.text for h in head])
            head = [head[i] for i in result.value.order()]
        return Outcome(corpus_ids([*head, *tail], ctx.ids), str(found.run_id))

    return Variant("hybrid+rerank-parent", run)


def _answer(ctx: VariantContext) -> Variant:
    """A grounded answer (issue 10): citations rank the documents, claims and spans
    give the answer metrics. Not in the default suites: it costs a generation per
    question."""
    from grounded.answer import Answerer, AnswerRequest

    answerer = Answerer(
        ctx.retriever.database,
        ctx.retriever,
        ctx.gateway,
        ctx.settings.answer if ctx.settings else None,
    )

    def run(principal: Principal, query: str) -> Outcome:
        said = answerer.answer(principal, AnswerRequest(question=query))
        chunk_ids = [c.chunk_id for c in said.citations]
        with ctx.retriever.database.transaction(principal.tenant_id) as conn:
            rows = conn.execute(
                "SELECT id::text AS id, text FROM chunks WHERE id::text = ANY(%s)", (chunk_ids,)
            ).fetchall()
        texts = {r["id"]: r["text"] for r in rows}
        cited_all = tuple(
            ctx.ids[c.document_id]
            for c in said.citations
            if c.document_id and c.document_id in ctx.ids
        )
        cited = tuple(dict.fromkeys(cited_all))
        outcome = AnswerOutcome(
            abstained=said.abstained,
            claims_total=len(said.claims),
            claims_supported=sum(1 for c in said.claims if c.get("supported")),
            cited_ids=cited_all,
            cited_text="\n".join(texts.get(i, "") for i in chunk_ids),
        )
        runs = said.retrieval_run_ids
        return Outcome(cited, str(runs[-1]) if runs else None, outcome)

    return Variant("answer", run)


register("answer", _answer)
register("bm25", _search("bm25", frozenset({"bm25"}), False))
register("dense", _search("dense", frozenset({"dense"}), False))
register("hybrid", _search("hybrid", HYBRID, False))
register("hybrid+rerank", _search("hybrid+rerank", HYBRID, True))
register("hybrid+rerank-parent", _parent_rerank)

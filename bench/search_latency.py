"""Search latency per stage through the real Retriever at 10k and 100k chunks.

Run: .venv/bin/python bench/search_latency.py [--sizes 10000 100000] [--queries 100]

The corpus and its vectors come from bench/index_build.py (synthetic chunks of
SciFact sentences, deterministic clustered vectors), so embedding cost is not
in the build. The query side runs through grounded.retrieve.Retriever with a
gateway whose `embed` gives the same clustered vectors for queries (same
space as the index) and whose `rerank` is the real local fallback reranker
fed with vectors of the same space (in production they come from the
gateway's cache of the e5 vectors made at ingestion). Reported: p50/p95 per stage, for search alone
and search + rerank of the top 20.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from index_build import (
    BenchEmbedder,
    fresh_database,
    load_chunks,
    machine,
    make_tenant,
    pct,
    queries,
    sentences,
)

from grounded.gateway import fallbacks, open_gateway
from grounded.gateway.types import Receipt, RerankRequest, Result
from grounded.index import Builder, IndexReader, publish
from grounded.retrieve import Retriever, SearchRequest


@dataclass(frozen=True)
class _Embeddings:
    vectors: Any
    model: str


class BenchGateway:
    """Query vectors in the bench index's space; everything else from the real gateway."""

    def __init__(self, real: Any, embedder: BenchEmbedder) -> None:
        self.real = real
        self.embedder = embedder

    def embed(self, principal: Any, texts: list[str], role: str) -> _Embeddings:
        return _Embeddings(
            np.stack([self.embedder.embed_query(t) for t in texts]), self.embedder.model_id
        )

    def rerank(self, principal: Any, query: str, passages: list[str]) -> Any:
        """The real fallback reranker (cosine + lexical overlap) over vectors from the bench
        space: in production its e5 vectors come from the gateway's per-text cache (the query
        from the search, passages from ingestion), which these stand in for. The cache
        lookup itself (one indexed read) is not in this figure."""
        t = time.perf_counter()

        def embed(texts: Any, is_query: bool) -> Any:
            if is_query:
                return np.stack([self.embedder.embed_query(t) for t in texts])
            return self.embedder.embed_passages(list(texts))

        ranking = fallbacks.rerank(RerankRequest(query, tuple(passages)), embed)
        receipt = Receipt(
            "rerank",
            "local",
            "local/fallback-rerank (bench vectors)",
            cache_hit=True,
            latency_ms=(time.perf_counter() - t) * 1000,
            fallback=True,
        )
        return Result(ranking, receipt)

    def close(self) -> None:
        self.real.close()


def run(size: int, n_queries: int) -> None:
    pool, qs = sentences(), queries(n_queries)
    with fresh_database() as (settings, database, owner):
        who = make_tenant(owner, "bench")
        load_chunks(owner, who.tenant_id, size, pool)
        embedder = BenchEmbedder(384)
        builder = Builder(database, settings.index, embedder)
        report = builder.build(who)
        publish(database, who, report.snapshot.generation)
        gateway = BenchGateway(open_gateway(settings, database), embedder)
        retriever = Retriever(database, IndexReader(database, settings.index), gateway)  # type: ignore[arg-type]
        print(f"\n== {size} chunks ==")
        for rerank in (False, True):
            n = n_queries if not rerank else max(10, n_queries // 10)
            retriever.search(who, SearchRequest(query=qs[0], rerank=rerank))  # warm caches
            totals, stages = [], {}
            for q in qs[:n]:
                t = time.perf_counter()
                found = retriever.search(who, SearchRequest(query=q, rerank=rerank))
                totals.append(time.perf_counter() - t)
                for stage, ms in found.receipt["timings_ms"].items():
                    stages.setdefault(stage, []).append(ms / 1000)
            label = "search + rerank(top 20)" if rerank else "search (bm25 + dense + rrf)"
            print(
                f"{label:28s} p50 {pct(totals, 50):7.1f} ms  p95 {pct(totals, 95):7.1f} ms"
                f"  (n={n}, wall incl. receipt write)"
            )
            for stage, values in stages.items():
                print(
                    f"    {stage:12s} p50 {pct(values, 50):7.1f} ms  p95 {pct(values, 95):7.1f} ms"
                )
        gateway.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    for size in args.sizes:
        run(size, args.queries)


if __name__ == "__main__":
    main()

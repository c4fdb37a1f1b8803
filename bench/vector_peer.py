"""Dense retrieval side by side with its closest peer: exact search in numpy.

Run: .venv/bin/python bench/vector_peer.py [--sizes 10000 30000] [--queries 100]

Same synthetic corpus and deterministic 384-d vectors as bench/index_build.py.
For each query, in the same run: the index's dense path (pgvector through
IndexReader; exact SQL below ``exact_vector_max`` eligible rows, filtered HNSW
above) timed as candidates-with-vector minus candidates-without (the BM25
part), against a numpy matrix product + argpartition over all vectors held in
memory. Prints p50/p95 of each, recall@10 of the index against numpy, memory
the numpy matrix needs, and the machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

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

from grounded.index import Builder, IndexReader, publish


def run(size: int, n_queries: int) -> None:
    pool, qs = sentences(), queries(n_queries)
    with fresh_database() as (settings, database, owner):
        who = make_tenant(owner, "bench")
        load_chunks(owner, who.tenant_id, size, pool)
        embedder = BenchEmbedder(384)
        report = Builder(database, settings.index, embedder).build(who)
        publish(database, who, report.snapshot.generation)
        rows = owner.execute(
            "SELECT c.id::text, d.title, c.context_line, c.text FROM chunks c"
            " JOIN documents d ON d.id = c.document_id WHERE c.tenant_id = %s ORDER BY c.id",
            (who.tenant_id,),
        ).fetchall()
        ids = [r[0] for r in rows]
        # the text the index embeds (index/build.py _passage): title, context line, text
        matrix = embedder.embed_passages(["\n".join(x for x in r[1:] if x) for r in rows])
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        reader = IndexReader(database, settings.index)
        vector = embedder.embed_query(qs[0])
        reader.candidates(who, qs[0], k=50, query_vector=vector, query_model=embedder.model_id)
        ours, lexical_only, exact, recalls = [], [], [], []
        method = ""
        for q in qs:
            v = embedder.embed_query(q)
            t = time.perf_counter()
            found = reader.candidates(who, q, k=50, query_vector=v, query_model=embedder.model_id)
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            reader.candidates(who, q, k=50)
            lexical_only.append(time.perf_counter() - t)
            t = time.perf_counter()
            scores = matrix @ v
            top = np.argpartition(-scores, 50)[:50]
            top = top[np.argsort(-scores[top])]
            exact.append(time.perf_counter() - t)
            truth = {ids[i] for i in top[:10]}
            recalls.append(len(truth & {c.unit_id for c in found.dense[:10]}) / 10)
            method = found.dense_method
        dense_only = [max(0.0, a - b) for a, b in zip(ours, lexical_only, strict=True)]
        print(f"\n== {size} chunks, {len(qs)} queries, index dense method: {method} ==")
        print(
            f"index dense path (est.)  p50 {pct(dense_only, 50):7.1f} ms"
            f"  p95 {pct(dense_only, 95):7.1f} ms"
        )
        print(f"index bm25 + dense       p50 {pct(ours, 50):7.1f} ms  p95 {pct(ours, 95):7.1f} ms")
        print(
            f"numpy exact (in memory)  p50 {pct(exact, 50):7.1f} ms  p95 {pct(exact, 95):7.1f} ms"
        )
        print(
            f"recall@10 of the index vs numpy exact: {np.mean(recalls):.3f}; "
            f"numpy matrix {matrix.nbytes / 2**20:.0f} MiB per process"
        )


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

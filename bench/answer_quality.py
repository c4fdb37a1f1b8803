"""Answer quality of the default offline path: CMRC 2018 (zh) and SciFact claims (en).

Run: .venv/bin/python bench/answer_quality.py [--cmrc-questions 120] [--scifact-claims 60]
     [--distractors 300] [--data-dir DIR] [--min-coverage 0.5]

A fresh (or reused, with --data-dir) embedded PostgreSQL; corpora go in through
the real write path (records import, worker, index) and questions through the
real answer path (grounded.answer.Answerer: retrieve, context, extractive
generation, claim verification, retry, abstention).

Each corpus is split so that "drop the relevant document from the tenant"
holds for half of the questions: CMRC articles alternate in/out (a question
about an article left out has no relevant paragraph in the tenant); SciFact
claims alternate in/out (an "out" claim's cited abstracts are not ingested,
distractors are). Answerable questions report answer-span hit (CMRC: a gold
answer string inside the answer), claim support rate, citation precision
(cited document is a relevant one) and abstention rate; unanswerable ones
report the abstention rate (RGB: chat models reject as little as 5-25%).

Calibration (seed 000 ADR-016 style): the gate threshold min_coverage is
chosen on the even-indexed questions, then reported once on the odd ones.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared" / "evaldata"
GRID = [round(0.05 * i, 2) for i in range(0, 19)]


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    relevant: frozenset[str]
    answerable: bool
    answers: tuple[str, ...] = ()


def cmrc(n: int) -> tuple[list[dict[str, str]], list[Question]]:
    data = json.loads((SHARED / "cmrc2018_trial.json").read_text())
    records: list[dict[str, str]] = []
    inside: list[Question] = []
    outside: list[Question] = []
    for index, article in enumerate(data["data"]):
        keep = index % 2 == 0
        for para in article["paragraphs"]:
            if keep:
                records.append(
                    {"id": para["id"], "title": article.get("title", ""), "text": para["context"]}
                )
            for qa in para["qas"]:
                answers = tuple(a["text"] for a in qa["answers"] if a["text"].strip())
                (inside if keep else outside).append(
                    Question(qa["id"], qa["question"], frozenset({para["id"]}), keep, answers)
                )
    return records, inside[:n] + outside[:n]


def scifact(n: int, distractors: int) -> tuple[list[dict[str, str]], list[Question]]:
    qrels: dict[str, set[str]] = {}
    with (SHARED / "scifact" / "qrels_train.tsv").open() as f:
        next(f)
        for line in f:
            q, d, _ = line.split("\t")
            qrels.setdefault(q, set()).add(d)
    claims = []
    with (SHARED / "scifact" / "queries_train.jsonl").open() as f:
        for line in f:
            q = json.loads(line)
            if q["_id"] in qrels:
                claims.append((q["_id"], q["text"], qrels[q["_id"]]))
    claims = claims[: 2 * n]
    corpus = {
        json.loads(line)["_id"]: json.loads(line)
        for line in (SHARED / "scifact" / "corpus.jsonl").open()
    }
    inside = [c for i, c in enumerate(claims) if i % 2 == 0]
    outside = [c for i, c in enumerate(claims) if i % 2 == 1]
    keep = set().union(*(rel for _, _, rel in inside))
    dropped = set().union(*(rel for _, _, rel in outside)) - keep
    # An "out" claim sharing an abstract with an "in" claim is answerable after all.
    outside = [c for c in outside if not (c[2] & keep)]
    others = sorted(set(corpus) - keep - dropped)
    keep |= set(random.Random(7).sample(others, distractors))
    records = [
        {"id": d, "title": corpus[d]["title"], "text": corpus[d]["text"]} for d in sorted(keep)
    ]
    questions = [Question(q, t, frozenset(r), True) for q, t, r in inside] + [
        Question(q, t, frozenset(r), False) for q, t, r in outside
    ]
    return records, questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cmrc-questions", type=int, default=120)
    parser.add_argument("--scifact-claims", type=int, default=60)
    parser.add_argument("--distractors", type=int, default=300)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="Write per-question JSON here.")
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="grounded-answers-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    env.update(
        {
            "GROUNDED_DATA_DIR": str(data_dir),
            "GROUNDED_CONFIG": "/nonexistent.toml",
            "GROUNDED_LOG_LEVEL": "warning",
        }
    )
    os.environ.update(env)
    subprocess.run(
        [sys.executable, "-m", "grounded", "db", "upgrade"],
        env=env,
        check=True,
        capture_output=True,
    )
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; data dir {data_dir}"
    )
    suites = {
        "cmrc2018 (zh)": cmrc(args.cmrc_questions),
        "scifact (en)": scifact(args.scifact_claims, args.distractors),
    }
    rows: dict[str, list[dict[str, Any]]] = {}
    for n, (name, (records, questions)) in enumerate(suites.items()):
        rows[name] = run_suite(f"answers{n}", name, records, questions)
    if args.out:
        args.out.write_text(json.dumps(rows, ensure_ascii=False, indent=1))
    calibrate(rows)


def run_suite(
    slug: str, name: str, records: list[dict[str, str]], questions: list[Question]
) -> list[dict[str, Any]]:
    from grounded.answer import Answerer, AnswerRequest, AnswerSettings
    from grounded.cli.local_admin import local_admin
    from grounded.config import Settings
    from grounded.db import Database
    from grounded.evals.corpus import CorpusRecord, ensure_tenant, external_ids, fingerprint, load
    from grounded.gateway import open_gateway
    from grounded.index import IndexReader
    from grounded.retrieve import Retriever

    settings = Settings()
    corpus = [CorpusRecord(r["id"], r["title"], r["text"]) for r in records]
    ensure_tenant(settings, slug, fingerprint(corpus))
    principal = local_admin(settings, slug)
    out: list[dict[str, Any]] = []
    with Database.open(settings) as database:
        t = time.perf_counter()
        load(settings, database, principal, corpus)
        print(
            f"\n== {name}: {len(records)} documents ready in {time.perf_counter() - t:.0f} s; "
            f"{sum(q.answerable for q in questions)} answerable and "
            f"{sum(not q.answerable for q in questions)} unanswerable questions =="
        )
        ids = external_ids(database, principal)
        gateway = open_gateway(settings, database)
        try:
            retriever = Retriever(database, IndexReader(database, settings.index), gateway)
            # The gate off and no retry: each question's coverage is recorded, and the
            # outcome at any threshold is computed from it (calibrate()).
            answerer = Answerer(database, retriever, gateway, AnswerSettings(min_coverage=0.0))
            for q in questions:
                t = time.perf_counter()
                answer = answerer.answer(principal, AnswerRequest(q.text, retry=False))
                elapsed = time.perf_counter() - t
                first = answer.attempts[0]
                cited = [ids.get(str(c.document_id), "") for c in answer.citations]
                out.append(
                    {
                        "id": q.id,
                        "answerable": q.answerable,
                        "abstained": answer.abstained,
                        "reason": answer.abstain_reason,
                        "coverage": first["coverage"]["share"],
                        "anchors_missing": bool(first["coverage"]["missing_anchors"]),
                        "support_rate": answer.support_rate,
                        "citation_precision": (
                            sum(c in q.relevant for c in cited) / len(cited) if cited else None
                        ),
                        "span_hit": any(a in answer.text for a in q.answers) if q.answers else None,
                        "seconds": elapsed,
                    }
                )
        finally:
            gateway.close()
    return out


def outcome(row: dict[str, Any], threshold: float) -> bool:
    """Abstained at this threshold (the run itself used threshold 0)."""
    return bool(row["abstained"] or row["anchors_missing"] or row["coverage"] < threshold)


def score(rows: list[dict[str, Any]], threshold: float) -> tuple[float, float]:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    kept = sum(not outcome(r, threshold) for r in answerable) / max(len(answerable), 1)
    rejected = sum(outcome(r, threshold) for r in unanswerable) / max(len(unanswerable), 1)
    return kept, rejected


def calibrate(rows: dict[str, list[dict[str, Any]]]) -> None:
    calibration = [r for suite in rows.values() for r in suite[::2]]
    # Smallest threshold that rejects >= 90% of unanswerable calibration questions while
    # answering as many answerable ones as possible; else the best balanced accuracy.
    best = max(
        GRID, key=lambda t: (score(calibration, t)[1] >= 0.9, sum(score(calibration, t)), -t)
    )
    kept, rejected = score(calibration, best)
    print(
        f"\ncalibration (even-indexed questions, both corpora): min_coverage = {best:.2f} "
        f"answers {kept:.1%} of answerable, abstains on {rejected:.1%} of unanswerable"
    )
    print(
        f"\n{'suite (validation: odd-indexed)':32s} {'n ans':>5s} {'abst.':>6s} {'span hit':>8s}"
        f" {'support':>7s} {'cit.prec':>8s} | {'n unans':>7s} {'abst.':>6s} | {'p50 s':>5s}"
    )
    for name, suite in rows.items():
        held = suite[1::2]
        answerable = [r for r in held if r["answerable"]]
        unanswerable = [r for r in held if not r["answerable"]]
        released = [r for r in answerable if not outcome(r, best)]

        def avg(key: str, among: list[dict[str, Any]] = released) -> str:
            values = [float(r[key]) for r in among if r[key] is not None]
            return f"{statistics.mean(values):.1%}" if values else "-"

        span = avg("span_hit", answerable) if any(r["span_hit"] is not None for r in held) else "-"
        abst_a = sum(outcome(r, best) for r in answerable) / max(len(answerable), 1)
        abst_u = sum(outcome(r, best) for r in unanswerable) / max(len(unanswerable), 1)
        p50 = statistics.median(r["seconds"] for r in held)
        print(
            f"{name:32s} {len(answerable):5d} {abst_a:6.1%} {span:>8s} {avg('support_rate'):>7s}"
            f" {avg('citation_precision'):>8s} | {len(unanswerable):7d} {abst_u:6.1%} | {p50:5.2f}"
        )
    print(
        "\nspan hit is over all answerable questions (an abstention is a miss); support and "
        "citation precision over released answers."
    )


if __name__ == "__main__":
    main()

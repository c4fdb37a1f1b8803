"""Rebuild the frozen fast-tier subsets from ../shared/evaldata (run once; output is committed).

    .venv/bin/python evals/data/make_fast.py

SciFact (BEIR train split): the first 30 judged claims in file order, every
abstract they judge relevant, and 90 seeded (7) distractor abstracts.
CMRC 2018 trial (SQuAD): the first 40 questions with text, their paragraphs,
and 15 seeded (7) distractor paragraphs (kept with no questions).
The files are frozen: changing them changes what the fast-tier gates mean, so
it is a reviewed change with a suite version bump, never a way to pass.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[2] / "shared" / "evaldata"


def scifact(out: Path, queries: int = 30, distractors: int = 90, seed: int = 7) -> None:
    src = SHARED / "scifact"
    lines = (src / "qrels_train.tsv").read_text().splitlines()
    qrels: dict[str, list[str]] = {}
    for line in lines[1:]:
        q, d, score = line.split("\t")
        if int(score) > 0:
            qrels.setdefault(q, []).append(d)
    chosen = []
    for raw in (src / "queries_train.jsonl").open():
        q = json.loads(raw)
        if q["_id"] in qrels and q["text"].strip():
            chosen.append(q)
        if len(chosen) == queries:
            break
    corpus = {json.loads(raw)["_id"]: raw for raw in (src / "corpus.jsonl").open()}
    wanted = {d for q in chosen for d in qrels[q["_id"]]}
    others = sorted(set(corpus) - wanted)
    wanted |= set(random.Random(seed).sample(others, distractors))  # noqa: S311
    out.mkdir(parents=True, exist_ok=True)
    (out / "corpus.jsonl").write_text("".join(corpus[d] for d in sorted(wanted)))
    (out / "queries_train.jsonl").write_text(
        "".join(json.dumps({"_id": q["_id"], "text": q["text"]}) + "\n" for q in chosen)
    )
    (out / "qrels_train.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q['_id']}\t{d}\t1\n" for q in chosen for d in qrels[q["_id"]])
    )


def cmrc(out: Path, questions: int = 40, distractors: int = 15, seed: int = 7) -> None:
    data = json.loads((SHARED / "cmrc2018_trial.json").read_text())
    kept, taken, spare = [], 0, []
    for article in data["data"]:
        for para in article["paragraphs"]:
            qas = [qa for qa in para["qas"] if qa["question"].strip()]
            if taken < questions and qas:
                qas = qas[: questions - taken]
                taken += len(qas)
                kept.append((article.get("title", ""), {**para, "qas": qas}))
            else:
                spare.append((article.get("title", ""), {**para, "qas": []}))
    kept += random.Random(seed).sample(spare, distractors)  # noqa: S311
    doc = {
        "version": "cmrc2018-trial-fast-subset",
        "data": [{"title": t, "paragraphs": [p]} for t, p in kept],
    }
    out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    scifact(HERE / "scifact-fast")
    cmrc(HERE / "cmrc2018-fast.json")

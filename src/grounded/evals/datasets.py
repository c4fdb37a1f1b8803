"""Eval data: a corpus and judged queries, read from BEIR, SQuAD or our own JSONL.

Every loader validates the whole input before anything is ingested and names
the file and line of the first problem (a malformed line, a query with no
text, a judgement naming a document the corpus does not have): an eval that
silently skips bad judgements reports figures for a set nobody chose.

Formats:
- BEIR directory: ``corpus.jsonl`` ({_id, title, text}), ``queries.jsonl`` or
  ``queries_<split>.jsonl`` ({_id, text}), ``qrels/<split>.tsv`` or
  ``qrels_<split>.tsv`` (query-id, corpus-id, score; a header line is allowed).
  Queries are the ones the split judges with a score > 0.
- SQuAD JSON: each question's relevant document is the paragraph that holds
  its answer; the answer texts are kept for the answer-span metric.
- grounded: ``corpus.jsonl`` as ``grounded ingest --records`` reads it and
  ``queries.jsonl`` with {id, text, relevant: [ids] | {id: grade},
  language?, family?, answers?}.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grounded.errors import InvalidInput
from grounded.evals.corpus import CorpusRecord


@dataclass(frozen=True)
class Query:
    """One judged question; ``relevant`` maps corpus ids to grades (> 0)."""

    id: str
    text: str
    relevant: Mapping[str, int]
    language: str
    family: str
    answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Dataset:
    name: str
    language: str
    family: str
    records: tuple[CorpusRecord, ...]
    queries: tuple[Query, ...]
    source: str = field(default="")
    #: "file:line: reason" of each query left out on purpose (skip_empty_queries).
    skipped: tuple[str, ...] = ()


def _bad(path: Path, line: int | None, message: str) -> InvalidInput:
    where = f"{path}:{line}" if line is not None else str(path)
    return InvalidInput(f"{where}: {message}", details={"file": str(path), "line": line})


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise _bad(path, None, "file not found")
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise _bad(path, number, f"not JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise _bad(path, number, "expected a JSON object")
            yield number, obj


def _text(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value.strip() if isinstance(value, str) else ""


def read_corpus(path: Path) -> tuple[CorpusRecord, ...]:
    """{_id|id, title?, text} per line; a record needs an id and some text."""
    seen: set[str] = set()
    records = []
    for number, obj in _jsonl(path):
        raw_id = obj.get("_id", obj.get("id"))
        if not isinstance(raw_id, (str, int)) or not str(raw_id).strip():
            raise _bad(path, number, "the record has no `_id`/`id`")
        record_id = str(raw_id)
        if record_id in seen:
            raise _bad(path, number, f"id {record_id!r} appears twice")
        seen.add(record_id)
        # Kept as given (not stripped): the fingerprint is over the data as published.
        title = obj["title"] if isinstance(obj.get("title"), str) else ""
        text = obj["text"] if isinstance(obj.get("text"), str) else ""
        if not _text(obj, "text") and not _text(obj, "title"):
            raise _bad(path, number, f"record {record_id!r} has no text")
        records.append(CorpusRecord(record_id, title, text if text.strip() else title))
    if not records:
        raise _bad(path, None, "the corpus is empty")
    return tuple(records)


def _first(directory: Path, *names: str) -> Path:
    for name in names:
        if (directory / name).is_file():
            return directory / name
    raise InvalidInput(
        f"{directory}: none of {', '.join(names)} found (a BEIR directory needs them)",
        details={"file": str(directory)},
    )


def load_beir(
    directory: Path, split: str, *, language: str, family: str, skip_empty: bool = False
) -> Dataset:
    """A BEIR-format directory, judged by ``split``."""
    records = read_corpus(directory / "corpus.jsonl")
    ids = {r.id for r in records}
    queries_path = _first(directory, f"queries_{split}.jsonl", "queries.jsonl")
    qrels_path = _first(directory, f"qrels/{split}.tsv", f"qrels_{split}.tsv")
    texts: dict[str, tuple[int, str]] = {}
    for number, obj in _jsonl(queries_path):
        raw_id = obj.get("_id", obj.get("id"))
        if not isinstance(raw_id, (str, int)) or not str(raw_id).strip():
            raise _bad(queries_path, number, "the query has no `_id`/`id`")
        texts[str(raw_id)] = (number, _text(obj, "text"))
    judged: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            parts = raw.rstrip("\n").split("\t")
            if not raw.strip() or (number == 1 and parts[0] in {"query-id", "query_id", "qid"}):
                continue
            if len(parts) != 3:
                raise _bad(qrels_path, number, "expected query-id<TAB>corpus-id<TAB>score")
            query_id, doc_id, score_text = parts
            try:
                score = int(score_text)
            except ValueError as exc:
                raise _bad(qrels_path, number, f"score {score_text!r} is not an integer") from exc
            if query_id not in texts:
                raise _bad(qrels_path, number, f"query {query_id!r} is not in {queries_path.name}")
            if doc_id not in ids:
                raise _bad(qrels_path, number, f"document {doc_id!r} is not in corpus.jsonl")
            if score > 0:
                judged.setdefault(query_id, {})[doc_id] = score
    if not judged:
        raise _bad(qrels_path, None, f"no positive judgements for split {split!r}")
    queries, skipped = [], []
    for query_id, relevant in judged.items():
        number, text = texts[query_id]
        if not text:
            problem = _bad(queries_path, number, f"query {query_id!r} is empty")
            if not skip_empty:
                raise problem
            skipped.append(problem.message)
            continue
        queries.append(Query(query_id, text, relevant, language, family))
    return Dataset(
        family, language, family, records, tuple(queries), str(directory), tuple(skipped)
    )


def load_squad(path: Path, *, language: str, family: str, skip_empty: bool = False) -> Dataset:
    """SQuAD-format JSON: question -> the paragraph holding its answer."""
    if not path.is_file():
        raise _bad(path, None, "file not found")
    raw = path.read_text(encoding="utf-8")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise _bad(path, exc.lineno, f"not JSON ({exc.msg})") from exc
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise _bad(path, 1, "expected an object with a `data` list (SQuAD format)")
    records: list[CorpusRecord] = []
    queries: list[Query] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for a, article in enumerate(articles):
        title = str(article.get("title") or "") if isinstance(article, dict) else ""
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise _bad(path, _line_of(raw, title), f"data[{a}] has no `paragraphs` list")
        for p, para in enumerate(paragraphs):
            pid = str(para.get("id") or f"{a}-{p}") if isinstance(para, dict) else f"{a}-{p}"
            context = para.get("context") if isinstance(para, dict) else None
            if not isinstance(context, str) or not context.strip():
                raise _bad(path, _line_of(raw, pid), f"paragraph {pid!r} has no `context`")
            if pid in seen:
                raise _bad(path, _line_of(raw, pid), f"paragraph id {pid!r} appears twice")
            seen.add(pid)
            records.append(CorpusRecord(pid, title, context))
            for q, qa in enumerate(para.get("qas") or []):
                try:
                    queries.append(
                        _squad_question(path, raw, pid, context, q, qa, language, family)
                    )
                except _EmptyQuestion as exc:
                    if not skip_empty:
                        raise exc.problem from None
                    skipped.append(exc.problem.message)
    if not queries:
        raise _bad(path, None, "no answerable questions")
    return Dataset(
        family, language, family, tuple(records), tuple(queries), str(path), tuple(skipped)
    )


class _EmptyQuestion(Exception):
    def __init__(self, problem: InvalidInput) -> None:
        self.problem = problem


def _squad_question(
    path: Path,
    raw: str,
    pid: str,
    context: str,
    index: int,
    qa: Any,
    language: str,
    family: str,
) -> Query:
    if not isinstance(qa, dict):
        raise _bad(path, _line_of(raw, pid), f"paragraph {pid!r} qas[{index}] is not an object")
    qid = str(qa.get("id") or f"{pid}-q{index}")
    question = _text(qa, "question")
    if not question:
        raise _EmptyQuestion(_bad(path, _line_of(raw, qid), f"question {qid!r} is empty"))
    answers = tuple(
        str(ans["text"])
        for ans in qa.get("answers") or []
        if isinstance(ans, dict) and isinstance(ans.get("text"), str) and ans["text"].strip()
    )
    if not answers:
        raise _bad(path, _line_of(raw, qid), f"question {qid!r} has no answer text")
    missing = [a for a in answers if a not in context]
    if missing:
        raise _bad(
            path,
            _line_of(raw, qid),
            f"question {qid!r}: answer {missing[0]!r} not in its paragraph",
        )
    return Query(qid, question, {pid: 1}, language, family, answers)


def _line_of(raw: str, needle: str) -> int | None:
    """The line where ``needle`` first appears as a JSON string (SQuAD has no line info)."""
    at = raw.find(json.dumps(needle, ensure_ascii=False)) if needle else -1
    if at < 0:
        at = raw.find(json.dumps(needle)) if needle else -1
    return raw.count("\n", 0, at) + 1 if at >= 0 else None


def load_native(corpus: Path, queries: Path, *, language: str, family: str) -> Dataset:
    """Our own format: a records corpus and judged queries with optional language/family."""
    records = read_corpus(corpus)
    ids = {r.id for r in records}
    found = []
    for number, obj in _jsonl(queries):
        qid = str(obj.get("id") or "")
        text = _text(obj, "text")
        if not qid or not text:
            raise _bad(queries, number, "a query needs a non-empty `id` and `text`")
        relevant = obj.get("relevant")
        grades: dict[str, int]
        if isinstance(relevant, list):
            grades = {str(d): 1 for d in relevant}
        elif isinstance(relevant, dict):
            grades = {str(d): int(g) for d, g in relevant.items() if int(g) > 0}
        else:
            raise _bad(queries, number, "`relevant` must be a list of ids or {id: grade}")
        if not grades:
            raise _bad(queries, number, f"query {qid!r} judges no document relevant")
        unknown = sorted(set(grades) - ids)
        if unknown:
            raise _bad(queries, number, f"document {unknown[0]!r} is not in {corpus.name}")
        answers = tuple(str(a) for a in obj.get("answers") or [])
        found.append(
            Query(
                qid,
                text,
                grades,
                str(obj.get("language") or language),
                str(obj.get("family") or family),
                answers,
            )
        )
    if not found:
        raise _bad(queries, None, "no queries")
    return Dataset(family, language, family, records, tuple(found), str(queries))


def subset(dataset: Dataset, *, queries: int, distractors: int, seed: int) -> Dataset:
    """The first ``queries`` queries, their relevant documents and seeded distractors.

    Figures on a subset run higher than on the whole corpus: compare variants
    and runs of the same subset, not papers.
    """
    chosen = dataset.queries[:queries]
    wanted = {d for q in chosen for d in q.relevant}
    others = sorted(r.id for r in dataset.records if r.id not in wanted)
    wanted |= set(
        random.Random(seed).sample(  # noqa: S311 (a reproducible subset)
            others, min(distractors, len(others))
        )
    )
    records = tuple(r for r in dataset.records if r.id in wanted)
    return Dataset(
        dataset.name,
        dataset.language,
        dataset.family,
        records,
        chosen,
        dataset.source,
        dataset.skipped,
    )

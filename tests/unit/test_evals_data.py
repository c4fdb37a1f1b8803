"""Eval inputs: BEIR, SQuAD and suite files; every bad input names its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grounded.errors import InvalidInput
from grounded.evals import load_suite
from grounded.evals.corpus import CorpusRecord, fingerprint
from grounded.evals.datasets import load_beir, load_native, load_squad, subset

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(__file__).resolve().parents[3] / "shared" / "evaldata"


def beir(tmp_path: Path, *, corpus: str, queries: str, qrels: str) -> Path:
    (tmp_path / "corpus.jsonl").write_text(corpus)
    (tmp_path / "queries_dev.jsonl").write_text(queries)
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "dev.tsv").write_text(qrels)
    return tmp_path


CORPUS = '{"_id": "d1", "title": "T", "text": "one"}\n{"_id": "d2", "text": "two"}\n'
QUERIES = '{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": "second"}\n'


def test_beir_directory_with_qrels_folder_and_header(tmp_path: Path) -> None:
    path = beir(
        tmp_path,
        corpus=CORPUS,
        queries=QUERIES,
        qrels="query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t0\n",
    )
    dataset = load_beir(path, "dev", language="en", family="toy")
    assert [q.id for q in dataset.queries] == ["q1"]  # q2 has no positive judgement
    assert dataset.queries[0].relevant == {"d1": 2}
    assert {r.id for r in dataset.records} == {"d1", "d2"}


@pytest.mark.parametrize(
    ("corpus", "queries", "qrels", "message"),
    [
        (CORPUS + "{not json\n", QUERIES, "q1\td1\t1\n", "corpus.jsonl:3: not JSON"),
        (CORPUS, QUERIES, "q1\td9\t1\n", "dev.tsv:1: document 'd9' is not in corpus.jsonl"),
        (CORPUS, QUERIES, "q7\td1\t1\n", "dev.tsv:1: query 'q7' is not in queries_dev.jsonl"),
        (CORPUS, QUERIES, "q1\td1\n", "dev.tsv:1: expected query-id<TAB>corpus-id<TAB>score"),
        (CORPUS, '{"_id": "q1", "text": "  "}\n', "q1\td1\t1\n", "queries_dev.jsonl:1"),
        ('{"_id": "d1", "text": ""}\n', QUERIES, "q1\td1\t1\n", "corpus.jsonl:1: record 'd1'"),
    ],
)
def test_bad_beir_input_names_file_and_line(
    tmp_path: Path, corpus: str, queries: str, qrels: str, message: str
) -> None:
    path = beir(tmp_path, corpus=corpus, queries=queries, qrels=qrels)
    with pytest.raises(InvalidInput) as info:
        load_beir(path, "dev", language="en", family="toy")
    assert message in info.value.message


def test_empty_query_is_an_error_unless_skipping_is_asked_for(tmp_path: Path) -> None:
    path = beir(
        tmp_path,
        corpus=CORPUS,
        queries='{"_id": "q1", "text": ""}\n{"_id": "q2", "text": "second"}\n',
        qrels="q1\td1\t1\nq2\td2\t1\n",
    )
    with pytest.raises(InvalidInput, match=r"queries_dev\.jsonl:1: query 'q1' is empty"):
        load_beir(path, "dev", language="en", family="toy")
    kept = load_beir(path, "dev", language="en", family="toy", skip_empty=True)
    assert [q.id for q in kept.queries] == ["q2"]
    assert kept.skipped == (f"{path / 'queries_dev.jsonl'}:1: query 'q1' is empty",)


def test_squad_question_maps_to_its_paragraph_and_keeps_answers(tmp_path: Path) -> None:
    doc = {
        "data": [
            {
                "title": "A",
                "paragraphs": [
                    {
                        "id": "p1",
                        "context": "Paris is the capital of France.",
                        "qas": [
                            {"id": "x1", "question": "Capital?", "answers": [{"text": "Paris"}]}
                        ],
                    }
                ],
            }
        ]
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc, indent=1))
    dataset = load_squad(path, language="en", family="toy")
    assert dataset.queries[0].relevant == {"p1": 1}
    assert dataset.queries[0].answers == ("Paris",)
    doc["data"][0]["paragraphs"][0]["qas"][0]["answers"] = [{"text": "Lyon"}]  # type: ignore[index]
    path.write_text(json.dumps(doc, indent=1))
    with pytest.raises(InvalidInput, match=r"s\.json:\d+: question 'x1': answer 'Lyon' not in"):
        load_squad(path, language="en", family="toy")


def test_real_cmrc_trial_has_two_empty_questions_named_by_line() -> None:
    path = SHARED / "cmrc2018_trial.json"
    with pytest.raises(InvalidInput, match=r"cmrc2018_trial\.json:9738: question 'TRIAL_776"):
        load_squad(path, language="zh", family="cmrc")
    dataset = load_squad(path, language="zh", family="cmrc", skip_empty=True)
    assert (len(dataset.records), len(dataset.queries), len(dataset.skipped)) == (256, 1000, 2)


def test_native_format_checks_judgements(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"id": "a", "text": "alpha"}\n')
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"id": "1", "text": "alpha?", "relevant": ["a"], "language": "es"}\n')
    dataset = load_native(tmp_path / "corpus.jsonl", queries, language="en", family="f")
    assert dataset.queries[0].language == "es"
    queries.write_text('{"id": "1", "text": "alpha?", "relevant": ["zz"]}\n')
    with pytest.raises(InvalidInput, match=r"queries\.jsonl:1: document 'zz' is not in corpus"):
        load_native(tmp_path / "corpus.jsonl", queries, language="en", family="f")


def test_subset_is_reproducible_and_keeps_relevant_documents() -> None:
    full = load_beir(SHARED / "scifact", "train", language="en", family="scifact")
    one = subset(full, queries=5, distractors=20, seed=7)
    two = subset(full, queries=5, distractors=20, seed=7)
    assert one.records == two.records
    assert {d for q in one.queries for d in q.relevant} <= {r.id for r in one.records}


def test_fingerprint_covers_text_and_pipeline_but_not_order() -> None:
    a, b = CorpusRecord("1", "t", "x"), CorpusRecord("2", "t", "y")
    assert fingerprint([a, b], "v1") == fingerprint([b, a], "v1")
    assert fingerprint([a, b], "v1") != fingerprint([a, b], "v2")
    assert fingerprint([a, b], "v1") != fingerprint([a, CorpusRecord("2", "t", "y!")], "v1")


def test_the_shipped_suite_loads_both_tiers() -> None:
    suite = load_suite(REPO / "evals" / "retrieval.toml")
    fast = suite.datasets("fast")
    assert [(d.family, d.language) for d in fast] == [("scifact", "en"), ("cmrc2018", "zh")]
    assert all(g.min is not None for g in suite.gates)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[suite]\nname = "x"\nversion = 1\n[[data]\n', "line 4"),
        ('[suite]\nname = "x"\n', "suite.toml:1: [suite] needs an integer `version`"),
        (
            '[suite]\nname = "x"\nversion = 1\n\n[[data]]\nformat = "csv"\npath = "d"\n',
            "suite.toml:5: [[data]] format must be beir, squad or grounded",
        ),
        (
            '[suite]\nname = "x"\nversion = 1\n[[data]]\nformat = "beir"\npath = "d"\n'
            'language = "en"\n\n[[gates]]\nvariant = "hybrid"\nmetric = "ndcg@11"\nmin = 0.5\n',
            "suite.toml:9: gate metric 'ndcg@11' is not one of",
        ),
        (
            '[suite]\nname = "x"\nversion = 1\n[[data]]\nformat = "beir"\npath = "d"\n'
            'language = "en"\n[[gates]]\nvariant = "bm42"\nmetric = "top1"\nmin = 0.5\n',
            "suite.toml:8: gate variant 'bm42' is not among [run] variants",
        ),
        ('[suite]\nname = "x"\nversion = 1\n[extra]\n', "suite.toml:4: unknown table 'extra'"),
    ],
)
def test_malformed_suite_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as info:
        load_suite(path)
    assert message in info.value.message
    assert "suite.toml" in info.value.message

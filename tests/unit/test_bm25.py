"""BM25: hand-computed scores, eligibility before IDF, ties, and bm25s agreement."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grounded.index.bm25 import Bm25Params, Postings, top_k, weighted_terms
from grounded.index.tokenize import analyzer

pytestmark = pytest.mark.unit

SCIFACT = Path("/work/shared/evaldata/scifact")
P = Bm25Params()  # k1 = 1.2, b = 0.75, title 2, body 1


def tiny() -> Postings:
    units = [
        weighted_terms(["apple"], ["apple", "banana"], P),  # apple 2+1=3, banana 1; |d|=4
        weighted_terms([], ["banana", "cherry"], P),  # banana 1, cherry 1; |d|=2
        weighted_terms(["cherry"], ["date"], P),  # cherry 2, date 1; |d|=3
    ]
    return Postings.build([(list(u), list(u.values())) for u in units])


def as_dict(postings: Postings, query: list[str], mask: list[bool]) -> dict[int, float]:
    positions, scores = postings.scores(query, np.array(mask), P)
    return {int(p): float(s) for p, s in zip(positions, scores, strict=True)}


def test_hand_computed_scores_on_the_whole_corpus() -> None:
    got = as_dict(tiny(), ["apple", "banana"], [True, True, True])
    # N = 3, avgdl = (4 + 2 + 3) / 3 = 3.
    # idf(apple)  = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(2.666667) = 0.980829
    # idf(banana) = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6)      = 0.470004
    # d0: K = 1.2 * (0.25 + 0.75 * 4/3) = 1.5
    #     apple  0.980829 * 3 * 2.2 / (3 + 1.5) = 1.438549
    #     banana 0.470004 * 1 * 2.2 / (1 + 1.5) = 0.413603        -> 1.852152
    # d1: K = 1.2 * (0.25 + 0.75 * 2/3) = 0.9
    #     banana 0.470004 * 2.2 / 1.9 = 0.544215
    assert got.keys() == {0, 1}
    assert got[0] == pytest.approx(1.852152, abs=1e-6)
    assert got[1] == pytest.approx(0.544215, abs=1e-6)
    assert got[0] == pytest.approx(
        math.log(1 + 2.5 / 1.5) * 6.6 / 4.5 + math.log(1.6) * 2.2 / 2.5, rel=1e-12
    )


def test_filters_apply_before_idf_and_avgdl() -> None:
    got = as_dict(tiny(), ["apple", "banana"], [False, True, True])
    # Eligible: d1, d2. N = 2, avgdl = (2 + 3) / 2 = 2.5; apple has df 0 here.
    # idf(banana) = ln(1 + (2 - 1 + 0.5) / 1.5) = ln 2 = 0.693147
    # d1: K = 1.2 * (0.25 + 0.75 * 2 / 2.5) = 1.02 -> 0.693147 * 2.2 / 2.02 = 0.754912
    assert got == {1: pytest.approx(0.754912, abs=1e-6)}


def test_query_terms_are_deduplicated() -> None:
    once = as_dict(tiny(), ["banana"], [True] * 3)
    twice = as_dict(tiny(), ["banana", "banana"], [True] * 3)
    assert once == twice


def test_idf_stays_positive_for_a_term_in_every_unit() -> None:
    postings = Postings.build([(["x"], [1.0]), (["x"], [1.0])])
    _, scores = postings.scores(["x"], np.array([True, True]), P)
    # ln(1 + (2 - 2 + 0.5) / 2.5) = ln 1.2 > 0
    assert (scores > 0).all()
    assert scores[0] == pytest.approx(math.log(1.2))


def test_ties_are_broken_by_unit_id() -> None:
    postings = Postings.build([(["x"], [1.0])] * 4)
    positions, scores = postings.scores(["x"], np.ones(4, bool), P)
    id_rank = np.array([3, 1, 0, 2])  # rank of each unit's id in id order
    assert [p for p, _ in top_k(positions, scores, id_rank, 3)] == [2, 1, 3]


def test_nothing_eligible_scores_nothing() -> None:
    positions, _ = tiny().scores(["apple"], np.zeros(3, bool), P)
    assert positions.size == 0


def _scifact(limit: int) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    a = analyzer()
    titles, bodies = [], []
    with (SCIFACT / "corpus.jsonl").open() as f:
        for line, _ in zip(f, range(limit), strict=False):
            doc = json.loads(line)
            titles.append(list(a.tokenize(doc["title"], "en").terms))
            bodies.append(list(a.tokenize(doc["text"], "en").terms))
    queries = []
    with (SCIFACT / "queries_train.jsonl").open() as f:
        for line, _ in zip(f, range(60), strict=False):
            queries.append(a.query_terms(json.loads(line)["text"], "en"))
    return titles, bodies, queries


def reference_scores(docs: list[list[str]], query: list[str], k1: float, b: float) -> list[float]:
    """A plain-Python reference: one dict per document, no arrays."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    out = []
    for doc in docs:
        score = 0.0
        for term in dict.fromkeys(query):
            tf = doc.count(term)
            if tf:
                df = sum(term in d for d in docs)
                norm = tf + k1 * (1 - b + b * len(doc) / avgdl)
                score += math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf * (k1 + 1) / norm
        out.append(score)
    return out


def test_matches_plain_reference_on_a_scifact_slice_with_a_filter() -> None:
    titles, bodies, queries = _scifact(300)
    docs = [t + t + b for t, b in zip(titles, bodies, strict=True)]  # title weight 2
    units = [weighted_terms(t, b, P) for t, b in zip(titles, bodies, strict=True)]
    postings = Postings.build([(list(u), list(u.values())) for u in units])
    mask = np.array([i % 3 != 0 for i in range(len(docs))])
    eligible_docs = [d for d, m in zip(docs, mask, strict=True) if m]
    eligible_index = np.flatnonzero(mask)
    for query in queries[:15]:
        expected = reference_scores(eligible_docs, query, P.k1, P.b)
        positions, scores = postings.scores(query, mask, P)
        got = dict(zip(positions.tolist(), scores.tolist(), strict=True))
        for j, value in enumerate(expected):
            assert got.get(int(eligible_index[j]), 0.0) == pytest.approx(value, rel=1e-6)


def test_ranking_agrees_with_bm25s_lucene_on_scifact() -> None:
    bm25s = pytest.importorskip("bm25s")
    titles, bodies, queries = _scifact(2000)
    # bm25s "lucene" uses the same idf; its tf part lacks the constant (k1 + 1).
    docs = [t + t + b for t, b in zip(titles, bodies, strict=True)]
    retriever = bm25s.BM25(method="lucene", k1=P.k1, b=P.b)
    retriever.index(docs, show_progress=False)
    units = [weighted_terms(t, b, P) for t, b in zip(titles, bodies, strict=True)]
    postings = Postings.build([(list(u), list(u.values())) for u in units])
    id_rank = np.arange(len(docs))
    mask = np.ones(len(docs), bool)
    agree = 0
    for query in queries:
        theirs = retriever.get_scores(query) * (P.k1 + 1)
        positions, scores = postings.scores(query, mask, P)
        ours = np.zeros(len(docs))
        ours[positions] = scores
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
        top_ours = [p for p, _ in top_k(positions, scores, id_rank, 10)]
        top_theirs = [int(i) for i in np.lexsort((id_rank, -theirs))[:10]]
        agree += top_ours == top_theirs
    assert agree >= len(queries) - 2  # float32 tfs may swap near-ties


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.tuples(
            st.lists(st.sampled_from("abcde"), max_size=3),
            st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8),
        ),
        min_size=1,
        max_size=12,
    ),
    query=st.lists(st.sampled_from("abcdefghz"), min_size=1, max_size=4),
    data=st.data(),
)
def test_property_csr_and_stacked_blocks_equal_the_reference(
    docs: list[tuple[list[str], list[str]]], query: list[str], data: st.DataObject
) -> None:
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(docs), max_size=len(docs))))
    split = data.draw(st.integers(0, len(docs)))
    units = [weighted_terms(t, b, P) for t, b in docs]
    pairs = [(list(u), list(u.values())) for u in units]
    whole = Postings.build(pairs)
    stacked = Postings.build(pairs[:split]).stacked(Postings.build(pairs[split:], offset=split))
    eligible = [t + t + b for (t, b), m in zip(docs, mask, strict=True) if m]
    index = np.flatnonzero(mask)
    expected = reference_scores(eligible, query, P.k1, P.b) if eligible else []
    for postings in (whole, stacked):
        positions, scores = postings.scores(query, mask, P)
        got = dict(zip(positions.tolist(), scores.tolist(), strict=True))
        assert set(got) <= set(index.tolist())
        for j, value in enumerate(expected):
            assert got.get(int(index[j]), 0.0) == pytest.approx(value, rel=1e-6, abs=1e-12)
        assert all(s > 0 for s in got.values())  # positive IDF: a match never lowers a score

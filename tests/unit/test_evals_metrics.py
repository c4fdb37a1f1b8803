"""Metrics against hand computation and properties; gates, baseline diff and reports."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grounded.errors import InvalidInput
from grounded.evals import load_baseline, markdown, write
from grounded.evals.gates import check, diff
from grounded.evals.metrics import AnswerOutcome, answer, percentile, ranking
from grounded.evals.report import build
from grounded.evals.runner import QueryResult
from grounded.evals.suite import Gate

pytestmark = pytest.mark.unit


def test_ranking_metrics_by_hand() -> None:
    found = ranking(["x", "a", "y", "b"], {"a": 1, "b": 1, "c": 1})
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert found["ndcg@10"] == pytest.approx(dcg / idcg)
    assert found["recall@10"] == pytest.approx(2 / 3)
    assert found["mrr@10"] == pytest.approx(0.5)
    assert found["top1"] == 0.0
    assert found["no_relevant"] == 0.0
    assert ranking(["x"], {"a": 1})["no_relevant"] == 1.0


def test_recall_at_100_sees_past_10() -> None:
    ranked = [f"d{i}" for i in range(50)]
    found = ranking(ranked, {"d40": 1})
    assert (found["recall@10"], found["recall@100"], found["mrr@10"]) == (0.0, 1.0, 0.0)


@given(
    st.lists(st.sampled_from("abcdefghijklmnop"), unique=True, max_size=16),
    st.dictionaries(st.sampled_from("abcdefgh"), st.integers(1, 3), min_size=1),
)
def test_metrics_are_bounded_and_a_perfect_ranking_scores_one(
    ranked: list[str], relevant: dict[str, int]
) -> None:
    found = ranking(ranked, relevant)
    assert all(0.0 <= v <= 1.0 + 1e-12 for v in found.values())
    ideal = sorted(relevant, key=lambda d: -relevant[d])
    assert ranking(ideal, relevant)["ndcg@10"] == pytest.approx(1.0)


def test_answer_metrics() -> None:
    said = AnswerOutcome(False, 4, 3, ("a", "z"), "the answer is Paris")
    found = answer(said, {"a": 1}, ["Paris"])
    assert found == {
        "abstention_rate": 0.0,
        "support_rate": 0.75,
        "citation_precision": 0.5,
        "answer_span_hit": 1.0,
    }
    assert answer(AnswerOutcome(True), {"a": 1}, ["Paris"]) == {"abstention_rate": 1.0}


def test_percentile_is_an_observed_value() -> None:
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert percentile([float(i) for i in range(1, 101)], 95) == 95.0


def result(variant: str, ndcg: float, language: str = "en") -> QueryResult:
    scores = {"ndcg@10": ndcg, "no_relevant": 0.0}
    return QueryResult("d", variant, "q", language, "fam", scores, 10.0, None, (), (ndcg,) * 9)


def report(results: list[QueryResult], complete: bool = True) -> dict[str, Any]:
    return build(
        head={"suite": {"name": "t"}, "tier": "fast", "datasets": []},
        results=results,
        variant_order=["hybrid"],
        complete=complete,
        error=None if complete else "query 'q9' failed",
    )


def gate(**kw: Any) -> Gate:
    base: dict[str, Any] = {
        "variant": "hybrid",
        "metric": "ndcg@10",
        "scope": "all",
        "min": 0.5,
        "max_drop": None,
        "tier": None,
        "where": "s.toml:9",
    }
    return Gate(**{**base, **kw})


def test_gate_passes_fails_and_names_its_line() -> None:
    good = report([result("hybrid", 0.8)])
    assert check([gate()], good, "fast")[0]["passed"]
    bad = check([gate()], report([result("hybrid", 0.3)]), "fast")[0]
    assert not bad["passed"]
    assert bad["message"] == ("gate failed: hybrid ndcg@10 (all): 0.300 < 0.5 (minimum) [s.toml:9]")


def test_gate_on_something_not_measured_or_an_incomplete_run_fails() -> None:
    missing = check([gate(variant="dense")], report([result("hybrid", 0.9)]), "fast")[0]
    assert not missing["passed"] and "not measured" in missing["message"]
    partial = check([gate()], report([result("hybrid", 0.9)], complete=False), "fast")[0]
    assert not partial["passed"] and "incomplete" in partial["message"]
    assert check([gate(tier="full")], report([]), "fast") == []


def test_lower_is_better_and_max_drop_against_a_baseline() -> None:
    rising = check(
        [gate(metric="no_relevant", min=0.0)],
        report([result("hybrid", 0.8)]),
        "fast",
    )[0]
    assert rising["passed"]
    before = report([result("hybrid", 0.80)])
    now = report([result("hybrid", 0.75)])
    dropped = check([gate(min=None, max_drop=0.02)], now, "fast", before)[0]
    assert not dropped["passed"] and "fell 0.050 from baseline 0.800" in dropped["message"]
    changes = {(d["scope"], d["metric"]): d["change"] for d in diff(now, before)}
    assert changes[("all", "ndcg@10")] == pytest.approx(-0.05)


def test_reports_per_language_and_incomplete_banner(tmp_path: Path) -> None:
    built = report([result("hybrid", 1.0, "en"), result("hybrid", 0.5, "zh")], complete=False)
    scopes = {(r["scope"], r["ndcg@10"]) for r in built["summary"]}
    assert {("all", 0.75), ("language:en", 1.0), ("language:zh", 0.5)} <= scopes
    text = markdown({**built, "gates": []})
    assert text.startswith("**INCOMPLETE RUN** - query 'q9' failed")
    paths = write({**built, "gates": []}, tmp_path / "out")
    assert [p.name for p in paths] == ["report.json", "report.md", "report.png"]
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(InvalidInput, match="incomplete run"):
        load_baseline(paths[0])
    (tmp_path / "x.json").write_text("{\n oops")
    with pytest.raises(InvalidInput, match=r"x\.json:2: not JSON"):
        load_baseline(tmp_path / "x.json")

"""Properties of RRF and the bounded confidence preference (seed 000 ADR-016, 002 ADR-011)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grounded.errors import InvalidInput
from grounded.retrieve import fusion, preference

pytestmark = pytest.mark.unit

ids = st.lists(st.sampled_from([f"u{i}" for i in range(12)]), unique=True, max_size=12)
weights = st.floats(min_value=0.0, max_value=0.5)
labels = st.sampled_from(["verified", "inferred", "unverified"])


def test_rrf_hand_computed() -> None:
    fused = fusion.rrf([["a", "b"], ["b", "c"]])
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 62)


@given(ids, ids)
def test_rrf_missing_list_contributes_zero_and_is_symmetric(a: list[str], b: list[str]) -> None:
    fused = fusion.rrf([a, b])
    assert fused == fusion.rrf([b, a])
    for item, score in fused.items():
        expected = sum(1 / (60 + lst.index(item) + 1) for lst in (a, b) if item in lst)
        assert score == pytest.approx(expected)


@given(ids)
def test_rrf_is_monotone_in_rank(a: list[str]) -> None:
    fused = fusion.rrf([a])
    scores = [fused[i] for i in a]
    assert scores == sorted(scores, reverse=True)


def _ranked(scores: dict[str, float], label_of: dict[str, str]) -> list[preference.Ranked]:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        preference.Ranked(uid, b, label_of[uid], base + timedelta(seconds=i))  # type: ignore[arg-type]
        for i, (uid, b) in enumerate(sorted(scores.items()))
    ]


@given(ids, ids, st.data())
def test_zero_weight_is_plain_rrf_order(a: list[str], b: list[str], data: st.DataObject) -> None:
    fused = fusion.rrf([a, b])
    label_of = {u: data.draw(labels) for u in fused}
    ordered = preference.order(_ranked(fused, label_of), 0.0)
    plain = sorted(
        fused,
        key=lambda u: (-fused[u], _ranked(fused, label_of)[sorted(fused).index(u)].created_at, u),
    )
    assert [r.unit_id for r in ordered] == plain


@given(st.floats(min_value=0, max_value=1), labels, weights)
def test_final_score_is_bounded(b: float, label: str, w: float) -> None:
    final = preference.final_score(b, label, w)  # type: ignore[arg-type]
    assert b * 0.5 - 1e-12 <= final <= b * 1.5 + 1e-12
    if label == "inferred" or w == 0:
        assert final == pytest.approx(b)
    if b == 0:
        assert final == 0


@given(weights, st.floats(min_value=1e-6, max_value=1), st.floats(min_value=1e-6, max_value=1))
def test_preference_is_monotone_in_relevance(w: float, b1: float, b2: float) -> None:
    for label in ("verified", "inferred", "unverified"):
        if b1 <= b2:
            assert preference.final_score(b1, label, w) <= preference.final_score(b2, label, w)  # type: ignore[arg-type]


def test_ties_break_by_created_then_id() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    items = [
        preference.Ranked("b", 0.5, "inferred", t),
        preference.Ranked("a", 0.5, "inferred", t),
        preference.Ranked("c", 0.5, "inferred", t - timedelta(days=1)),
    ]
    assert [r.unit_id for r in preference.order(items, 0.3)] == ["c", "a", "b"]


def test_min_relevance_applies_to_final_score() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    items = [
        preference.Ranked("v", 0.010, "verified", t),
        preference.Ranked("u", 0.012, "unverified", t),
    ]
    kept = preference.order(items, 0.5, min_relevance=0.011)
    assert [r.unit_id for r in kept] == ["v"]  # 0.015 kept; 0.006 cut


@pytest.mark.parametrize("w", [-0.1, 0.51, float("nan"), float("inf")])
def test_weights_outside_bounds_are_refused(w: float) -> None:
    with pytest.raises(InvalidInput):
        preference.check_weight(w)

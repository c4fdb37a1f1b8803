"""Confidence rules (seed 000 ADR-016) and the review state machine, as properties."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grounded.errors import Conflict, InvalidInput
from grounded.knowledge import confidence, review

pytestmark = pytest.mark.unit

labels = st.sampled_from(confidence.LABELS)
stored = st.one_of(st.none(), st.just(""), labels, st.text(max_size=12))
RANK = {"unverified": 0, "inferred": 1, "verified": 2}


@given(st.text(max_size=20))
def test_inputs_accept_exactly_three_labels(value: str) -> None:
    if value in confidence.LABELS:
        assert confidence.parse_input(value) == value
    else:
        with pytest.raises(InvalidInput):
            confidence.parse_input(value)


def test_omitted_input_is_none() -> None:
    assert confidence.parse_input(None) is None


@given(stored)
def test_effective_label_of_stored_values(value: str | None) -> None:
    label = confidence.effective(value)
    if value in (None, ""):
        assert label == "inferred"
    elif value in confidence.LABELS:
        assert label == value
    else:
        assert label == "unverified"


@given(st.lists(stored, max_size=6))
def test_derived_label_never_exceeds_inferred_or_weakest_input(inputs: list[str | None]) -> None:
    label = confidence.derived(None, inputs)
    assert RANK[label] <= RANK["inferred"]
    for value in inputs:
        assert RANK[label] <= RANK[confidence.effective(value)]
    # and it is exactly the minimum
    expected = min(["inferred", *(confidence.effective(v) for v in inputs)], key=RANK.get)
    assert label == expected


@given(labels, st.lists(stored, max_size=6))
def test_explicit_label_overrides_derivation(
    explicit: confidence.Label, inputs: list[str | None]
) -> None:
    assert confidence.derived(explicit, inputs) == explicit


def test_preference_signs() -> None:
    assert confidence.SIGN == {"verified": 1, "inferred": 0, "unverified": -1}


states = st.sampled_from(review.STATES)
actions = st.sampled_from(review.ACTIONS)
maybe_text = st.one_of(st.none(), st.just(""), st.just("  "), st.text(min_size=1, max_size=10))


@given(states, actions, maybe_text, maybe_text, st.booleans())
def test_review_transitions(
    state: review.State, action: review.Action, note: str | None, link: str | None, has_time: bool
) -> None:
    decision = review.ReviewInput(
        action=action,
        note=note,
        source_link=link,
        captured_at=datetime.now(UTC) if has_time else None,
    )
    allowed = {
        ("draft", "submit"),
        ("rejected", "submit"),
        ("pending", "verify"),
        ("pending", "reject"),
    }
    if (state, action) not in allowed:
        with pytest.raises(Conflict):
            review.next_state(state, decision)
        return
    complete = bool(note and note.strip()) and bool(link and link.strip()) and has_time
    if (action == "verify" and not complete) or (
        action == "reject" and not (note and note.strip())
    ):
        with pytest.raises(InvalidInput):
            review.next_state(state, decision)
    else:
        target = review.next_state(state, decision)
        assert target == {"submit": "pending", "verify": "verified", "reject": "rejected"}[action]


@given(states)
def test_content_change_returns_to_review(state: review.State) -> None:
    assert review.after_content_change(state) == ("draft" if state == "draft" else "pending")

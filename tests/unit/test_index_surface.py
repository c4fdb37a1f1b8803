"""The index package's public surface is deliberate (and lazily importable)."""

from __future__ import annotations

import pytest

import grounded.index
from grounded.errors import InvalidInput
from grounded.index.eligibility import EligibilitySpec

pytestmark = pytest.mark.unit


def test_public_names_are_exactly_these() -> None:
    assert sorted(grounded.index.__all__) == [
        "BuildReport",
        "Builder",
        "Candidate",
        "Candidates",
        "EligibilitySpec",
        "IndexReader",
        "IndexSettings",
        "IndexStatus",
        "PassageEmbedder",
        "Snapshot",
        "SnapshotInfo",
        "publish",
        "rebuild",
        "refresh",
        "rollback",
        "status",
    ]
    for name in grounded.index.__all__:
        assert getattr(grounded.index, name) is not None
    with pytest.raises(AttributeError):
        grounded.index.nothing  # noqa: B018


def test_unknown_filter_values_are_refused() -> None:
    with pytest.raises(InvalidInput):
        EligibilitySpec(review_states=frozenset({"approved"}))
    with pytest.raises(InvalidInput):
        EligibilitySpec(confidence=frozenset({"certain"}))
    assert EligibilitySpec(confidence=frozenset({"verified"})).as_dict()["confidence"] == [
        "verified"
    ]

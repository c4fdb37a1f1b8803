"""The frozen confidence fixtures (seed 000 ADR-016) and the calibration gates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from grounded.errors import InvalidInput
from grounded.evals.calibration import gate, load_fixtures

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[2] / "evals" / "confidence-fixtures.json"


def test_frozen_fixtures_have_the_shape_the_adr_requires() -> None:
    fixtures = load_fixtures(FIXTURES)
    assert fixtures.weights == (0.1, 0.2, 0.3, 0.4, 0.5)
    families = {(c.split, c.family) for c in fixtures.cases}
    calibration = {f for s, f in families if s == "calibration"}
    validation = {f for s, f in families if s == "validation"}
    assert len(calibration) == len(validation) == 12
    assert not calibration & validation
    for split in ("calibration", "validation"):
        cases = [c for c in fixtures.cases if c.split == split]
        assert {c.language for c in cases} == {"en", "es"}
        protected = [c for c in cases if c.protected]
        assert protected, split
        labels = {ref: label for ref, label, _ in fixtures.items}
        # a protected case's only relevant item is unverified or inferred
        assert all(
            len(c.relevant) == 1 and labels[next(iter(c.relevant))] != "verified" for c in protected
        )


def test_a_fixture_file_with_a_missing_family_is_refused(tmp_path: Path) -> None:
    doc = json.loads(FIXTURES.read_text())
    doc["families"] = doc["families"][1:]
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInput, match="12 calibration and 12 validation"):
        load_fixtures(path)


def row(case: str, rank: int | None, protected: bool = False) -> dict[str, Any]:
    return {
        "case": case,
        "protected": protected,
        "rank": rank,
        "top1": 1.0 if rank == 1 else 0.0,
        "recall@3": 1.0 if rank is not None and rank <= 3 else 0.0,
        "no_relevant": 1.0 if rank is None else 0.0,
    }


GATES = {
    "protected_kept_at": 3,
    "min_preference_top1": 0.8,
    "no_top1_loss_vs_zero": True,
    "no_recall_loss_vs_zero": True,
}


def test_gate_blocks_a_weight_that_loses_a_protected_answer() -> None:
    zero = [row("a", 2), row("b", 1), row("p", 1, protected=True)]
    helped = [row("a", 1), row("b", 1), row("p", 2, protected=True)]
    assert gate(helped, zero, GATES) == []
    pushed = [row("a", 1), row("b", 1), row("p", 4, protected=True)]
    reasons = gate(pushed, zero, GATES)
    assert any("protected cases lost their only answer from the top 3: ['p']" in r for r in reasons)

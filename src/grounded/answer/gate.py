"""Is the question answerable from this evidence at all? The offline abstention gate.

An extractive answer always "verifies" (its sentences are the evidence), so
without a generative model the honest test is whether the evidence is about
what was asked: the best section must hold the names, codes and titles the
question is about (anchors) and a calibrated share of its content terms.
Chinese is compared by character bigrams, the unit the question and the
passage share when they say the same thing. A heuristic, labelled as such in
every answer it decides; thresholds are measured in bench/answer_quality.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from grounded.answer.context import Evidence
from grounded.answer.text import anchors, terms


@dataclass(frozen=True)
class Coverage:
    share: float
    section: int | None
    missing_anchors: tuple[str, ...]
    missing_terms: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "share": round(self.share, 4),
            "section": self.section,
            "missing_anchors": list(self.missing_anchors),
            "missing_terms": list(self.missing_terms),
        }


def key_terms(text: str) -> set[str]:
    """Content terms without single Chinese characters (too common to mean anything alone)."""
    found = terms(text)
    return {t for t in found if len(t) > 1 or t.isascii()}


def coverage(question: str, evidence: tuple[Evidence, ...]) -> Coverage:
    wanted = key_terms(question)
    needed = anchors(question)
    if not evidence:
        return Coverage(0.0, None, tuple(needed), tuple(sorted(wanted)))
    best: tuple[float, int, set[str], list[str]] | None = None
    for item in evidence:
        have = key_terms(item.text)
        lowered = item.text.lower()
        missing = [a for a in needed if a.lower() not in lowered]
        share = len(wanted & have) / len(wanted) if wanted else 0.0
        score = share - len(missing)
        if best is None or score > best[0] - len(best[3]):
            best = (share, item.number, wanted - have, missing)
    assert best is not None
    return Coverage(best[0], best[1], tuple(best[3]), tuple(sorted(best[2])))


def refusal(cov: Coverage, min_coverage: float) -> str | None:
    """Why the evidence cannot answer the question, or None when it may."""
    if cov.section is None:
        return "no eligible evidence was found for the question"
    if cov.missing_anchors:
        return "the documents found do not mention " + ", ".join(
            f"'{a}'" for a in cov.missing_anchors[:5]
        )
    if cov.share < min_coverage:
        missing = ", ".join(f"'{t}'" for t in cov.missing_terms[:6])
        return (
            f"the closest section covers {cov.share:.0%} of the question's terms "
            f"(at least {min_coverage:.0%} needed); not found: {missing}"
        )
    return None

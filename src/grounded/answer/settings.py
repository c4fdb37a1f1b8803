"""Answer settings, nested under ``answer`` (env ``GROUNDED_ANSWER__...``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AnswerSettings(BaseModel):
    """Context budget, evidence count, retry and the offline abstention gate."""

    model_config = ConfigDict(extra="forbid")

    evidence_k: int = Field(
        default=6, ge=1, le=20, description="Sections retrieved as evidence for one answer."
    )
    context_budget_chars: int = Field(
        default=12_000,
        ge=500,
        le=200_000,
        description="Characters of evidence one prompt may carry. A section that does not fit "
        "is left out whole with the reason recorded, never cut (seed 002 ADR-012).",
    )
    retry: bool = Field(
        default=True,
        description="On a failed verification, retrieve once more with a rewritten question "
        "before abstaining (seed 001 ADR-007).",
    )
    min_coverage: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Offline abstention gate: share of the question's content terms the best "
        "evidence section must contain before an extractive answer is attempted "
        "(calibrated in bench/answer_quality.py).",
    )
    max_output_tokens: int = Field(
        default=600, ge=16, le=8192, description="Output cap of a generated answer."
    )
    confidence_weight: float = Field(
        default=0.0,
        ge=0,
        le=0.5,
        description="Bounded preference for verified evidence used by answers (seed 000).",
    )

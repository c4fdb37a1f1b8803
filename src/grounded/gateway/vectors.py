"""Never mix vectors (seed 002 ADR-003).

A cosine between vectors of two embedding models is a number with no meaning,
and nothing about it looks wrong. So every comparison goes through here, and
two spaces that differ in model id or dimension raise ``EmbeddingMismatch``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grounded.errors import EmbeddingMismatch
from grounded.gateway.types import Embeddings


@dataclass(frozen=True)
class EmbeddingSpace:
    """The identity of a vector space: which model made it, and how wide it is."""

    model: str
    dim: int

    @classmethod
    def of(cls, embeddings: Embeddings) -> EmbeddingSpace:
        return cls(embeddings.model, embeddings.dim)


def require_same_space(a: EmbeddingSpace, b: EmbeddingSpace) -> None:
    """Raise ``EmbeddingMismatch`` unless ``a`` and ``b`` are the same space."""
    if a != b:
        raise EmbeddingMismatch(
            f"cannot compare vectors of {a.model} ({a.dim}-d) with {b.model} ({b.dim}-d); "
            "re-embed one side with the other's model",
            details={"left": [a.model, a.dim], "right": [b.model, b.dim]},
        )


def similarities(queries: Embeddings, passages: Embeddings) -> npt.NDArray[np.float32]:
    """Cosine matrix (queries x passages) of unit vectors from one space."""
    require_same_space(EmbeddingSpace.of(queries), EmbeddingSpace.of(passages))
    result: npt.NDArray[np.float32] = queries.vectors @ passages.vectors.T
    return result

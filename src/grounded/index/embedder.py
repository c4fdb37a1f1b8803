"""The one thing the index needs from a model: passage and query vectors.

A small Protocol, so the index depends on a shape rather than on the gateway's
internals; ``GatewayEmbedder`` adapts the model gateway's ``embed`` task.
Vectors must be unit length (cosine = dot product) and ``model_id``/``dim``
name their space: a snapshot never mixes two spaces (seed 002 ADR-003).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class PassageEmbedder(Protocol):
    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_passages(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


def normalise(vectors: Vectors) -> Vectors:
    """Unit length rows (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.asarray(vectors / np.where(norms == 0, 1, norms), dtype=np.float32)

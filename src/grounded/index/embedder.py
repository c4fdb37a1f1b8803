"""The one thing the index needs from a model: passage and query vectors.

A small Protocol, so the index depends on a shape rather than on the gateway's
internals; ``GatewayEmbedder`` adapts the model gateway's ``embed`` task.
Vectors must be unit length (cosine = dot product) and ``model_id``/``dim``
name their space: a snapshot never mixes two spaces (seed 002 ADR-003).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from grounded.auth.principal import Principal
    from grounded.gateway import Gateway

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


class GatewayEmbedder:
    """``PassageEmbedder`` over the model gateway's ``embed`` task.

    The space (model id, dimension) is learnt from one probe call, or pinned
    with ``require_model`` (the live snapshot's model) so that a gateway
    fallback to another model fails loudly instead of mixing vectors.
    """

    def __init__(
        self, gateway: Gateway, principal: Principal, *, require_model: str | None = None
    ) -> None:
        self._gateway = gateway
        self._principal = principal
        probe = gateway.embed(
            principal, ["dimension probe"], "passage", require_model=require_model
        )
        self._model = probe.model
        self._dim = probe.dim

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        got = self._gateway.embed(self._principal, texts, "passage", require_model=self._model)
        return np.asarray(got.vectors, dtype=np.float32)

    def embed_query(self, text: str) -> Vectors:
        got = self._gateway.embed(self._principal, [text], "query", require_model=self._model)
        return np.asarray(got.vectors[0], dtype=np.float32)

"""The contract every provider meets, and the default "not served here" answers.

A provider does one call and reports exactly what happened: a value with the
model that made it, a ``ModelUnavailable`` for transient trouble, or a
``ModelError`` for anything else. Retries, batching, fallback, caching,
budgets, redaction and the ledger live once, in ``Gateway``; never here.
"""

from __future__ import annotations

from typing import NoReturn

from grounded.errors import ModelError
from grounded.gateway.contracts import OcrResult, Transcript
from grounded.gateway.types import (
    AudioRequest,
    DescribeRequest,
    Embeddings,
    EmbedRequest,
    EnrichRequest,
    GenerateRequest,
    Generation,
    ImageRequest,
    Ranking,
    Reply,
    RerankRequest,
    SqlDraft,
    SqlRequest,
    Verdict,
    VerifyRequest,
)


class Provider:
    """Base class: a provider overrides the tasks it serves."""

    name: str
    egress: bool = False
    """True when requests leave the process (redaction applies, budgets meter it)."""
    max_batch: int = 64
    embed_dim: int | None = None
    """Width of this provider's vectors when known before a call (for empty inputs)."""

    def tasks(self) -> frozenset[str]:
        raise NotImplementedError

    def model_for(self, task: str) -> str:
        """The model id a task would use, known before calling (for cache keys)."""
        raise NotImplementedError

    def price(self, tokens_in: int, tokens_out: int) -> float:
        return 0.0

    def close(self) -> None:
        """Release connections; the default holds none."""

    def _unsupported(self, task: str) -> NoReturn:
        raise ModelError(f"provider {self.name!r} does not serve {task!r}", provider=self.name)

    def embed(self, request: EmbedRequest) -> Reply[Embeddings]:
        self._unsupported("embed")

    def rerank(self, request: RerankRequest) -> Reply[Ranking]:
        self._unsupported("rerank")

    def generate(self, request: GenerateRequest) -> Reply[Generation]:
        self._unsupported("generate")

    def verify(self, request: VerifyRequest) -> Reply[Verdict]:
        self._unsupported("verify")

    def enrich(self, request: EnrichRequest) -> Reply[str]:
        self._unsupported("enrich")

    def describe(self, request: DescribeRequest) -> Reply[str]:
        self._unsupported("describe")

    def sql(self, request: SqlRequest) -> Reply[SqlDraft]:
        self._unsupported("sql")

    def ocr(self, request: ImageRequest) -> Reply[OcrResult]:
        self._unsupported("ocr")

    def transcribe(self, request: AudioRequest) -> Reply[Transcript]:
        self._unsupported("transcribe")

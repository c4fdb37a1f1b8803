"""The gateway seen through the small Protocols in ``contracts`` (for ingestion).

Extractors depend on ``OcrEngine``, ``Transcriber`` and ``Describer``, never on
the gateway; these adapters bind a principal so every call still goes through
routing, cache, budget and ledger for the right tenant.
"""

from __future__ import annotations

from dataclasses import dataclass

from grounded.auth.principal import Principal
from grounded.gateway.contracts import OcrResult, Transcript
from grounded.gateway.service import Gateway
from grounded.gateway.types import DescribeRequest


@dataclass(frozen=True)
class GatewayOcr:
    gateway: Gateway
    principal: Principal

    def ocr(self, image: bytes) -> OcrResult:
        return self.gateway.ocr(self.principal, image).value


@dataclass(frozen=True)
class GatewayTranscriber:
    gateway: Gateway
    principal: Principal

    def transcribe(self, audio: bytes, language: str | None = None) -> Transcript:
        return self.gateway.transcribe(self.principal, audio, language).value


@dataclass(frozen=True)
class GatewayDescriber:
    gateway: Gateway
    principal: Principal

    def describe(self, image: bytes, ocr_text: str, caption: str | None) -> str:
        request = DescribeRequest(image=image, ocr_text=ocr_text, caption=caption)
        return self.gateway.describe(self.principal, request).value

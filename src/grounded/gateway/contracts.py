"""Shapes that cross the gateway boundary, shared by the write and read paths.

Kept apart from the providers so that callers (ingest extractors, retrieval)
depend on these small types and Protocols, never on a provider module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class OcrLine:
    """One recognised line; bbox is (x0, y0, x1, y1) in pixels of the given image."""

    text: str
    bbox: tuple[float, float, float, float]
    score: float


@dataclass(frozen=True)
class OcrResult:
    lines: tuple[OcrLine, ...]
    provider: str
    model: str


@dataclass(frozen=True)
class TranscriptSegment:
    """A stretch of speech; times in seconds from the start of the recording."""

    start_s: float
    end_s: float
    text: str


@dataclass(frozen=True)
class Transcript:
    segments: tuple[TranscriptSegment, ...]
    language: str | None
    provider: str
    model: str


class OcrEngine(Protocol):
    """Recognise text in one image (PNG/JPEG/... bytes)."""

    def ocr(self, image: bytes) -> OcrResult: ...


class Transcriber(Protocol):
    """Transcribe one audio file (WAV/MP3/... bytes). ``language`` is a hint."""

    def transcribe(self, audio: bytes, language: str | None = None) -> Transcript: ...


class Describer(Protocol):
    """A short description of an image, for retrieval (seed 001 ADR-002)."""

    def describe(self, image: bytes, ocr_text: str, caption: str | None) -> str: ...

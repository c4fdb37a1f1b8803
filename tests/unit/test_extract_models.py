"""Extraction with real local models: OCR (rapidocr), description, speech (whisper).

The engines are small adapters over ``grounded.gateway.local_models`` that
implement the contracts' Protocols, the same shapes the gateway adapters
give the worker. Models load once per module; the scanned page is OCR'd once.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest

from grounded.gateway.contracts import OcrResult, Transcript
from grounded.ingest import Engines, ExtractedDocument, chunk_document, extract

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"


class LocalOcr:
    def ocr(self, image: bytes) -> OcrResult:
        from grounded.gateway import local_models

        return local_models.ocr(image, threads=2)


class LocalDescriber:
    def describe(self, image: bytes, ocr_text: str, caption: str | None) -> str:
        from grounded.gateway import fallbacks
        from grounded.gateway.types import DescribeRequest

        return fallbacks.describe(DescribeRequest(image=image, ocr_text=ocr_text, caption=caption))


class LocalTranscriber:
    def transcribe(self, audio: bytes, language: str | None = None) -> Transcript:
        from grounded.gateway import local_models

        return local_models.transcribe(audio, language, threads=2)


@pytest.fixture(scope="module")
def engines() -> Engines:
    pytest.importorskip("rapidocr", reason="rapidocr (the local OCR model) is not installed")
    return Engines(ocr=LocalOcr(), describer=LocalDescriber(), transcriber=LocalTranscriber())


@pytest.fixture(scope="module")
def scanned(engines: Engines) -> tuple[ExtractedDocument, str]:
    """Page 1 of the Vicksburg scan as an image-only PDF, OCR'd; plus its original text layer."""
    import pypdfium2 as pdfium

    source = pdfium.PdfDocument((DOCS / "Seige_of_Vicksburg_Sample_OCR.pdf").read_bytes())
    page = source[0]
    layer = page.get_textpage().get_text_range()
    buffer = io.BytesIO()
    page.render(scale=1).to_pil().save(buffer, format="PDF")
    return extract(buffer.getvalue(), "scan.pdf", engines=engines), layer


def _words(text: str) -> set[str]:
    return {w.strip(".,;:!?—-").lower() for w in text.split() if len(w) > 3}


def test_scanned_page_yields_its_known_text_through_ocr(
    scanned: tuple[ExtractedDocument, str],
) -> None:
    document, layer = scanned
    assert document.warnings == ()
    text = " ".join(document.text.split())
    assert "SIEGE OF VICKSBURG" in text
    assert "Johnston is coming with fifty" in text
    # Most words of the publisher's own OCR layer are found again by ours.
    expected = _words(layer)
    assert len(expected & _words(text)) >= 0.8 * len(expected)


def test_ocr_chunks_point_at_the_page_and_a_box_in_points(
    scanned: tuple[ExtractedDocument, str],
) -> None:
    document, _ = scanned
    chunks = chunk_document(document)
    hit = next(c for c in chunks if c.role == "child" and "Johnston" in c.text)
    assert hit.provenance.page == 1 and hit.provenance.part == "ocr"
    bbox = hit.provenance.bbox
    assert bbox is not None and 0 <= bbox[0] < bbox[2] <= 432 and 0 <= bbox[1] < bbox[3] <= 648
    assert hit.language == "en"


def test_image_gets_ocr_text_and_a_description(engines: Engines) -> None:
    document = extract((DOCS / "monty-truth.png").read_bytes(), "monty-truth.png", engines=engines)
    (asset,) = document.assets
    assert "TRUTH" in asset.ocr_text
    assert "TRUTH" in asset.description
    (block,) = document.sections[0].blocks
    assert block.modality == "image" and block.asset_index == 0
    chunks = chunk_document(document)
    assert any(c.modality == "image" and "TRUTH" in c.text for c in chunks)


needs_speech = pytest.mark.skipif(
    shutil.which("espeak-ng") is None, reason="espeak-ng is not installed to synthesise speech"
)


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    pytest.importorskip("faster_whisper", reason="faster-whisper (local speech model) missing")
    path = tmp_path_factory.mktemp("audio") / "speech.wav"
    subprocess.run(
        ["espeak-ng", "-w", str(path), "The lazy dog sleeps. Answers come from your documents."],
        check=True,
        timeout=60,
    )
    return path.read_bytes()


@needs_speech
def test_audio_transcript_has_time_ranges(engines: Engines, speech: bytes) -> None:
    document = extract(speech, "memo.wav", engines=engines)
    assert document.mime_type == "audio/wav" and document.assets[0].media_type == "audio/wav"
    assert "documents" in document.text.lower()
    chunks = chunk_document(document)
    child = next(c for c in chunks if c.role == "child")
    assert child.modality == "audio"
    assert child.provenance.start_s == 0.0
    assert child.provenance.end_s is not None and child.provenance.end_s > 1.0


@needs_speech
def test_audio_in_a_language_no_model_covers_says_so(engines: Engines, speech: bytes) -> None:
    document = extract(speech, "memo.wav", engines=engines, language_hint="zh")
    assert document.sections == ()
    assert any("English only" in w for w in document.warnings)
    assert len(document.assets) == 1


def test_office_pictures_are_read_once_and_found_on_each_slide(engines: Engines) -> None:
    data = (DOCS / "shp-picture.pptx").read_bytes()
    document = extract(data, "shp-picture.pptx", engines=engines)
    assert len(document.assets) == 2
    assert {a.ocr_text.split()[0] for a in document.assets} == {"python", "TRUTH"}
    images = [b for s in document.sections for b in s.blocks if b.modality == "image"]
    assert len(images) == 4 and all(b.provenance.slide is not None for b in images)


def test_docx_images_become_searchable_image_chunks(engines: Engines) -> None:
    data = (DOCS / "having-images.docx").read_bytes()
    document = extract(data, "having-images.docx", engines=engines)
    chunks = chunk_document(document)
    hit = next(c for c in chunks if c.role == "child" and "LAWYER" in c.text)
    assert hit.modality == "image" and hit.asset_index is not None
    assert document.assets[hit.asset_index].provenance.part == hit.provenance.part

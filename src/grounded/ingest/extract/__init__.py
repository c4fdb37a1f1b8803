"""One entry point over the per-modality extractors: ``extract(data, filename)``.

Detection decides the extractor from content (``detect``), never from the
name alone; OOXML containers pass the zip and XML guards before any library
opens them; the model engines (OCR, description, transcription) are passed in
by the caller and may be ``None``, in which case the result carries a warning
instead of made-up text. Every failure a user can cause is an
``ExtractionError`` with a stable ``reason``; anything else escaping from a
parser is wrapped as ``corrupt`` so a worker never dies on a bad file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from grounded.errors import ExtractionError, GroundedError
from grounded.gateway.contracts import Describer, OcrEngine, Transcriber
from grounded.ingest.detect import detect
from grounded.ingest.extract.pdf import PdfOptions
from grounded.ingest.language import detect_language
from grounded.ingest.limits import DEFAULT_LIMITS, ExtractionLimits
from grounded.ingest.records import ExtractedDocument
from grounded.ingest.safety import check_xml_parts, check_zip

__all__ = ["Engines", "extract"]


@dataclass(frozen=True)
class Engines:
    """The gateway's engines an extractor may call; any of them may be absent."""

    ocr: OcrEngine | None = None
    describer: Describer | None = None
    transcriber: Transcriber | None = None


def _dispatch(
    kind: str,
    mime: str,
    data: bytes,
    filename: str | None,
    engines: Engines,
    limits: ExtractionLimits,
    pdf: PdfOptions | None,
    language_hint: str | None,
) -> ExtractedDocument:
    if kind in ("docx", "pptx", "xlsx"):
        archive = check_zip(data, limits)
        check_xml_parts(archive, limits)
    if kind == "pdf":
        from grounded.ingest.extract.pdf import extract_pdf

        return extract_pdf(data, limits=limits, ocr=engines.ocr, options=pdf)
    if kind == "text":
        from grounded.ingest.extract.text import extract_text

        return extract_text(data, filename)
    if kind == "markdown":
        from grounded.ingest.extract.text import extract_markdown

        return extract_markdown(data)
    if kind == "html":
        from grounded.ingest.extract.html import extract_html

        return extract_html(data)
    if kind == "csv":
        from grounded.ingest.extract.sheets import extract_csv

        return extract_csv(data, limits=limits)
    if kind == "xlsx":
        from grounded.ingest.extract.sheets import extract_xlsx

        return extract_xlsx(data, limits=limits)
    if kind == "docx":
        from grounded.ingest.extract.docx import extract_docx

        return extract_docx(data, limits=limits, ocr=engines.ocr, describer=engines.describer)
    if kind == "pptx":
        from grounded.ingest.extract.pptx import extract_pptx

        return extract_pptx(data, limits=limits, ocr=engines.ocr, describer=engines.describer)
    if kind == "image":
        from grounded.ingest.extract.image import extract_image

        return extract_image(data, limits=limits, ocr=engines.ocr, describer=engines.describer)
    if kind == "audio":
        from grounded.ingest.extract.audio import extract_audio

        return extract_audio(
            data, transcriber=engines.transcriber, language=language_hint, media_type=mime
        )
    raise ExtractionError(f"no extractor for {kind}", reason="unsupported_type")


def extract(
    data: bytes,
    filename: str | None = None,
    *,
    engines: Engines | None = None,
    limits: ExtractionLimits = DEFAULT_LIMITS,
    pdf: PdfOptions | None = None,
    language_hint: str | None = None,
) -> ExtractedDocument:
    """Detect, guard and extract one file into an ``ExtractedDocument``.

    ``filename`` is only a hint (and a source of a warning when it disagrees
    with the content). Raises ``ExtractionError`` with a reason a person
    understands; never lets a parser's own exception escape.
    """
    detected = detect(data, filename, limits=limits)
    try:
        document = _dispatch(
            detected.kind,
            detected.mime_type,
            data,
            filename,
            engines or Engines(),
            limits,
            pdf,
            language_hint,
        )
    except GroundedError:
        raise
    except (MemoryError, RecursionError) as exc:
        raise ExtractionError(
            "the document is too complex to read within this worker's limits",
            reason="too_large",
        ) from exc
    except Exception as exc:  # a parser's own failure on a damaged file
        raise ExtractionError(
            f"the {detected.kind.upper()} file could not be read ({type(exc).__name__}); "
            "it is probably damaged or truncated: re-save it and upload it again",
            reason="corrupt",
            details={"exception": type(exc).__name__},
        ) from exc
    warnings = document.warnings
    if detected.warning:
        warnings = (detected.warning, *warnings)
    language = document.language or detect_language(document.text[:5000])
    return replace(document, mime_type=detected.mime_type, warnings=warnings, language=language)

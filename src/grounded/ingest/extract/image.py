"""Images: OCR text plus a description, both from engines the caller passes in.

Seed 001 ADR-002: an image is findable through a generated description plus
any OCR text, embedded as text; the picture itself is kept as an ``Asset``
(for the image-vector channel and for display). The header's dimensions are
checked against the pixel budget before anything decodes the pixels, and
Pillow's own decompression-bomb guard stays on underneath.

``describe_image`` is shared with DOCX and PPTX, whose embedded pictures get
the same treatment as uploaded ones.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

from grounded.errors import ExtractionError, ModelError
from grounded.gateway.contracts import Describer, OcrEngine
from grounded.ingest.limits import ExtractionLimits
from grounded.ingest.records import Asset, Block, ExtractedDocument, Provenance, Section
from grounded.ingest.safety import check_image_header

_MEDIA = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
    "TIFF": "image/tiff",
    "BMP": "image/bmp",
}


def describe_image(
    content: bytes,
    provenance: Provenance,
    *,
    limits: ExtractionLimits,
    ocr: OcrEngine | None,
    describer: Describer | None,
    caption: str | None = None,
    asset_index: int = 0,
) -> tuple[Asset, Block | None, list[str]]:
    """(asset, text block or None, warnings) for one image.

    Raises ``ExtractionError`` (``image_too_large`` / ``corrupt``) from the
    header check. A model failure is a warning: the image stays an asset and
    the rest of the document is still indexed.
    """
    fmt, width, height = check_image_header(content, limits)
    warnings: list[str] = []
    ocr_text = ""
    description = ""
    if ocr is not None:
        try:
            result = ocr.ocr(content)
            ocr_text = "\n".join(line.text for line in result.lines if line.text.strip())
        except ModelError as exc:
            warnings.append(f"OCR failed on an image ({exc.message}); its text is missing")
    if describer is not None:
        try:
            description = describer.describe(content, ocr_text, caption).strip()
        except ModelError as exc:
            warnings.append(f"describing an image failed ({exc.message})")
    asset = Asset(
        kind="image",
        media_type=_MEDIA.get(fmt, "application/octet-stream"),
        sha256=hashlib.sha256(content).hexdigest(),
        size=len(content),
        provenance=provenance,
        width=width,
        height=height,
        ocr_text=ocr_text,
        description=description,
        content=content,
    )
    flat = " ".join(ocr_text.split())
    parts = [p for p in (caption, description) if p]
    if ocr_text and flat not in " ".join(description.split()):
        parts.append(ocr_text)  # a description that already quotes the text need not repeat it
    block = None
    if parts:
        block = Block("\n\n".join(parts), "image", provenance, asset_index=asset_index)
    return asset, block, warnings


class ImageCollector:
    """Embedded pictures of one document: each distinct image is read once.

    Office files repeat the same picture (a logo on every slide); the models run
    once per distinct image (by sha256) and the asset is stored once, while each
    occurrence still gets its own block with its own provenance (slide, part).
    """

    def __init__(
        self, limits: ExtractionLimits, ocr: OcrEngine | None, describer: Describer | None
    ) -> None:
        self.limits, self.ocr, self.describer = limits, ocr, describer
        self.assets: list[Asset] = []
        self.warnings: list[str] = []
        self._seen: dict[str, Block | None] = {}

    def add(
        self, content: bytes, provenance: Provenance, caption: str | None = None
    ) -> Block | None:
        """The occurrence's image block (or None when no engine found anything)."""
        key = hashlib.sha256(content).hexdigest() + "\0" + (caption or "")
        if key in self._seen:
            block = self._seen[key]
            return None if block is None else replace(block, provenance=provenance)
        asset, block, notes = describe_image(
            content,
            provenance,
            limits=self.limits,
            ocr=self.ocr,
            describer=self.describer,
            caption=caption,
            asset_index=len(self.assets),
        )
        self._seen[key] = block
        self.assets.append(asset)
        self.warnings.extend(notes)
        return block


def extract_image(
    data: bytes,
    *,
    limits: ExtractionLimits,
    ocr: OcrEngine | None,
    describer: Describer | None,
) -> ExtractedDocument:
    """One asset and, when an engine found anything, one image block."""
    asset, block, warnings = describe_image(
        data, Provenance(part="image"), limits=limits, ocr=ocr, describer=describer
    )
    if ocr is None and describer is None:
        warnings.append("no OCR engine or describer is configured; the image is not searchable")
    sections = (Section(heading_path=(), blocks=(block,)),) if block is not None else ()
    if block is None and (ocr is not None or describer is not None):
        warnings.append("no text was found in the image and no description was produced")
    if not asset.media_type.startswith("image/"):
        raise ExtractionError("the image format is not supported", reason="unsupported_type")
    return ExtractedDocument(
        mime_type=asset.media_type,
        title=None,
        sections=sections,
        assets=(asset,),
        warnings=tuple(warnings),
    )

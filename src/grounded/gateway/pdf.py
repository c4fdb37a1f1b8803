"""PDF pages as images, for OCR of pages that have no usable text layer.

A helper for ingestion (issue 6): it renders with pypdfium2 (PDFium, no
network, no system packages) and returns PNG bytes plus the scale, so OCR
boxes in pixels can be mapped back to PDF points (``bbox / scale``).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grounded.errors import InvalidInput

if TYPE_CHECKING:
    import pypdfium2 as pdfium


@dataclass(frozen=True)
class RenderedPage:
    index: int  # 0-based page number
    png: bytes
    width_px: int
    height_px: int
    scale: float  # pixels per PDF point (72 per inch)


def page_count(pdf: bytes) -> int:
    document = _open(pdf)
    try:
        return len(document)
    finally:
        document.close()


def render_pages(
    pdf: bytes, pages: Iterable[int] | None = None, *, dpi: int = 200
) -> Iterator[RenderedPage]:
    """Render ``pages`` (0-based; default all) at ``dpi``; raises ``InvalidInput`` for a bad PDF."""
    document = _open(pdf)
    scale = dpi / 72
    try:
        wanted = range(len(document)) if pages is None else pages
        for index in wanted:
            image = document[index].render(scale=scale).to_pil()
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
            yield RenderedPage(index, buffer.getvalue(), image.width, image.height, scale)
    finally:
        document.close()


def _open(pdf: bytes) -> pdfium.PdfDocument:
    import pypdfium2

    try:
        return pypdfium2.PdfDocument(pdf)
    except pypdfium2.PdfiumError as exc:
        raise InvalidInput(f"the PDF could not be opened: {exc}") from exc

"""PPTX: one section per slide (text, tables, pictures) plus its speaker notes.

Every block carries the slide number so a citation can open the right slide.
Shapes are read in z-order, group shapes recursively; notes are a separate
block with ``part="notes"`` because presenters put the explanation there, and
it is often the best text on the slide. The zip and XML guards have already
run before python-pptx sees the bytes.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from grounded.gateway.contracts import Describer, OcrEngine
from grounded.ingest.extract.image import ImageCollector
from grounded.ingest.limits import ExtractionLimits
from grounded.ingest.records import Asset, Block, ExtractedDocument, Provenance, Section, Table
from grounded.ingest.tables import build_table


def _shapes(shapes: Any) -> Iterator[Any]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    for shape in shapes:
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            yield from _shapes(shape.shapes)
        else:
            yield shape


def extract_pptx(
    data: bytes,
    *,
    limits: ExtractionLimits,
    ocr: OcrEngine | None,
    describer: Describer | None,
) -> ExtractedDocument:
    """Sections titled "Slide N: title"; blocks with ``slide`` provenance."""
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    presentation = Presentation(io.BytesIO(data))
    sections: list[Section] = []
    tables: list[Table] = []
    assets: list[Asset] = []
    warnings: list[str] = []
    skipped_images = 0
    images = ImageCollector(limits, ocr, describer)
    for number, slide in enumerate(presentation.slides, start=1):
        title_shape = slide.shapes.title
        slide_title = (title_shape.text_frame.text.strip() if title_shape is not None else "") or ""
        heading = (f"Slide {number}: {slide_title}" if slide_title else f"Slide {number}",)
        blocks: list[Block] = []
        for shape in _shapes(slide.shapes):
            prov = Provenance(slide=number, heading_path=heading)
            if getattr(shape, "has_table", False) and shape.has_table:
                grid = [[cell.text.strip() for cell in row.cells] for row in shape.table.rows]
                table = build_table(grid, prov, title=slide_title or None)
                if table is not None:
                    blocks.append(Block(table.to_markdown(), "table", prov, len(tables)))
                    tables.append(table)
            elif shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
                if ocr is None and describer is None:
                    skipped_images += 1
                caption = shape.name if not shape.name.startswith("Picture") else None
                block = images.add(shape.image.blob, prov, caption)
                if block is not None:
                    blocks.append(block)
            elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                text = "\n".join(
                    p.text.strip() for p in shape.text_frame.paragraphs if p.text.strip()
                )
                if text:
                    blocks.append(Block(text, "slide", prov))
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes_text = slide.notes_slide.notes_text_frame.text.strip()
            if notes_text:
                prov = Provenance(slide=number, heading_path=heading, part="notes")
                blocks.append(Block(notes_text, "text", prov))
        if blocks:
            sections.append(Section(heading_path=heading, blocks=tuple(blocks)))
    assets.extend(images.assets)
    warnings.extend(images.warnings)
    if skipped_images:
        warnings.append(
            f"{skipped_images} picture(s) kept but not searchable: no OCR/describer configured"
        )
    title = (presentation.core_properties.title or "").strip() or None
    return ExtractedDocument(
        mime_type="application/vnd.openxmlformats-officedocument.presentationml.presentation",
        title=title,
        sections=tuple(sections),
        tables=tuple(tables),
        assets=tuple(assets),
        warnings=tuple(warnings),
        page_count=len(presentation.slides),
    )

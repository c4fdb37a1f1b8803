"""DOCX: headings as sections, paragraphs and lists as text, tables, images.

python-docx walks the body in document order (``iter_inner_content``), so
tables stay where they were between paragraphs. Headings are recognised by
their built-in style ("Heading 1".."Heading 9", "Title"), the way Word's own
navigation pane does. List items (numbered paragraphs or "List ..." styles)
keep a "- " marker so a list stays readable as a list. python-docx returns a
merged cell once per grid column it spans, which is what typed rows want.
The zip and XML guards have already run (``safety``) before this module sees
the bytes.
"""

from __future__ import annotations

import io
import re

from grounded.gateway.contracts import Describer, OcrEngine
from grounded.ingest.extract.image import ImageCollector
from grounded.ingest.limits import ExtractionLimits
from grounded.ingest.records import (
    Asset,
    Block,
    ExtractedDocument,
    Provenance,
    Section,
    Table,
)
from grounded.ingest.tables import build_table

_HEADING_STYLE = re.compile(r"^Heading (\d)$")


def extract_docx(
    data: bytes,
    *,
    limits: ExtractionLimits,
    ocr: OcrEngine | None,
    describer: Describer | None,
) -> ExtractedDocument:
    """Sections by heading; images become assets (and image blocks if engines are given)."""
    import docx
    from docx.table import Table as DocxTable
    from docx.text.paragraph import Paragraph

    document = docx.Document(io.BytesIO(data))
    sections: list[Section] = []
    tables: list[Table] = []
    assets: list[Asset] = []
    warnings: list[str] = []
    path: list[tuple[int, str]] = []
    blocks: list[Block] = []
    title = (document.core_properties.title or "").strip() or None

    def heading_path() -> tuple[str, ...]:
        return tuple(h for _, h in path)

    def flush() -> None:
        nonlocal blocks
        if blocks:
            sections.append(Section(heading_path(), tuple(blocks)))
            blocks = []

    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            text = item.text.strip()
            style = item.style.name if item.style is not None else ""
            match = _HEADING_STYLE.match(style or "")
            if text and (match or style == "Title"):
                flush()
                level = int(match.group(1)) if match else 0
                if style == "Title":
                    title = title or text
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, text))
                continue
            if not text:
                continue
            p_pr = item._p.pPr
            is_list = (p_pr is not None and p_pr.numPr is not None) or "List" in (style or "")
            blocks.append(
                Block(
                    f"- {text}" if is_list else text,
                    "text",
                    Provenance(heading_path=heading_path()),
                )
            )
        elif isinstance(item, DocxTable):
            grid = [[cell.text.strip() for cell in row.cells] for row in item.rows]
            prov = Provenance(heading_path=heading_path())
            table = build_table(grid, prov)
            if table is not None:
                blocks.append(Block(table.to_markdown(), "table", prov, table_index=len(tables)))
                tables.append(table)
    flush()

    images = ImageCollector(limits, ocr, describer)
    image_blocks: list[Block] = []
    for rel in document.part.rels.values():
        if "image" not in rel.reltype or rel.is_external:
            continue
        block = images.add(rel.target_part.blob, Provenance(part=rel.target_part.partname))
        if block is not None:
            image_blocks.append(block)
    assets.extend(images.assets)
    warnings.extend(images.warnings)
    if image_blocks:
        sections.append(Section(heading_path=("Images",), blocks=tuple(image_blocks)))
    elif assets and ocr is None and describer is None:
        warnings.append(
            f"{len(assets)} embedded image(s) kept but not searchable: no OCR/describer configured"
        )
    return ExtractedDocument(
        mime_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        title=title,
        sections=tuple(sections),
        tables=tuple(tables),
        assets=tuple(assets),
        warnings=tuple(warnings),
    )

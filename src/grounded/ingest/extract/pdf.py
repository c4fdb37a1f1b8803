"""PDF: text layer with page numbers and boxes, OCR for pages without one, tables.

pypdfium2 (PDFium, the engine in Chrome) reads the text layer: it is fast,
tolerant of damaged files and gives a box for every text run, which we group
into lines and paragraphs with page + bbox provenance (PDF points, origin
top-left). Pages with no usable text are rendered by PDFium and sent to the
``OcrEngine`` the caller passed in. Tables come from pdfplumber's table
finder, which is slower (pdfminer), so it runs only on pages whose text runs
line up in columns; text inside a found table is removed from the prose so
it is indexed once, as a table.
"""

from __future__ import annotations

import io
import itertools
import math
import threading
from dataclasses import dataclass
from typing import Any, Literal

import pypdfium2 as pdfium

from grounded.errors import ExtractionError
from grounded.gateway.contracts import OcrEngine
from grounded.ingest.extract.layout import Line, group_lines, paragraphs
from grounded.ingest.limits import ExtractionLimits
from grounded.ingest.records import Block, ExtractedDocument, Provenance, Section, Table
from grounded.ingest.tables import build_table

OcrMode = Literal["auto", "always", "never"]
_MIN_TEXT_CHARS = 16  # fewer non-space characters than this: treat the page as a scan
_OCR_SCALE = 2.0  # 144 dpi: enough for body text, cheap enough for CPU OCR
_OCR_PIXELS = 12_000_000  # an A4 page at 2x is ~2M pixels; 12M allows posters, not bombs
_LINES = {"vertical_strategy": "lines", "horizontal_strategy": "lines"}
_TEXT = {"vertical_strategy": "text", "horizontal_strategy": "text", "min_words_vertical": 5}


@dataclass(frozen=True)
class PdfOptions:
    """How to read a PDF. ``pages`` (1-based, inclusive) limits the work to a range,
    keeping true page numbers and the outline's headings (a worker can split a
    long PDF into resumable slices; tests read one chapter of a book)."""

    ocr: OcrMode = "auto"
    tables: bool = True
    pages: tuple[int, int] | None = None


def _open(data: bytes) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        text = str(exc).lower()
        if "password" in text or "security" in text:
            raise ExtractionError(
                "the PDF is password-protected; remove the password (print to PDF or "
                "'save without security') and upload it again",
                reason="encrypted",
            ) from exc
        raise ExtractionError(
            "the PDF is damaged or truncated and could not be opened; upload the "
            "complete file or re-save it from the application that made it",
            reason="truncated" if b"%%EOF" not in data[-2048:] else "corrupt",
        ) from exc


def _outline(document: pdfium.PdfDocument) -> dict[int, tuple[str, ...]]:
    """Heading path in force at the start of each page that has an outline entry."""
    starts: dict[int, tuple[str, ...]] = {}
    stack: list[str] = []
    try:
        items = list(document.get_toc(max_depth=6))
    except pdfium.PdfiumError:
        return starts
    for item in items:
        title = " ".join((item.get_title() or "").split())
        dest = item.get_dest()
        index = dest.get_index() if dest is not None else None
        if not title or index is None:
            continue
        del stack[item.level :]
        stack.append(title)
        starts.setdefault(index, tuple(stack))
        starts[index] = tuple(stack)
    return starts


def _text_runs(page: pdfium.PdfPage, height: float) -> list[Line]:
    textpage = page.get_textpage()
    try:
        runs = []
        for i in range(textpage.count_rects()):
            left, bottom, right, top = textpage.get_rect(i)
            text = textpage.get_text_bounded(left, bottom, right, top).strip()
            if text:
                runs.append(Line(text, (left, height - top, right, height - bottom)))
        return runs
    finally:
        textpage.close()


def _looks_tabular(runs: list[Line]) -> bool:
    """Columns: 3+ lines with 2+ wide gaps whose next runs start at shared x positions.

    Cheap (runs are already extracted) and selective: on the Debian Reference
    it sends about half the pages to pdfplumber instead of nine in ten.
    """
    rows: dict[int, list[Line]] = {}
    for run in runs:
        rows.setdefault(round(run.bbox[1] / 3), []).append(run)
    counted = 0
    columns: dict[int, int] = {}
    for row in rows.values():
        row.sort(key=lambda r: r.bbox[0])
        starts = [b.bbox[0] for a, b in itertools.pairwise(row) if b.bbox[0] - a.bbox[2] >= 6]
        if len(starts) >= 2:
            counted += 1
            for x in {round(s / 4) for s in starts}:
                columns[x] = columns.get(x, 0) + 1
    return counted >= 3 and sum(1 for n in columns.values() if n >= 3) >= 2


def _good(grid: list[list[str | None]], strict: bool) -> bool:
    cells = [c for row in grid for c in row if c and c.strip()]
    if len(grid) < (3 if strict else 2) or not cells or max(len(r) for r in grid) < 2:
        return False
    if not strict:
        return True
    fill = len(cells) / sum(len(r) for r in grid)
    mean = sum(len(c) for c in cells) / len(cells)
    return max(len(r) for r in grid) >= 3 and fill >= 0.35 and mean <= 30


def _page_tables(plumber_page: Any) -> list[tuple[tuple[float, float, float, float], list[Any]]]:
    """Tables on one page: ruled tables, unless whitespace columns find clearly more.

    The whitespace finder is the one that reads borderless tables (tabula's
    data.pdf, the Spanish donor list), but it also splits ruled ones oddly, so
    it has to beat the ruled finder by 10% in filled cells to be chosen.
    ``x_tolerance=1.5`` keeps the word spaces of tightly set fonts.
    """
    width, height = float(plumber_page.width), float(plumber_page.height)
    results: list[tuple[list[tuple[tuple[float, float, float, float], list[Any]]], int]] = []
    for settings, strict in ((_LINES, False), (_TEXT, True)):
        found = []
        for table in plumber_page.find_tables(settings):
            grid = table.extract(x_tolerance=1.5)
            if _good(grid, strict):
                x0, top, x1, bottom = table.bbox
                box = (max(x0, 0.0), max(top, 0.0), min(x1, width), min(bottom, height))
                found.append((box, grid))
        results.append((found, sum(1 for _, g in found for row in g for c in row if c)))
    (ruled, ruled_cells), (loose, loose_cells) = results
    return loose if loose_cells > 1.1 * ruled_cells else ruled


def _inside(bbox: tuple[float, float, float, float], box: tuple[float, ...]) -> bool:
    cx, cy = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    return box[0] - 1 <= cx <= box[2] + 1 and box[1] - 1 <= cy <= box[3] + 1


def _top(block: Block) -> float:
    return block.provenance.bbox[1] if block.provenance.bbox else 0.0


def _place_tables(prose: list[Block], tables: list[Block]) -> list[Block]:
    """Prose in reading order, each table before the first paragraph that starts below it."""
    out = list(prose)
    for table in sorted(tables, key=_top, reverse=True):
        at = next(
            (i for i, b in enumerate(out) if b.modality != "table" and _top(b) > _top(table)),
            len(out),
        )
        out.insert(at, table)
    return out


def _ocr_page(page: pdfium.PdfPage, engine: OcrEngine, max_pixels: int) -> list[Line]:
    """Render one page and OCR it; boxes come back in PDF points.

    The scale is capped so the bitmap stays within ``max_pixels``: a page whose
    MediaBox claims to be metres wide must not become a multi-GB render.
    """
    width, height = page.get_size()
    scale = min(_OCR_SCALE, math.sqrt(max_pixels / max(width * height, 1.0)))
    bitmap = page.render(scale=scale)
    image = bitmap.to_pil()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    result = engine.ocr(buffer.getvalue())
    return [
        Line(line.text.strip(), tuple(v / scale for v in line.bbox))  # type: ignore[arg-type]
        for line in result.lines
        if line.text.strip()
    ]


PDFIUM_LOCK = threading.Lock()
"""PDFium is not thread-safe (pypdfium2's own warning): one PDF at a time per process.

Parallel extraction should use processes; threads are serialised here rather
than risking a crash inside the C library.
"""


def extract_pdf(
    data: bytes,
    *,
    limits: ExtractionLimits,
    ocr: OcrEngine | None = None,
    options: PdfOptions | None = None,
) -> ExtractedDocument:
    """Sections (one per page, titled by the outline) of paragraphs and tables.

    Raises ``ExtractionError`` for encrypted (``encrypted``), damaged
    (``truncated``/``corrupt``) and over-long (``too_large``) files. Pages that
    need OCR when no engine was given produce a warning, not an error.
    """
    with PDFIUM_LOCK:
        return _extract_pdf(data, limits=limits, ocr=ocr, options=options)


def _extract_pdf(
    data: bytes,
    *,
    limits: ExtractionLimits,
    ocr: OcrEngine | None = None,
    options: PdfOptions | None = None,
) -> ExtractedDocument:
    opts = options or PdfOptions()
    document = _open(data)
    plumber: Any = None
    try:
        count = len(document)
        if count > limits.max_pages:
            raise ExtractionError(
                f"the PDF has {count} pages (limit {limits.max_pages}); split it",
                reason="too_large",
            )
        title = (document.get_metadata_dict().get("Title") or "").strip() or None
        warnings: list[str] = []
        if b"%%EOF" not in data[-2048:]:
            warnings.append(
                "the PDF has no end-of-file marker (truncated upload?); pages may be missing"
            )
        outline = _outline(document)
        sections: list[Section] = []
        tables: list[Table] = []
        first, last = opts.pages or (1, count)
        # The heading in force where the range starts comes from the pages before it.
        heading: tuple[str, ...] = next(
            (outline[i] for i in sorted(outline, reverse=True) if i < first - 1), ()
        )
        for index in range(max(first, 1) - 1, min(last, count)):
            number = index + 1
            heading = outline.get(index, heading)
            page = document[index]
            try:
                _width, height = page.get_size()
                runs = [] if opts.ocr == "always" else _text_runs(page, height)
                blocks: list[Block] = []
                if opts.tables and _looks_tabular(runs):
                    if plumber is None:
                        import pdfplumber

                        plumber = pdfplumber.open(io.BytesIO(data))
                    plumber_page = plumber.pages[index]
                    try:
                        found = _page_tables(plumber_page)
                    finally:
                        plumber_page.close()  # drop its parsed objects: memory stays flat
                    for bbox, grid in found:
                        prov = Provenance(page=number, bbox=bbox, heading_path=heading)
                        table = build_table(grid, prov)
                        if table is None:
                            continue
                        runs = [r for r in runs if not _inside(r.bbox, bbox)]
                        blocks.append(
                            Block(table.to_markdown(), "table", prov, table_index=len(tables))
                        )
                        tables.append(table)
                part = None
                if sum(len(r.text.replace(" ", "")) for r in runs) < _MIN_TEXT_CHARS and (
                    opts.ocr != "never"
                ):
                    if ocr is not None:
                        runs, part = _ocr_page(page, ocr, _OCR_PIXELS), "ocr"
                    elif not blocks:
                        warnings.append(
                            f"page {number} has no text layer and no OCR engine is configured; "
                            "its text is missing"
                        )
                prose = [
                    Block(
                        text,
                        "text",
                        Provenance(page=number, bbox=bbox, heading_path=heading, part=part),
                    )
                    for text, bbox in paragraphs(group_lines(runs))
                ]
                blocks = _place_tables(prose, blocks)
                if blocks:
                    sections.append(Section(heading_path=heading, blocks=tuple(blocks)))
            finally:
                page.close()
        return ExtractedDocument(
            mime_type="application/pdf",
            title=title,
            sections=tuple(sections),
            tables=tuple(tables),
            warnings=tuple(warnings),
            page_count=count,
        )
    finally:
        if plumber is not None:
            plumber.close()
        document.close()

"""What every extractor returns, and what the chunker hands on (seed 001 ADR-001).

Every modality is reduced to the same small shapes so that chunking, storage,
retrieval and citation never branch on the file type:

- ``Block``: the smallest extracted unit (a paragraph, a slide's text, a table,
  an OCR'd page, a transcript segment) with its text projection, modality tag
  and a ``Provenance`` pointer precise enough for a UI to jump to the spot.
- ``Section``: a run of blocks under one heading path; sections become parent
  chunks (seed 001 ADR-006).
- ``Table``: the structured form (header + typed cells) kept beside its
  Markdown linearisation, so typed rows can be loaded for SQL later without
  re-parsing (seed 001 ADR-003).
- ``Asset``: modality detail (image bytes, OCR text, description) that lives in
  the ``assets`` table, not in the retrieval path.
- ``ExtractedDocument``: all of the above for one file, plus warnings a person
  should see (a page that needed OCR and had no engine, an audio language no
  model covers, ...).
- ``Chunk``: what the chunker emits; maps one-to-one onto a ``chunks`` row.

Everything is frozen: records travel between pipeline stages and are never
patched in place.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Literal

Modality = Literal["text", "table", "image", "audio", "slide", "code"]
CellKind = Literal["int", "float", "date", "bool", "text", "empty"]
ChunkRole = Literal["parent", "child"]
BBox = tuple[float, float, float, float]


@dataclass(frozen=True)
class Provenance:
    """Where a piece of text came from, in the coordinates of its format.

    Only the fields that apply are set: page + bbox (PDF points, origin top-left,
    pages numbered from 1) for PDFs and scans; char offsets into the decoded text
    for text, Markdown and HTML; sheet + A1 cell range for spreadsheets; slide
    number for PPTX; seconds for audio. ``heading_path`` is the chain of headings
    above the text, for every format that has headings.
    """

    page: int | None = None
    page_end: int | None = None
    bbox: BBox | None = None
    char_start: int | None = None
    char_end: int | None = None
    sheet: str | None = None
    cell_range: str | None = None
    slide: int | None = None
    start_s: float | None = None
    end_s: float | None = None
    heading_path: tuple[str, ...] = ()
    part: str | None = None  # e.g. "notes" for speaker notes, "ocr" for recognised text
    anchor: str | None = None  # HTML: the nearest element id above the text (a #fragment)

    def to_json(self) -> dict[str, Any]:
        """The ``chunks.provenance`` jsonb value: set fields only, bbox rounded."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if value is None or value == ():
                continue
            if name == "bbox":
                value = [round(v, 2) for v in value]
            elif name == "heading_path":
                value = list(value)
            out[name] = value
        return out


@dataclass(frozen=True)
class Cell:
    """A typed table cell; ``raw`` is the text as it appeared in the document."""

    kind: CellKind
    value: int | float | bool | dt.date | str | None
    raw: str


@dataclass(frozen=True)
class Table:
    """A table kept twice: typed rows for SQL, Markdown for retrieval (ADR-003).

    ``header`` has one name per column (generated ``column_N`` when the source
    had none: ``header_detected`` says which). ``rows`` excludes the header row.
    """

    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    provenance: Provenance
    header_detected: bool = True
    title: str | None = None
    row_numbers: tuple[int, ...] = ()
    """Source row number of each body row (spreadsheets, CSV): for cell ranges."""

    @property
    def column_kinds(self) -> tuple[CellKind, ...]:
        """One kind per column: the single non-empty kind, int+float -> float, else text."""
        kinds: list[CellKind] = []
        for col in range(len(self.header)):
            seen = {row[col].kind for row in self.rows if row[col].kind != "empty"}
            if not seen:
                kinds.append("empty")
            elif len(seen) == 1:
                kinds.append(next(iter(seen)))
            elif seen == {"int", "float"}:
                kinds.append("float")
            else:
                kinds.append("text")
        return tuple(kinds)

    def to_json(self) -> dict[str, Any]:
        """The structured form for ``assets.detail`` (kind "table"): typed, JSON-safe.

        Values are JSON scalars (dates as ISO strings); ``column_kinds`` says how
        to type each column when the rows are loaded for SQL (seed 001 ADR-003).
        """

        def value(cell: Cell) -> Any:
            return cell.value.isoformat() if isinstance(cell.value, dt.date) else cell.value

        return {
            "title": self.title,
            "header": list(self.header),
            "header_detected": self.header_detected,
            "column_kinds": list(self.column_kinds),
            "rows": [[value(c) for c in row] for row in self.rows],
            "row_numbers": list(self.row_numbers),
            "provenance": self.provenance.to_json(),
        }

    def to_markdown(self, rows: tuple[tuple[Cell, ...], ...] | None = None) -> str:
        """A GitHub-style pipe table; ``rows`` selects a slice (header repeated).

        The title is not included: it is already the section heading or caption.
        """
        body = self.rows if rows is None else rows

        def esc(text: str) -> str:
            return " ".join(text.replace("|", "\\|").split())

        lines = [
            "| " + " | ".join(esc(h) for h in self.header) + " |",
            "|" + "|".join(" --- " for _ in self.header) + "|",
        ]
        lines.extend("| " + " | ".join(esc(c.raw) for c in row) + " |" for row in body)
        return "\n".join(lines)


@dataclass(frozen=True)
class Asset:
    """Modality detail stored in ``assets``: an embedded image, a recording, ..."""

    kind: Literal["image", "audio"]
    media_type: str
    sha256: str
    size: int
    provenance: Provenance
    width: int | None = None
    height: int | None = None
    ocr_text: str = ""
    description: str = ""
    content: bytes = field(default=b"", repr=False)

    def to_json(self) -> dict[str, Any]:
        """``assets.detail``: everything but the bytes (those go to the blob store)."""
        return {
            "size": self.size,
            "width": self.width,
            "height": self.height,
            "ocr_text": self.ocr_text,
            "description": self.description,
            "provenance": self.provenance.to_json(),
        }


@dataclass(frozen=True)
class Block:
    """The smallest extracted unit: one text projection with one provenance.

    ``table_index`` / ``asset_index`` point into the document's ``tables`` /
    ``assets`` when the block is the projection of one.
    """

    text: str
    modality: Modality
    provenance: Provenance
    table_index: int | None = None
    asset_index: int | None = None


@dataclass(frozen=True)
class Section:
    """Blocks under one heading path; becomes one (or a few) parent chunks."""

    heading_path: tuple[str, ...]
    blocks: tuple[Block, ...]

    @property
    def title(self) -> str:
        return self.heading_path[-1] if self.heading_path else ""


@dataclass(frozen=True)
class ExtractedDocument:
    """Everything one extractor found in one file."""

    mime_type: str
    title: str | None
    sections: tuple[Section, ...]
    tables: tuple[Table, ...] = ()
    assets: tuple[Asset, ...] = ()
    warnings: tuple[str, ...] = ()
    language: str | None = None
    page_count: int | None = None

    @property
    def text(self) -> str:
        """All block texts in reading order (for language detection and tests)."""
        return "\n\n".join(b.text for s in self.sections for b in s.blocks)


@dataclass(frozen=True)
class Chunk:
    """One ``chunks`` row before it has ids: parents link by ordinal.

    ``parent_ordinal`` is the ordinal of this child's parent chunk in the same
    document; the storage layer turns it into ``parent_chunk_id``.
    """

    ordinal: int
    role: ChunkRole
    text: str
    modality: Modality
    provenance: Provenance
    language: str | None
    content_sha256: str
    parent_ordinal: int | None = None
    table_index: int | None = None
    asset_index: int | None = None

    def provenance_json(self) -> dict[str, Any]:
        """``chunks.provenance``: the pointer plus links to the table or asset it projects."""
        out = self.provenance.to_json()
        if self.table_index is not None:
            out["table"] = self.table_index
        if self.asset_index is not None:
            out["asset"] = self.asset_index
        return out

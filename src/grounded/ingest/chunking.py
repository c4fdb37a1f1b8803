"""Sections become parents, small children are what retrieval embeds (ADR-006).

Versioned configuration (seed 001 ADR-011): any change to ``ChunkingConfig``
defaults or to this algorithm bumps ``CHUNKING_VERSION``, and the version is
stored with the chunks so a changed configuration means a re-chunk, never a
silent mix of two chunkings in one index.

The algorithm, per section:
1. Blocks are packed into parents of at most ``parent_chars`` (a section
   longer than that becomes several parents; one huge block is cut into
   parent-sized windows). A parent's text is its blocks joined by blank lines.
2. Inside each parent, consecutive small blocks of the same modality, page
   and part are packed into children of at most ``child_chars``; a longer
   block is cut by a fixed Unicode character window with overlap (seed 002
   ADR-010) - characters, not bytes or tokens, so Chinese and English are cut
   alike and offsets stay exact. Tables are cut by rows, repeating the header,
   so every child is a valid Markdown table whose cell range is known.
3. Each chunk gets its language (``detect_language``) and a sha256 of its text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from grounded.ingest.language import detect_language
from grounded.ingest.records import Block, Chunk, ExtractedDocument, Modality, Provenance, Table

CHUNKING_VERSION = "1"


@dataclass(frozen=True)
class ChunkingConfig:
    child_chars: int = 800
    child_overlap: int = 120
    parent_chars: int = 4000
    table_child_chars: int = 1500
    snap_chars: int = 80
    """A window may end up to this many characters early at whitespace or punctuation."""

    def __post_init__(self) -> None:
        if not 0 <= self.child_overlap < self.child_chars // 2:
            raise ValueError("child_overlap must be >= 0 and under half of child_chars")
        if self.parent_chars < self.child_chars:
            raise ValueError("parent_chars must be at least child_chars")
        if not 0 <= self.snap_chars < self.child_chars - self.child_overlap:
            raise ValueError("snap_chars must leave the window room to advance")

    @property
    def version(self) -> str:
        """CHUNKING_VERSION plus the settings: what to store beside every chunk."""
        return (
            f"{CHUNKING_VERSION}:c{self.child_chars}o{self.child_overlap}"
            f"p{self.parent_chars}t{self.table_child_chars}s{self.snap_chars}"
        )


_BREAKS = set(" \n\t。！？；，、.!?;,:)]」』）")


def windows(text: str, size: int, overlap: int, snap: int = 0) -> list[tuple[int, int]]:
    """(start, end) character windows covering ``text``; consecutive ones overlap.

    With ``snap`` > 0 a window ends at the last break character (space,
    punctuation, CJK punctuation) within its final ``snap`` characters, so
    words are rarely cut; text without breaks is cut at exactly ``size``.
    """
    spans: list[tuple[int, int]] = []
    start = 0
    n = len(text)
    while start < n:
        end = min(start + size, n)
        if end < n and snap:
            for cut in range(end, end - snap, -1):
                if text[cut - 1] in _BREAKS:
                    end = cut
                    break
        spans.append((start, end))
        if end >= n:
            break
        start = max(end - overlap, start + 1)
    return spans


def _language(text: str, modality: Modality) -> str | None:
    """Language of a chunk; a table's pipes and rules are not words, so they go first."""
    if modality == "table":
        text = " ".join(text.replace("|", " ").replace("---", " ").split())
    return detect_language(text)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _slice_block(block: Block, start: int, end: int) -> Block:
    """A window of a block, whitespace trimmed, char offsets kept exact."""
    piece = block.text[start:end]
    start += len(piece) - len(piece.lstrip())
    end -= len(piece) - len(piece.rstrip())
    prov = block.provenance
    if prov.char_start is not None:
        prov = replace(prov, char_start=prov.char_start + start, char_end=prov.char_start + end)
    return replace(block, text=block.text[start:end], provenance=prov)


def _merge(first: Provenance, last: Provenance) -> Provenance:
    """Provenance spanning two blocks: start of the first, end of the last."""
    page_end = last.page_end or last.page
    same_page = first.page == last.page
    bbox = None
    if same_page and first.bbox and last.bbox:
        a, b = first.bbox, last.bbox
        bbox = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
    return replace(
        first,
        page_end=page_end if page_end != first.page else None,
        bbox=bbox if same_page else None,
        char_end=last.char_end if last.char_end is not None else first.char_end,
        end_s=last.end_s if last.end_s is not None else first.end_s,
        part=first.part if first.part == last.part else None,
    )


def _parents(blocks: tuple[Block, ...], limit: int) -> list[list[Block]]:
    groups: list[list[Block]] = []
    size = 0
    for block in blocks:
        pieces = [block]
        if len(block.text) > limit and block.modality != "table":
            pieces = [_slice_block(block, s, e) for s, e in windows(block.text, limit, 0)]
        for piece in pieces:
            if groups and size + len(piece.text) <= limit:
                groups[-1].append(piece)
                size += len(piece.text) + 2
            else:
                groups.append([piece])
                size = len(piece.text)
    return groups


def _row_groups(
    table: Table, prov: Provenance, limit: int
) -> list[tuple[int, int, str, Provenance]]:
    """(first row, end row, Markdown, provenance) slices of a table, header repeated.

    Each slice's Markdown fits ``limit`` (a single over-long row stands alone);
    spreadsheet provenance narrows to the slice's own cell range.
    """
    out: list[tuple[int, int, str, Provenance]] = []
    rows = table.rows
    start = 0
    while start < len(rows):
        end = start + 1
        while end < len(rows) and len(table.to_markdown(rows[start : end + 1])) <= limit:
            end += 1
        sliced = prov
        if prov.cell_range and table.row_numbers:
            cols = prov.cell_range.split(":")
            first_col = "".join(ch for ch in cols[0] if ch.isalpha())
            last_col = "".join(ch for ch in cols[-1] if ch.isalpha())
            r0, r1 = table.row_numbers[start], table.row_numbers[end - 1]
            sliced = replace(prov, cell_range=f"{first_col}{r0}:{last_col}{r1}")
        out.append((start, end, table.to_markdown(rows[start:end]), sliced))
        start = end
    return out


def _split_tables(
    blocks: tuple[Block, ...], tables: list[Table], origin: list[int], limit: int
) -> tuple[Block, ...]:
    """Tables longer than a parent become several table blocks (row slices).

    Each slice is appended to ``tables`` as a sub-table, and ``origin`` maps its
    index back to the document's table, so chunk ``table_index`` stays true.
    """
    out: list[Block] = []
    for block in blocks:
        if block.table_index is None or block.modality != "table" or len(block.text) <= limit:
            out.append(block)
            continue
        table = tables[block.table_index]
        for start, end, text, prov in _row_groups(table, block.provenance, limit):
            numbers = table.row_numbers[start:end] if table.row_numbers else ()
            tables.append(replace(table, rows=table.rows[start:end], row_numbers=numbers))
            origin.append(origin[block.table_index])
            out.append(replace(block, text=text, provenance=prov, table_index=len(tables) - 1))
    return tuple(out)


def _children(
    group: list[Block], tables: list[Table], config: ChunkingConfig
) -> list[tuple[Block, str, Provenance]]:
    """(source block, child text, provenance) for one parent's blocks."""
    out: list[tuple[Block, str, Provenance]] = []
    pending: list[Block] = []

    def flush() -> None:
        if pending:
            text = "\n\n".join(b.text for b in pending)
            out.append((pending[0], text, _merge(pending[0].provenance, pending[-1].provenance)))
            pending.clear()

    for block in group:
        if block.table_index is not None and block.modality == "table":
            flush()
            table = tables[block.table_index]
            for _, _, text, prov in _row_groups(table, block.provenance, config.table_child_chars):
                out.append((block, text, prov))
        elif len(block.text) > config.child_chars:
            flush()
            for s, e in windows(
                block.text, config.child_chars, config.child_overlap, config.snap_chars
            ):
                piece = _slice_block(block, s, e)
                out.append((block, piece.text, piece.provenance))
        else:
            if pending:
                head = pending[0]
                size = sum(len(b.text) + 2 for b in pending) + len(block.text)
                same = (
                    head.modality == block.modality
                    and head.provenance.page == block.provenance.page
                    and head.provenance.slide == block.provenance.slide
                    and head.provenance.part == block.provenance.part
                    and head.asset_index is None
                    and block.asset_index is None
                )
                if not same or size > config.child_chars:
                    flush()
            pending.append(block)
    flush()
    return out


def chunk_document(
    document: ExtractedDocument, config: ChunkingConfig | None = None
) -> tuple[Chunk, ...]:
    """Parent and child chunks for one document, parents first in each group.

    Ordinals are dense from 0 in reading order; a child's ``parent_ordinal``
    is its parent's ordinal. A parent with a single child of the same text is
    still emitted, so small-to-big retrieval has one shape everywhere.
    """
    cfg = config or ChunkingConfig()
    chunks: list[Chunk] = []
    tables = list(document.tables)
    origin = list(range(len(tables)))
    for section in document.sections:
        blocks = _split_tables(section.blocks, tables, origin, cfg.parent_chars)
        for group in _parents(blocks, cfg.parent_chars):
            modalities = {b.modality for b in group}
            parent_modality: Modality = group[0].modality if len(modalities) == 1 else "text"
            parent_text = "\n\n".join(b.text for b in group)
            if section.heading_path:
                parent_text = " > ".join(section.heading_path) + "\n\n" + parent_text
            parent_ordinal = len(chunks)
            parent_prov = _merge(group[0].provenance, group[-1].provenance)
            chunks.append(
                Chunk(
                    ordinal=parent_ordinal,
                    role="parent",
                    text=parent_text,
                    modality=parent_modality,
                    provenance=parent_prov,
                    language=_language(parent_text, parent_modality),
                    content_sha256=_sha(parent_text),
                )
            )
            for block, text, prov in _children(group, tables, cfg):
                chunks.append(
                    Chunk(
                        ordinal=len(chunks),
                        role="child",
                        text=text,
                        modality=block.modality,
                        provenance=prov,
                        language=_language(text, block.modality),
                        content_sha256=_sha(text),
                        parent_ordinal=parent_ordinal,
                        table_index=(
                            None if block.table_index is None else origin[block.table_index]
                        ),
                        asset_index=block.asset_index,
                    )
                )
    return tuple(chunks)

"""Plain text and Markdown, with exact character offsets into the decoded text.

Markdown is heading-aware: ATX headings (``#`` .. ``######``) open sections
with a heading path, fenced code becomes ``code`` blocks and GitHub pipe
tables become typed tables. Every block's text is an exact slice of the
decoded source (``text[char_start:char_end]``), so a UI can highlight it.

Plain text has no reliable structure, so it is one block per file and the
chunker applies the fixed Unicode character window (seed 002 ADR-010).
"""

from __future__ import annotations

import re

from grounded.errors import ExtractionError
from grounded.ingest.records import (
    Block,
    ExtractedDocument,
    Modality,
    Provenance,
    Section,
    Table,
)
from grounded.ingest.tables import build_table

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^(```|~~~)")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def decode_text(data: bytes) -> str:
    """Decode bytes as UTF-8 (BOM aware), UTF-16 with a BOM, else the best guess.

    Newlines are normalised to ``\\n`` so offsets are stable across platforms.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = _guess_legacy(data)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _guess_legacy(data: bytes) -> str:
    """Decode a non-UTF-8 file with charset-normalizer's guess, Windows-1252 on near-ties.

    On short Western text several single-byte code pages fit equally well
    (cp1257 and cp1252 both read "Café"), and charset-normalizer may rank a
    Baltic one first; the code page that most such files were actually saved
    in wins any tie within a small chaos margin. CJK encodings are unaffected:
    cp1252 reads them as mojibake with a much higher chaos score.
    """
    from charset_normalizer import from_bytes

    results = list(from_bytes(data))
    if not results:
        raise ExtractionError(
            "the text file's encoding could not be recognised; save it as UTF-8",
            reason="corrupt",
        )
    best = min(results, key=lambda m: m.chaos)
    western = next((m for m in results if m.encoding == "cp1252"), None)
    if western is not None and western.chaos <= best.chaos + 0.02:
        best = western
    return str(best)


_CODE_EXTENSIONS = frozenset({
    "py", "js", "ts", "tsx", "jsx", "go", "rs", "java", "kt", "c", "h", "cc", "cpp", "hpp",
    "cs", "rb", "php", "swift", "scala", "sh", "bash", "sql", "r", "lua", "pl", "ps1",
    "yaml", "yml", "toml", "ini", "cfg", "json", "xml", "proto", "tf",
})  # fmt: skip


def extract_text(data: bytes, filename: str | None = None) -> ExtractedDocument:
    """One block holding the whole text; structure-free (seed 002 ADR-010).

    Source and configuration files (by extension: the bytes of code and of
    prose look alike) get the ``code`` modality, so retrieval can treat them
    as code; they are windowed the same way.
    """
    text = decode_text(data)
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    if start >= end:
        return ExtractedDocument(mime_type="text/plain", title=None, sections=())
    ext = filename.rsplit(".", 1)[-1].lower() if filename and "." in filename else ""
    modality: Modality = "code" if ext in _CODE_EXTENSIONS else "text"
    block = Block(text[start:end], modality, Provenance(char_start=start, char_end=end))
    first = text[start:end].split("\n", 1)[0].strip()
    return ExtractedDocument(
        mime_type="text/plain",
        title=first[:200] or None,
        sections=(Section(heading_path=(), blocks=(block,)),),
    )


def _pipe_row(line: str) -> list[str]:
    inner = line.strip()
    inner = inner.removeprefix("|").removesuffix("|")
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def extract_markdown(data: bytes) -> ExtractedDocument:
    """Sections by heading; paragraphs, fenced code and pipe tables as blocks."""
    text = decode_text(data)
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    sections: list[Section] = []
    tables: list[Table] = []
    path: list[tuple[int, str]] = []
    blocks: list[Block] = []
    title: str | None = None

    def heading_path() -> tuple[str, ...]:
        return tuple(h for _, h in path)

    def flush() -> None:
        if blocks:
            sections.append(Section(heading_path=heading_path(), blocks=tuple(blocks)))
            blocks.clear()

    def add(first: int, last: int, modality: str) -> None:
        """Lines first..last (inclusive) as one block, offsets exact."""
        start, end = offsets[first], offsets[last] + len(lines[last])
        body = text[start:end]
        lead = len(body) - len(body.lstrip())
        body = body.strip()
        if body:
            prov = Provenance(
                char_start=start + lead,
                char_end=start + lead + len(body),
                heading_path=heading_path(),
            )
            blocks.append(Block(body, "code" if modality == "code" else "text", prov))

    i = 0
    while i < len(lines):
        line = lines[i]
        heading = _HEADING.match(line)
        if heading:
            flush()
            level, name = len(heading.group(1)), heading.group(2).strip()
            title = title or name
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, name))
            i += 1
        elif _FENCE.match(line):
            fence = line[:3]
            j = i + 1
            while j < len(lines) and not lines[j].startswith(fence):
                j += 1
            add(i, min(j, len(lines) - 1), "code")
            i = j + 1
        elif "|" in line and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]):
            j = i + 2
            while j < len(lines) and "|" in lines[j] and lines[j].strip():
                j += 1
            grid = [_pipe_row(lines[i])] + [_pipe_row(r) for r in lines[i + 2 : j]]
            start, end = offsets[i], offsets[j - 1] + len(lines[j - 1])
            prov = Provenance(char_start=start, char_end=end, heading_path=heading_path())
            table = build_table(grid, prov, header_rows=1)
            if table is not None:
                blocks.append(Block(table.to_markdown(), "table", prov, table_index=len(tables)))
                tables.append(table)
            i = j
        elif not line.strip():
            i += 1
        else:
            j = i
            while (
                j + 1 < len(lines)
                and lines[j + 1].strip()
                and not _HEADING.match(lines[j + 1])
                and not _FENCE.match(lines[j + 1])
            ):
                j += 1
            add(i, j, "text")
            i = j + 1
    flush()
    return ExtractedDocument(
        mime_type="text/markdown", title=title, sections=tuple(sections), tables=tuple(tables)
    )

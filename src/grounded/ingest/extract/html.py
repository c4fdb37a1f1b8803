"""HTML: main content, headings as sections, tables as typed tables.

selectolax (the Lexbor HTML5 engine) parses the page like a browser would and
never fetches or expands anything (no DTDs, no external entities), so hostile
HTML costs only its own size. Boilerplate (nav, header, footer, aside,
scripts, forms) is dropped; the main content is the first ``<main>``,
``<article>`` or ``[role=main]`` element, else the body.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

from grounded.ingest.extract.text import decode_text
from grounded.ingest.records import Block, ExtractedDocument, Provenance, Section, Table
from grounded.ingest.tables import build_table

_DROP = (
    "script, style, noscript, nav, header, footer, aside, form, template, svg, iframe, button, "
    ".toc, #toc, [role=navigation], .navheader, .navfooter"  # contents, DocBook nav bars
)
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {"p", "li", "pre", "blockquote", "dt", "dd", "figcaption", "caption", "address"}
_INLINE = {
    "a", "span", "b", "i", "em", "strong", "code", "sup", "sub", "small", "abbr", "kbd",
    "samp", "var", "mark", "q", "cite", "u", "s", "time", "tt", "font", "label",
}  # fmt: skip


class _Walker:
    def __init__(self) -> None:
        self.sections: list[Section] = []
        self.tables: list[Table] = []
        self.path: list[tuple[int, str]] = []
        self.blocks: list[Block] = []
        self.buffer: list[str] = []
        self.anchor: str | None = None

    def heading_path(self) -> tuple[str, ...]:
        return tuple(h for _, h in self.path)

    def flush_text(self, modality: str = "text") -> None:
        text = (
            " ".join("".join(self.buffer).split()) if modality != "code" else "".join(self.buffer)
        )
        self.buffer.clear()
        if text.strip():
            prov = Provenance(heading_path=self.heading_path(), anchor=self.anchor)
            self.blocks.append(
                Block(text.strip("\n"), "code" if modality == "code" else "text", prov)
            )

    def flush_section(self) -> None:
        self.flush_text()
        if self.blocks:
            self.sections.append(Section(self.heading_path(), tuple(self.blocks)))
            self.blocks = []

    def table(self, node: LexborNode) -> None:
        self.flush_text()
        grid: list[list[str]] = []
        header_rows = 0
        for row in node.css("tr"):
            cells = [c for c in row.iter() if c.tag in ("td", "th")]
            if not cells:
                continue
            if not grid and all(c.tag == "th" for c in cells):
                header_rows = 1
            values: list[str] = []
            for cell in cells:
                text = " ".join(cell.text(deep=True, separator=" ").split())
                span = (
                    int(cell.attributes.get("colspan") or 1)
                    if ((cell.attributes.get("colspan") or "1").isdigit())
                    else 1
                )
                values.extend([text] * max(1, min(span, 50)))
            grid.append(values)
        caption = node.css_first("caption")
        title = " ".join(caption.text(deep=True).split()) if caption is not None else None
        prov = Provenance(heading_path=self.heading_path(), anchor=self.anchor)
        table = build_table(grid, prov, title=title, header_rows=header_rows or None)
        if table is not None:
            text = table.to_markdown() if not title else f"{title}\n{table.to_markdown()}"
            block = Block(text, "table", prov, table_index=len(self.tables))
            self.blocks.append(block)
            self.tables.append(table)

    def walk(self, node: LexborNode) -> None:
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag != "-text" and child.attributes.get("id"):
                if tag in _HEADINGS or tag in _BLOCKS or tag in ("table", "pre"):
                    self.flush_text()
                self.anchor = child.attributes.get("id")
            if tag == "-text":
                self.buffer.append(child.text_content or "")
            elif tag in _HEADINGS:
                self.flush_section()
                level = _HEADINGS[tag]
                name = " ".join(child.text(deep=True, separator=" ").split())
                if name:
                    while self.path and self.path[-1][0] >= level:
                        self.path.pop()
                    self.path.append((level, name))
            elif tag == "table":
                self.table(child)
            elif tag == "pre":
                self.flush_text()
                self.buffer.append(child.text(deep=True))
                self.flush_text("code")
            elif tag in _BLOCKS:
                self.flush_text()
                self.walk(child)
                self.flush_text()
            elif tag in _INLINE:
                # Walked, not flattened with a separator: "GNU/<b>Linux</b>" and
                # Chinese text have no spaces between inline elements to invent.
                self.walk(child)
            elif tag == "br":
                self.buffer.append("\n")
            elif tag in ("img",):
                alt = child.attributes.get("alt")
                if alt:
                    self.buffer.append(f" {alt} ")
            else:
                self.flush_text()
                self.walk(child)
                self.flush_text()


def extract_html(data: bytes) -> ExtractedDocument:
    """Sections per heading of the page's main content; tables kept as tables."""
    parser = LexborHTMLParser(decode_text(data))
    title_node = parser.css_first("title")
    title = " ".join(title_node.text().split()) if title_node is not None else None
    for node in parser.css(_DROP):
        node.decompose()
    root = (
        parser.css_first("main")
        or parser.css_first("article")
        or parser.css_first("[role=main]")
        or parser.body
        or parser.root
    )
    walker = _Walker()
    if root is not None:
        walker.walk(root)
    walker.flush_section()
    if not title:
        first = parser.css_first("h1")
        title = " ".join(first.text().split()) if first is not None else None
    return ExtractedDocument(
        mime_type="text/html",
        title=title or None,
        sections=tuple(walker.sections),
        tables=tuple(walker.tables),
    )

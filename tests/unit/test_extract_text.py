"""Plain text, Markdown and HTML: structure, exact offsets, main content, tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from grounded.ingest import chunk_document, extract

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"
REPO = Path(__file__).resolve().parents[2]


def test_plain_text_offsets_point_back_into_the_source() -> None:
    data = (DOCS / "crazyones.txt").read_bytes()
    source = data.decode("utf-8")
    document = extract(data, "crazyones.txt")
    assert document.mime_type == "text/plain" and document.language == "en"
    for chunk in chunk_document(document):
        start, end = chunk.provenance.char_start, chunk.provenance.char_end
        assert start is not None and end is not None
        assert source[start:end] == chunk.text


def test_markdown_headings_become_paths_and_offsets_are_exact() -> None:
    data = (REPO / "docs" / "architecture.md").read_bytes()
    source = data.decode("utf-8")
    document = extract(data, "architecture.md")
    assert document.mime_type == "text/markdown"
    assert document.title
    paths = {s.heading_path for s in document.sections}
    assert any(len(p) >= 2 for p in paths), "nested headings give nested paths"
    for section in document.sections:
        for block in section.blocks:
            start, end = block.provenance.char_start, block.provenance.char_end
            assert start is not None and end is not None
            if block.modality != "table":
                assert source[start:end] == block.text


def test_markdown_pipe_table_and_fenced_code() -> None:
    text = (
        "# Prices\n\nIntro line.\n\n| tier | price |\n|---|---:|\n| 1 | 9.50 |\n| 2 | 19 |\n\n"
        "```python\nprint('x')\n```\n"
    )
    document = extract(text.encode(), "notes.md")
    (table,) = document.tables
    assert table.header == ("tier", "price")
    assert [c.value for c in table.rows[0]] == [1, 9.5]
    kinds = [b.modality for b in document.sections[0].blocks]
    assert kinds == ["text", "table", "code"]


HTML = b"""<!doctype html><html><head><title>Pricing - Acme</title>
<style>.x{}</style><script>var secret = 1;</script></head><body>
<nav><a href="/">Home</a> | <a href="/about">About us</a></nav>
<main><h1>Pricing</h1><p>Our plans, as of <b>2024</b>.</p>
<h2 id="tiers">Tiers</h2><table><caption>Monthly</caption>
<tr><th>Tier</th><th>Price</th></tr><tr><td>Basic</td><td>10</td></tr>
<tr><td>Pro</td><td>25.5</td></tr></table>
<ul><li>Cancel any time</li><li>VAT included</li></ul></main>
<footer>Copyright Acme</footer></body></html>"""


def test_html_main_content_headings_and_tables() -> None:
    document = extract(HTML, "page.html")
    assert document.title == "Pricing - Acme"
    text = document.text
    assert "About us" not in text and "Copyright" not in text and "secret" not in text
    assert "Our plans, as of 2024 ." in text or "Our plans, as of 2024." in text
    (table,) = document.tables
    assert table.header == ("Tier", "Price") and table.title == "Monthly"
    assert table.rows[1][1].value == 25.5
    tiers = next(s for s in document.sections if s.heading_path == ("Pricing", "Tiers"))
    assert [b.modality for b in tiers.blocks] == ["table", "text", "text"]
    assert all(b.provenance.anchor == "tiers" for b in tiers.blocks)


def test_debian_reference_style_html_chapter_keeps_headings_and_tables() -> None:
    """A real HTML chapter when the debian-reference package is installed (bench data)."""
    path = Path("/usr/share/debian-reference/ch01.en.html")
    if not path.exists():
        pytest.skip("debian-reference-en is not installed (apt-get install debian-reference-en)")
    document = extract(path.read_bytes(), path.name)
    assert document.title and "GNU/Linux tutorials" in document.title
    assert len(document.tables) > 10
    assert any(len(s.heading_path) >= 2 for s in document.sections)
    assert sum(1 for s in document.sections for b in s.blocks if b.provenance.anchor) > 10


def test_html_file_with_wrong_extension_is_read_as_html() -> None:
    document = extract(HTML, "page.txt")
    assert document.mime_type == "text/html"
    assert document.tables


def test_source_files_are_code_chunks_with_exact_offsets() -> None:
    source_path = REPO / "src" / "grounded" / "ingest" / "limits.py"
    data = source_path.read_bytes()
    document = extract(data, "limits.py")
    chunks = chunk_document(document)
    assert chunks and all(c.modality == "code" for c in chunks)
    text = data.decode("utf-8")
    for chunk in chunks:
        assert text[chunk.provenance.char_start : chunk.provenance.char_end] == chunk.text

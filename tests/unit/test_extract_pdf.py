"""PDF extraction on real files nobody here wrote (pypdf and tabula-py fixtures).

Expected values come from the fixtures' own companion files (crazyones.txt,
data_1.csv, campaign_donors.csv, MultiColumn.csv), not from our output.
"""

from __future__ import annotations

import csv
import unicodedata
from pathlib import Path

import pytest

from grounded.errors import ExtractionError
from grounded.ingest import chunk_document, extract
from grounded.ingest.records import Table

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"
if not DOCS.exists():  # CI clones main next to a copy of shared/
    DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "evaldata" / "documents"


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _read(name: str) -> bytes:
    return (DOCS / name).read_bytes()


def _csv(name: str) -> list[list[str]]:
    with (DOCS / name).open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _cells(table: Table) -> list[list[str]]:
    return [[c.raw for c in row] for row in table.rows]


def test_crazyones_sentence_lands_in_a_chunk_on_page_1() -> None:
    expected = _norm((DOCS / "crazyones.txt").read_text(encoding="utf-8"))
    document = extract(_read("crazyones.pdf"), "crazyones.pdf")
    assert document.page_count == 1
    assert document.language == "en"
    assert _norm(document.text) == expected
    chunks = chunk_document(document)
    sentence = "Because the people who are crazy enough to think they can change the world"
    hits = [c for c in chunks if c.role == "child" and sentence in _norm(c.text)]
    assert hits, "the known sentence is in no child chunk"
    assert all(c.provenance.page == 1 and c.provenance.bbox is not None for c in hits)
    parent = chunks[hits[0].parent_ordinal or 0]
    assert parent.role == "parent" and sentence in _norm(parent.text)


def test_data_pdf_table_matches_the_fixture_csv_cell_by_cell() -> None:
    expected = _csv("data_1.csv")  # header row + 32 cars, the table on page 1
    document = extract(_read("data.pdf"), "data.pdf")
    first = next(t for t in document.tables if t.provenance.page == 1)
    assert list(first.header[1:]) == expected[0][1:]
    assert _cells(first) == expected[1:]
    wt = first.header.index("wt")
    wag = next(row for row in first.rows if row[0].raw == "Mazda RX4 Wag")
    assert wag[wt].kind == "float" and wag[wt].value == 2.875
    assert first.column_kinds[first.header.index("cyl")] == "int"
    assert first.provenance.bbox is not None
    # The table is indexed as a table chunk, not smeared into prose.
    chunks = chunk_document(document)
    table_chunks = [c for c in chunks if c.role == "child" and c.modality == "table"]
    assert any("| Mazda RX4 Wag | 21.0 |" in c.text for c in table_chunks)
    prose = " ".join(c.text for c in chunks if c.role == "child" and c.modality == "text")
    assert "Mazda RX4 Wag" not in prose


def test_campaign_donors_spanish_table_rows_match_the_csv() -> None:
    # The CSV's last line is tabula's reading of the page footer, not a donor.
    expected = [line for line in _csv("campaign_donors.csv") if line[4]]
    header = expected[0][1:]
    document = extract(_read("campaign_donors.pdf"), "campaign_donors.pdf")
    (table,) = document.tables
    assert table.provenance.page == 1
    by_cuit = {row[table.header.index("Cuit")].raw: row for row in table.rows}
    for line in expected[1:]:
        record = dict(zip(header, line[1:], strict=True))
        row = by_cuit[record["Cuit"]]
        assert row[table.header.index("Apellido")].raw == record["Apellido"]
        assert row[table.header.index("Nombre")].raw == record["Nombre"]
        fecha = row[table.header.index("Fecha")]
        assert fecha.raw == record["Fecha"] and fecha.kind == "date"
        # "$ 10.000,00": the "$" is a separate column in the PDF layout
        assert record["Importe"].endswith(row[table.header.index("Importe")].raw)
    assert len(by_cuit) == len(expected) - 1


def test_multicolumn_pdf_table_matches_the_csv() -> None:
    expected = _csv("MultiColumn.csv")
    document = extract(_read("MultiColumn.pdf"), "MultiColumn.pdf")
    (table,) = document.tables
    got = [[c.raw for c in row] for row in table.rows]
    # The PDF prints the three-column CSV as two side-by-side blocks.
    left = [row[:3] for row in got]
    right = [row[3:] for row in got if any(row[3:])]
    assert left + right == expected
    assert table.column_kinds == ("int",) * 6


def test_statistical_abstract_table_is_kept_as_a_table() -> None:
    document = extract(_read("12s0324.pdf"), "12s0324.pdf")
    assert document.title == "Arrests by Sex and Age"
    assert document.tables
    assert "Table 324" in _norm(document.text) or "Table 3" in _norm(document.text)


def test_multilang_pdf_keeps_arabic_and_russian_text() -> None:
    document = extract(_read("multilang.pdf"), "multilang.pdf")
    text = document.text
    assert "Hello World" in text and "Привет, мир" in text and "مرحبا بالعالم" in text


def test_encrypted_pdf_fails_cleanly() -> None:
    with pytest.raises(ExtractionError) as info:
        extract(_read("crazyones-encrypted-256.pdf"), "crazyones-encrypted-256.pdf")
    assert info.value.reason == "encrypted"
    assert "password" in info.value.message


def test_truncated_pdf_fails_cleanly() -> None:
    data = _read("data.pdf")
    with pytest.raises(ExtractionError) as info:
        extract(data[: len(data) // 3], "data.pdf")
    assert info.value.reason in ("truncated", "corrupt")
    assert info.value.code == "extraction_failed"


def test_scan_without_ocr_engine_warns_instead_of_inventing_text() -> None:
    from io import BytesIO

    import pypdfium2 as pdfium

    page = pdfium.PdfDocument(_read("Seige_of_Vicksburg_Sample_OCR.pdf"))[0]
    image = page.render(scale=1).to_pil()
    buffer = BytesIO()
    image.save(buffer, format="PDF")
    document = extract(buffer.getvalue(), "scan.pdf")
    assert document.sections == ()
    assert any("no text layer" in w for w in document.warnings)


def test_two_columns_stay_apart_in_reading_order() -> None:
    from grounded.ingest.extract.layout import Line, group_lines, paragraphs

    # Content-stream order of a two-column page: the left column, then the right.
    left = [Line(f"left {i}", (50, 100 + 12 * i, 250, 110 + 12 * i)) for i in range(3)]
    right = [Line(f"right {i}", (320, 100 + 12 * i, 520, 110 + 12 * i)) for i in range(3)]
    lines = group_lines(left + right)
    assert [line.text for line in lines] == [f"left {i}" for i in range(3)] + [
        f"right {i}" for i in range(3)
    ]
    assert [p.text for p in paragraphs(lines)] == [
        "left 0\nleft 1\nleft 2",
        "right 0\nright 1\nright 2",
    ]


def test_page_limit_and_missing_end_marker() -> None:
    from grounded.ingest.limits import ExtractionLimits

    with pytest.raises(ExtractionError) as info:
        extract(_read("data.pdf"), "data.pdf", limits=ExtractionLimits(max_pages=2))
    assert info.value.reason == "too_large" and "3 pages" in info.value.message
    data = _read("crazyones.pdf")
    cut = data[: data.rindex(b"%%EOF")]
    document = extract(cut, "crazyones.pdf")
    assert any("end-of-file marker" in w for w in document.warnings)


def test_table_chunks_are_never_given_a_wrong_language() -> None:
    # Upper-case names and numbers are not enough evidence: "unsure" (None) is
    # right, a confident wrong label is not. Numbers alone have no language.
    document = extract(_read("campaign_donors.pdf"), "campaign_donors.pdf")
    chunks = [c for c in chunk_document(document) if c.modality == "table" and c.role == "child"]
    assert chunks and all(c.language in ("es", None) for c in chunks)
    numbers = extract(_read("MultiColumn.pdf"), "MultiColumn.pdf")
    assert all(c.language is None for c in chunk_document(numbers))


def test_chinese_pdf_sentence_lands_on_its_page_under_its_outline_heading() -> None:
    """Debian Reference zh-cn (installed by .ci/run): a sentence of the HTML edition
    of chapter 1 is found on PDF page 29, under the outline's chapter heading."""
    import re

    from grounded.ingest.extract.pdf import PdfOptions

    path = Path("/usr/share/debian-reference/debian-reference.zh-cn.pdf")
    if not path.exists():
        pytest.skip("debian-reference-zh-cn is not installed (apt-get install it)")
    sentence = "我认为学习一个计算机系统，就像学习一门新的外语。"
    data = path.read_bytes()
    document = extract(data, path.name, pdf=PdfOptions(tables=False, pages=(27, 31)))
    assert {s.blocks[0].provenance.page for s in document.sections} == set(range(27, 32))
    chunks = chunk_document(document)
    hits = [c for c in chunks if c.role == "child" and sentence in re.sub(r"\s+", "", c.text)]
    assert hits and all(c.provenance.page == 29 for c in hits)
    assert hits[0].language == "zh"
    assert hits[0].provenance.heading_path[0] == "GNU/Linux 教程"
    # Page 36 has no outline entry of its own: a range starting there still
    # carries the heading in force from page 35.
    (section,) = extract(data, path.name, pdf=PdfOptions(tables=False, pages=(36, 36))).sections
    assert section.heading_path and section.heading_path[0] == "GNU/Linux 教程"

"""DOCX, PPTX, XLSX and CSV extraction on the python-docx / python-pptx / tabula fixtures."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from grounded.ingest import chunk_document, extract

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"


def _read(name: str) -> bytes:
    return (DOCS / name).read_bytes()


def test_docx_heading_becomes_the_section_path() -> None:
    document = extract(_read("test.docx"), "test.docx")
    (section,) = document.sections
    assert section.heading_path == ("python-docx was here!",)
    assert section.blocks[0].text == "python-docx was here too!"
    chunks = chunk_document(document)
    assert chunks[0].role == "parent" and chunks[0].text.startswith("python-docx was here!")
    assert chunks[1].provenance.heading_path == ("python-docx was here!",)


def test_docx_table_stays_between_its_paragraphs() -> None:
    document = extract(_read("blk-inner-content.docx"), "blk-inner-content.docx")
    blocks = [(b.modality, b.text) for s in document.sections for b in s.blocks]
    assert [m for m, _ in blocks] == ["text", "table", "text"]
    assert blocks[0][1] == "P1" and blocks[2][1] == "P3"
    (table,) = document.tables
    assert table.rows[0][0].raw == "T2"


def test_docx_images_become_assets_with_dimensions() -> None:
    document = extract(_read("having-images.docx"), "having-images.docx")
    assert len(document.assets) == 3
    assert all(a.kind == "image" and a.width and a.height for a in document.assets)
    assert all(a.media_type.startswith("image/") for a in document.assets)
    assert any("not searchable" in w for w in document.warnings)


def test_pptx_table_cell_lands_in_the_right_row_and_column() -> None:
    document = extract(_read("tbl-cell.pptx"), "tbl-cell.pptx")
    grid = next(t for t in document.tables if t.header == ("a", "b", "c"))
    assert grid.provenance.slide == 3
    assert [[c.raw for c in row] for row in grid.rows] == [["d", "e", "f"], ["g", "h", "i"]]
    first = document.tables[0]
    assert first.provenance.slide == 1
    assert first.header[0] == "having custom margins"
    assert first.rows[0][0].raw == "unladen swallows"


def test_pptx_speaker_notes_are_indexed_with_their_slide() -> None:
    document = extract(_read("sld-notes.pptx"), "sld-notes.pptx")
    notes = [b for s in document.sections for b in s.blocks if b.provenance.part == "notes"]
    assert notes and notes[0].provenance.slide == 1
    chunks = chunk_document(document)
    assert any(c.provenance.part == "notes" and c.provenance.slide == 1 for c in chunks)


def test_pptx_pictures_become_assets_on_their_slide() -> None:
    document = extract(_read("shp-picture.pptx"), "shp-picture.pptx")
    assert len(document.assets) == 2  # four pictures, two distinct images: stored once each
    assert all(a.provenance.slide is not None for a in document.assets)


def test_xlsx_sheet_is_a_table_with_sheet_and_cell_range() -> None:
    document = extract(_read("shp-embedded-xlsx.xlsx"), "shp-embedded-xlsx.xlsx")
    (table,) = document.tables
    assert table.provenance.sheet == "Sheet1"
    assert table.provenance.cell_range == "A1:A3"
    assert [c.value for row in table.rows for c in row] == [1, 2, 3]
    assert table.column_kinds == ("int",)


def test_xlsx_header_types_and_merged_cells(tmp_path: Path) -> None:
    # Written by openpyxl here, because no fixture has merged cells; the values
    # are the tabula-py data_1.csv rows so the content is still not ours.
    from openpyxl import Workbook

    with (DOCS / "data_1.csv").open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "cars"
    sheet.append(["Motor Trend 1974", None, None])
    sheet.merge_cells("A1:C1")
    sheet.append(["car", "mpg", "cyl"])
    for row in rows[1:]:
        sheet.append([row[0], float(row[1]), int(row[2])])
    buffer = io.BytesIO()
    book.save(buffer)
    document = extract(buffer.getvalue(), "cars.xlsx")
    (table,) = document.tables
    # the merged banner row is read across its range and taken as the title
    assert table.title == "Motor Trend 1974"
    assert table.header == ("car", "mpg", "cyl")
    assert table.rows[0][0].raw == "Mazda RX4"
    hornet = next(r for r in table.rows if r[0].raw == "Hornet 4 Drive")
    assert hornet[1].kind == "float" and hornet[1].value == 21.4
    assert hornet[2].kind == "int" and hornet[2].value == 6
    chunks = chunk_document(document)
    table_children = [c for c in chunks if c.role == "child"]
    assert table_children[0].provenance.sheet == "cars"
    assert table_children[0].provenance.cell_range.startswith("A3:C")  # type: ignore[union-attr]


def test_csv_is_one_typed_table() -> None:
    document = extract(_read("data_1.csv"), "data_1.csv")
    (table,) = document.tables
    assert table.header[1:4] == ("mpg", "cyl", "disp")
    assert table.rows[0][0].raw == "Mazda RX4"
    assert table.column_kinds[1:3] == ("float", "int")
    chunks = chunk_document(document)
    children = [c for c in chunks if c.role == "child"]
    assert children[0].provenance.cell_range == "A2:L17"
    assert all(c.parent_ordinal == 0 for c in children)


def test_docx_heading_levels_lists_and_typed_table() -> None:
    # Built with python-docx's own default template, since no fixture has
    # nested headings, lists and a numeric table together.
    import docx

    doc = docx.Document()
    doc.add_heading("Annual report", level=0)
    doc.add_heading("Sales", level=1)
    doc.add_paragraph("Figures by region.")
    doc.add_paragraph("North grew fastest", style="List Bullet")
    doc.add_paragraph("South was flat", style="List Number")
    doc.add_heading("By quarter", level=2)
    table = doc.add_table(rows=3, cols=3)
    for r, row in enumerate([["region", "q1", "q2"], ["North", "10", "12.5"], ["South", "8", "8"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    doc.add_heading("Costs", level=1)
    doc.add_paragraph("Flat.")
    buffer = io.BytesIO()
    doc.save(buffer)
    document = extract(buffer.getvalue(), "report.docx")
    assert document.title == "Annual report"
    paths = [s.heading_path for s in document.sections]
    assert paths == [
        ("Annual report", "Sales"),
        ("Annual report", "Sales", "By quarter"),
        ("Annual report", "Costs"),
    ]
    sales = document.sections[0]
    assert [b.text for b in sales.blocks] == [
        "Figures by region.",
        "- North grew fastest",
        "- South was flat",
    ]
    (typed,) = document.tables
    assert typed.header == ("region", "q1", "q2")
    assert typed.column_kinds == ("text", "int", "float")
    assert typed.provenance.heading_path == ("Annual report", "Sales", "By quarter")

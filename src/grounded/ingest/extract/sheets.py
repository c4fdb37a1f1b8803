"""XLSX and CSV: each sheet (or file) one typed table with a detected header.

openpyxl runs in read-only mode (rows stream from the sheet XML, memory stays
flat on large workbooks) with ``data_only=True`` (the cached value of a
formula, which is what the user saw). Read-only mode does not expose merged
ranges, so they are read from the sheet part's ``<mergeCell>`` elements with
a streaming, entity-refusing parser; the top-left value is copied into every
cell of a merged range, so a header spanning columns or a row label spanning
rows survives as a value in each typed row (seed 001 ADR-003).
"""

from __future__ import annotations

import csv
import io
import zipfile
from typing import Any

from defusedxml.ElementTree import iterparse

from grounded.errors import ExtractionError
from grounded.ingest.extract.text import decode_text
from grounded.ingest.limits import ExtractionLimits
from grounded.ingest.records import Block, ExtractedDocument, Provenance, Section, Table
from grounded.ingest.tables import Native, build_table, column_letter

_MAX_EMPTY_RUN = 1000  # consecutive empty rows after which a sheet is taken to have ended


def _merged_ranges(data: bytes, part: str) -> list[tuple[int, int, int, int]]:
    """(min_row, min_col, max_row, max_col) of every merged range in one sheet part."""
    from openpyxl.utils.cell import range_boundaries

    out: list[tuple[int, int, int, int]] = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive, archive.open(part.lstrip("/")) as stream:
        for _event, element in iterparse(stream, events=("end",)):
            if element.tag.endswith("}mergeCell"):
                ref = element.get("ref")
                if ref:
                    min_col, min_row, max_col, max_row = range_boundaries(ref)
                    if None not in (min_col, min_row, max_col, max_row):
                        out.append((min_row, min_col, max_row, max_col))  # type: ignore[arg-type]
            element.clear()
    return out


def _fill_merged(grid: list[list[Native]], ranges: list[tuple[int, int, int, int]]) -> None:
    for min_row, min_col, max_row, max_col in ranges:
        if min_row - 1 >= len(grid):
            continue
        top = grid[min_row - 1]
        value = top[min_col - 1] if min_col - 1 < len(top) else None
        for r in range(min_row - 1, min(max_row, len(grid))):
            row = grid[r]
            if len(row) < max_col:
                row.extend([None] * (max_col - len(row)))
            for c in range(min_col - 1, max_col):
                row[c] = value


def _cell_range(grid: list[list[Native]], first_row: int) -> str:
    used_cols = [i for row in grid for i, v in enumerate(row) if v not in (None, "")]
    used_rows = [i for i, row in enumerate(grid) if any(v not in (None, "") for v in row)]
    if not used_cols:
        return ""
    c0, c1 = min(used_cols) + 1, max(used_cols) + 1
    r0, r1 = first_row + min(used_rows), first_row + max(used_rows)
    return f"{column_letter(c0)}{r0}:{column_letter(c1)}{r1}"


def extract_xlsx(data: bytes, *, limits: ExtractionLimits) -> ExtractedDocument:
    """One section and one table per non-empty sheet, provenance = sheet + cell range."""
    from openpyxl import load_workbook

    workbook: Any = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    sections: list[Section] = []
    tables: list[Table] = []
    warnings: list[str] = []
    budget = limits.max_cells
    try:
        for sheet in workbook.worksheets:
            if not hasattr(sheet, "iter_rows"):
                continue  # chartsheets hold no cells
            grid: list[list[Native]] = []
            empty_run = 0
            for row in sheet.iter_rows(values_only=True):
                budget -= len(row)
                if budget < 0:
                    raise ExtractionError(
                        f"the workbook has more than {limits.max_cells:,} cells; "
                        "split it or export the sheets you need as CSV",
                        reason="too_large",
                    )
                values = list(row)
                empty_run = 0 if any(v not in (None, "") for v in values) else empty_run + 1
                if empty_run > _MAX_EMPTY_RUN:
                    warnings.append(
                        f"sheet {sheet.title!r}: stopped after {_MAX_EMPTY_RUN} empty rows"
                    )
                    break
                grid.append(values)
            part = getattr(sheet, "_worksheet_path", None)
            if part:
                _fill_merged(grid, _merged_ranges(data, part))
            rng = _cell_range(grid, 1)
            prov = Provenance(
                sheet=sheet.title, cell_range=rng or None, heading_path=(sheet.title,)
            )
            table = build_table(grid, prov, title=sheet.title, first_row=1)
            if table is None:
                continue
            block = Block(table.to_markdown(), "table", prov, table_index=len(tables))
            tables.append(table)
            sections.append(Section(heading_path=(sheet.title,), blocks=(block,)))
    finally:
        workbook.close()
    return ExtractedDocument(
        mime_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        title=None,
        sections=tuple(sections),
        tables=tuple(tables),
        warnings=tuple(warnings),
    )


def extract_csv(data: bytes, *, limits: ExtractionLimits) -> ExtractedDocument:
    """The file as one table; delimiter sniffed (``,`` ``;`` tab ``|``), header detected."""
    text = decode_text(data)
    try:
        dialect: Any = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    grid: list[list[Native]] = []
    cells = 0
    try:
        for row in csv.reader(io.StringIO(text), dialect):
            cells += len(row)
            if cells > limits.max_cells:
                raise ExtractionError(
                    f"the CSV file has more than {limits.max_cells:,} cells; split it",
                    reason="too_large",
                )
            grid.append(list(row))
    except csv.Error as exc:
        raise ExtractionError(
            f"the CSV file is malformed ({exc}); check its quoting", reason="corrupt"
        ) from exc
    rng = _cell_range(grid, 1)
    prov = Provenance(cell_range=rng or None)
    table = build_table(grid, prov, first_row=1)
    if table is None:
        return ExtractedDocument(mime_type="text/csv", title=None, sections=())
    block = Block(table.to_markdown(), "table", prov, table_index=0)
    return ExtractedDocument(
        mime_type="text/csv",
        title=None,
        sections=(Section(heading_path=(), blocks=(block,)),),
        tables=(table,),
    )

"""From a grid of strings (or native spreadsheet values) to a typed ``Table``.

Shared by every extractor that finds tables (PDF, HTML, DOCX, PPTX, XLSX,
CSV), so a cell is typed the same way wherever it came from (seed 001
ADR-003: typed rows for SQL). Typing is conservative: a value becomes a
number or a date only when the whole cell reads as one, so "20-27083460-5"
or "$ 10.000,00" stay text rather than turning into a wrong number.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from grounded.ingest.records import Cell, Provenance, Table

_INT = re.compile(r"^[+-]?\d{1,18}$")
_INT_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)$")
_FLOAT_GROUPED = re.compile(r"^[+-]?\d{1,3}(,\d{3})+\.\d+$")
_BOOLS = {"true": True, "false": False, "yes": True, "no": False}
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d/%m/%Y", "%d.%m.%Y")

Native = str | int | float | bool | dt.date | dt.datetime | None


def typed_cell(value: Native) -> Cell:
    """A ``Cell`` from a native value (spreadsheets) or a string (everything else)."""
    if value is None:
        return Cell("empty", None, "")
    if isinstance(value, bool):
        return Cell("bool", value, "TRUE" if value else "FALSE")
    if isinstance(value, int):
        return Cell("int", value, str(value))
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return Cell("int", int(value), str(int(value)))
        return Cell("float", value, repr(value))
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return Cell("date", value.date(), value.date().isoformat())
        return Cell("text", value.isoformat(), value.isoformat())
    if isinstance(value, dt.date):
        return Cell("date", value, value.isoformat())
    return _typed_text(str(value))


def _typed_text(raw: str) -> Cell:
    text = " ".join(raw.split())
    if not text:
        return Cell("empty", None, "")
    if _INT.match(text):
        return Cell("int", int(text), text)
    if _INT_GROUPED.match(text):
        return Cell("int", int(text.replace(",", "")), text)
    if _FLOAT.match(text):
        return Cell("float", float(text), text)
    if _FLOAT_GROUPED.match(text):
        return Cell("float", float(text.replace(",", "")), text)
    if text.lower() in _BOOLS:
        return Cell("bool", _BOOLS[text.lower()], text)
    if 8 <= len(text) <= 10 and text[0].isdigit():
        for fmt in _DATE_FORMATS:
            try:
                return Cell("date", dt.datetime.strptime(text, fmt).date(), text)
            except ValueError:
                continue
    return Cell("text", text, text)


def _trim(grid: list[list[Cell]], first_row: int) -> tuple[list[list[Cell]], list[int]]:
    """Drop rows and columns empty throughout, pad rows to one width; keep row numbers."""
    numbered = [
        (first_row + i, row) for i, row in enumerate(grid) if any(c.kind != "empty" for c in row)
    ]
    if not numbered:
        return [], []
    width = max(len(r) for _, r in numbered)
    rows = [r + [Cell("empty", None, "")] * (width - len(r)) for _, r in numbered]
    keep = [i for i in range(width) if any(r[i].kind != "empty" for r in rows)]
    return [[r[i] for i in keep] for r in rows], [n for n, _ in numbered]


def _is_header(first: Sequence[Cell], rest: Sequence[Sequence[Cell]]) -> bool:
    """A first row is a header when it is all text (or empty) and unlike the body.

    "Unlike" means: some column whose body holds numbers, dates or bools has a
    text label on top, or (all-text tables) the first row has no empty cell and
    no value that repeats in its column below.
    """
    if not rest or any(c.kind not in ("text", "empty") for c in first):
        return False
    if sum(c.kind == "text" for c in first) < max(1, len(first) // 2):
        return False
    for col, head in enumerate(first):
        body = {r[col].kind for r in rest} - {"empty"}
        if head.kind == "text" and body and body != {"text"}:
            return True
    if any(c.kind == "empty" for c in first):
        return False
    return all(all(r[col].raw != head.raw for r in rest) for col, head in enumerate(first))


def build_table(
    grid: Sequence[Sequence[Native]],
    provenance: Provenance,
    *,
    title: str | None = None,
    header_rows: int | None = None,
    first_row: int = 1,
) -> Table | None:
    """A typed ``Table`` from a grid, or ``None`` if fewer than one row remains.

    ``header_rows`` forces the header decision (``1``: first row is the header,
    ``0``: no header) when the source marks it (HTML ``<th>``); otherwise it is
    detected. Missing or duplicate header names get ``column_N`` / ``name_2``.
    ``first_row`` is the source row number of ``grid[0]`` (spreadsheets, CSV).
    """
    cells, numbers = _trim([[typed_cell(v) for v in row] for row in grid], first_row)
    if not cells:
        return None
    banner = {c.raw for c in cells[0]} - {""}
    if len(cells) > 2 and len(cells[0]) > 1 and len(banner) == 1:
        # A merged title row ("Sales 2024" across all columns) is a title, not a header.
        title = banner.pop()
        cells, numbers = cells[1:], numbers[1:]
    detected = _is_header(cells[0], cells[1:]) if header_rows is None else header_rows > 0
    if detected and len(cells) > 1:
        names = [c.raw or f"column_{i + 1}" for i, c in enumerate(cells[0])]
        body = cells[1:]
        numbers = numbers[1:]
    else:
        detected = False
        names = [f"column_{i + 1}" for i in range(len(cells[0]))]
        body = cells
    seen: dict[str, int] = {}
    unique = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        unique.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    return Table(
        header=tuple(unique),
        rows=tuple(tuple(r) for r in body),
        provenance=provenance,
        header_detected=detected,
        title=title,
        row_numbers=tuple(numbers),
    )


def column_letter(index: int) -> str:
    """Spreadsheet column name for a 1-based index: 1 -> A, 27 -> AA."""
    letters = ""
    while index > 0:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters

"""Content-based detection: magic bytes and zip members, the name only as a hint."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from grounded.errors import ExtractionError
from grounded.ingest import detect, extract
from grounded.ingest.limits import ExtractionLimits

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("crazyones.pdf", "pdf"),
        ("test.docx", "docx"),
        ("tbl-cell.pptx", "pptx"),
        ("shp-embedded-xlsx.xlsx", "xlsx"),
        ("monty-truth.png", "image"),
        ("data_1.csv", "csv"),
        ("crazyones.txt", "text"),
    ],
)
def test_fixtures_are_detected_by_content(name: str, kind: str) -> None:
    data = (DOCS / name).read_bytes()
    assert detect(data, name).kind == kind
    assert detect(data, "renamed.bin").kind == (kind if kind not in ("csv",) else "text")


def test_office_kind_comes_from_zip_members_not_the_name() -> None:
    data = (DOCS / "tbl-cell.pptx").read_bytes()
    found = detect(data, "slides.docx")
    assert found.kind == "pptx"
    assert found.warning is not None and ".docx" in found.warning


def test_pdf_named_docx_is_read_as_pdf_with_a_warning() -> None:
    document = extract((DOCS / "crazyones.pdf").read_bytes(), "letter.docx")
    assert document.mime_type == "application/pdf"
    assert any("named .docx" in w for w in document.warnings)


def test_text_starting_with_bm_is_text_not_a_bitmap() -> None:
    """Found by the SciFact eval: abstract 1996292 begins "BMI-1 is overexpressed"."""
    assert detect(b"BMI-1 is overexpressed in a variety of cancers.", "1996292.txt").kind == "text"
    bitmap = io.BytesIO()
    Image.new("RGB", (2, 2)).save(bitmap, format="BMP")
    assert detect(bitmap.getvalue(), "x.bmp").kind == "image"


def test_binary_named_as_text_is_refused_with_a_reason() -> None:
    data = bytes(range(256)) * 40
    with pytest.raises(ExtractionError) as info:
        detect(data, "notes.txt")
    assert info.value.reason == "wrong_type"
    assert ".txt" in info.value.message


def test_unknown_binary_without_a_name_is_unsupported() -> None:
    with pytest.raises(ExtractionError) as info:
        detect(bytes(range(256)) * 40)
    assert info.value.reason == "unsupported_type"


def test_plain_zip_and_legacy_office_are_refused() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(ExtractionError) as info:
        detect(buffer.getvalue(), "report.docx")
    assert info.value.reason == "unsupported_type"
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512
    with pytest.raises(ExtractionError) as info:
        detect(ole, "old.doc")
    assert info.value.reason == "unsupported_type" and ".docx" in info.value.message


def test_zero_byte_and_oversized_files_are_refused() -> None:
    with pytest.raises(ExtractionError) as info:
        detect(b"", "empty.pdf")
    assert info.value.reason == "empty"
    with pytest.raises(ExtractionError) as info:
        detect(b"x" * 2048, "big.txt", limits=ExtractionLimits(max_bytes=1024))
    assert info.value.reason == "too_large"


def test_truncated_office_file_is_refused_as_truncated() -> None:
    data = (DOCS / "test.docx").read_bytes()
    with pytest.raises(ExtractionError) as info:
        extract(data[: len(data) // 2], "test.docx")
    assert info.value.reason == "truncated"


def test_legacy_encoded_text_is_text_and_decodes() -> None:
    # crazyones.txt re-encoded as Windows-1252 (what older editors save).
    text = (
        (DOCS / "crazyones.txt").read_text(encoding="utf-8").replace("ﬁ", "fi").replace("ﬀ", "ff")
    )
    data = (text + " Café, naïve, déjà vu.").encode("cp1252")
    assert detect(data, "old.txt").kind == "text"
    document = extract(data, "old.txt")
    assert "Café, naïve, déjà vu." in document.text
    assert "Heres to the crazy ones" in document.text


def test_gbk_encoded_chinese_text_decodes() -> None:
    import json

    data = json.loads((DOCS.parent / "cmrc2018_trial.json").read_text(encoding="utf-8"))
    paragraph = data["data"][0]["paragraphs"][0]["context"]
    document = extract(paragraph.encode("gbk", errors="ignore"), "legacy.txt")
    assert document.text[:40] == paragraph[:40]
    assert document.language == "zh"

"""Bad input (issue 6): each hostile file is refused with a reason, in bounded memory.

Bombs are built here from real fixtures (test.docx, the xlsx) with one part
swapped, so everything but the attack is a genuine office file. Peak memory
is measured in a fresh subprocess with ``resource.getrusage``.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from grounded.errors import ExtractionError
from grounded.ingest import extract, safe_filename
from grounded.ingest.limits import ExtractionLimits

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"""

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body><w:p><w:r><w:t>&xxe;</w:t></w:r></w:p></w:body></w:document>"""


def _swap(fixture: str, member: str, content: bytes) -> bytes:
    """The fixture with one zip member replaced."""
    source = zipfile.ZipFile(DOCS / fixture)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            data = content if info.filename == member else source.read(info)
            out.writestr(info.filename, data)
    return buffer.getvalue()


def _inflating_docx(megabytes: int) -> bytes:
    """test.docx plus a member that inflates to ``megabytes`` MiB, built in bounded memory."""
    source = zipfile.ZipFile(DOCS / "test.docx")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            out.writestr(info.filename, source.read(info))
        with out.open("word/media/padding.xml", "w", force_zip64=True) as stream:
            block = b"\x00" * (1024 * 1024)
            for _ in range(megabytes):
                stream.write(block)
    return buffer.getvalue()


def _png_header(width: int, height: int) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 64)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def _peak_rss_mib(path: Path, name: str) -> tuple[float, str]:
    """Run extract() on a file in a fresh interpreter: (peak RSS MiB, outcome)."""
    script = (
        "import json, resource, sys\n"
        "from pathlib import Path\n"
        "from grounded.errors import ExtractionError\n"
        "from grounded.ingest import extract\n"
        "data = Path(sys.argv[1]).read_bytes()\n"
        "try:\n"
        "    extract(data, sys.argv[2]); outcome = 'ok'\n"
        "except ExtractionError as exc:\n"
        "    outcome = exc.reason\n"
        "print(json.dumps([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, outcome]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path), name],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    peak, outcome = json.loads(done.stdout.strip().splitlines()[-1])
    return float(peak), str(outcome)


def test_zip_bomb_by_ratio_is_refused_before_inflating() -> None:
    with pytest.raises(ExtractionError) as info:
        extract(_inflating_docx(64), "report.docx")
    assert info.value.reason == "zip_bomb"
    assert "inflates" in info.value.message


def test_zip_bomb_by_total_size_and_by_entry_count() -> None:
    data = (DOCS / "test.docx").read_bytes()
    with pytest.raises(ExtractionError) as info:
        extract(data, "test.docx", limits=ExtractionLimits(max_zip_uncompressed=10_000))
    assert info.value.reason == "zip_bomb" and "inflate" in info.value.message
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as out:
        out.writestr("word/document.xml", "<w:document/>")
        for i in range(6000):
            out.writestr(f"word/x{i}.xml", "")
    with pytest.raises(ExtractionError) as info:
        extract(buffer.getvalue(), "many.docx")
    assert info.value.reason == "zip_bomb" and "entries" in info.value.message


def test_billion_laughs_docx_is_refused() -> None:
    bomb = _swap("test.docx", "word/document.xml", BILLION_LAUGHS)
    with pytest.raises(ExtractionError) as info:
        extract(bomb, "laughs.docx")
    assert info.value.reason == "xml_hostile"


def test_external_entity_docx_and_xlsx_are_refused() -> None:
    with pytest.raises(ExtractionError) as info:
        extract(_swap("test.docx", "word/document.xml", XXE), "xxe.docx")
    assert info.value.reason == "xml_hostile"
    sheet = XXE.replace(b"w:document", b"worksheet")
    with pytest.raises(ExtractionError) as info:
        extract(_swap("shp-embedded-xlsx.xlsx", "xl/worksheets/sheet1.xml", sheet), "x.xlsx")
    assert info.value.reason == "xml_hostile"


def test_dtd_hidden_behind_a_long_comment_is_refused() -> None:
    padded = b'<?xml version="1.0"?>\n<!--' + b"<a " * 40_000 + b"-->\n" + XXE.split(b"\n", 1)[1]
    with pytest.raises(ExtractionError) as info:
        extract(_swap("test.docx", "word/document.xml", padded), "hidden.docx")
    assert info.value.reason == "xml_hostile"


def test_entity_bomb_in_html_is_neutralised_not_expanded() -> None:
    page = BILLION_LAUGHS.replace(b"w:document", b"html").replace(b'<?xml version="1.0"?>', b"")
    document = extract(b"<!doctype html>" + page, "page.html")
    assert "lollollol" not in document.text


def test_image_with_absurd_dimensions_is_refused_before_decoding() -> None:
    with pytest.raises(ExtractionError) as info:
        extract(_png_header(100_000, 100_000), "huge.png")
    assert info.value.reason == "image_too_large"
    with pytest.raises(ExtractionError) as info:
        extract(_png_header(20_000, 5_000), "wide.png")
    assert info.value.reason == "image_too_large" and "20000 x 5000" in info.value.message


def test_bombs_stay_within_bounded_memory(tmp_path: Path) -> None:
    baseline = tmp_path / "plain.docx"
    baseline.write_bytes((DOCS / "test.docx").read_bytes())
    zip_bomb = tmp_path / "zip.docx"
    zip_bomb.write_bytes(_inflating_docx(256))  # 256 MiB inflated, ~250 KiB on disk
    laughs = tmp_path / "laughs.docx"
    laughs.write_bytes(_swap("test.docx", "word/document.xml", BILLION_LAUGHS))
    pixels = tmp_path / "pixels.png"
    pixels.write_bytes(_png_header(100_000, 100_000))  # 30 GB of RGB if decoded

    base, outcome = _peak_rss_mib(baseline, "plain.docx")
    assert outcome == "ok"
    for path, reason in (
        (zip_bomb, "zip_bomb"),
        (laughs, "xml_hostile"),
        (pixels, "image_too_large"),
    ):
        peak, outcome = _peak_rss_mib(path, path.name)
        assert outcome == reason
        assert peak < base + 64, f"{path.name}: peak {peak:.0f} MiB vs baseline {base:.0f} MiB"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../../etc/passwd", "passwd"),
        ("/abs/path/report.pdf", "report.pdf"),
        ("C:\\Users\\me\\notes.txt", "notes.txt"),
        ("  résumé.docx ", "résumé.docx"),
        ("a" * 300 + ".pdf", "a" * 251 + ".pdf"),
    ],
)
def test_safe_filename_keeps_only_a_base_name(name: str, expected: str) -> None:
    assert safe_filename(name) == expected


@pytest.mark.parametrize("name", ["report\x00.pdf", "../", "..", "", "a/\n.pdf", "/"])
def test_safe_filename_refuses_nul_control_and_empty_names(name: str) -> None:
    with pytest.raises(ExtractionError) as info:
        safe_filename(name)
    assert info.value.reason == "unsafe_filename"

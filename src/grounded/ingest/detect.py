"""Content-based type detection: magic bytes first, the file name only as a hint.

The extension is never trusted alone: a PDF renamed ``.docx`` is read as a PDF
(with a warning), and a binary blob renamed ``.txt`` is refused with a reason.
Office Open XML files are zips, so the zip directory is sniffed for the
member that identifies each kind (``word/document.xml``, ...) and, failing
that, for the main content type in ``[Content_Types].xml``. Only the central
directory and that one small member are read; nothing else is inflated here.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from typing import Literal

from grounded.errors import ExtractionError
from grounded.ingest.limits import DEFAULT_LIMITS, ExtractionLimits

Kind = Literal["pdf", "docx", "pptx", "xlsx", "csv", "html", "markdown", "text", "image", "audio"]

MIME: dict[str, str] = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "csv": "text/csv",
    "html": "text/html",
    "markdown": "text/markdown",
    "text": "text/plain",
}

_EXTENSION_KIND: dict[str, Kind] = {
    "pdf": "pdf",
    "docx": "docx",
    "pptx": "pptx",
    "xlsx": "xlsx",
    "xlsm": "xlsx",
    "csv": "csv",
    "tsv": "csv",
    "html": "html",
    "htm": "html",
    "xhtml": "html",
    "md": "markdown",
    "markdown": "markdown",
    "txt": "text",
    "text": "text",
    "png": "image",
    "jpg": "image",
    "jpeg": "image",
    "gif": "image",
    "webp": "image",
    "tif": "image",
    "tiff": "image",
    "bmp": "image",
    "wav": "audio",
    "mp3": "audio",
    "flac": "audio",
    "ogg": "audio",
    "m4a": "audio",
}
_TEXT_FAMILY = {"csv", "html", "markdown", "text"}
_OOXML_MEMBERS: tuple[tuple[str, Kind], ...] = (
    ("word/document.xml", "docx"),
    ("ppt/presentation.xml", "pptx"),
    ("xl/workbook.xml", "xlsx"),
)
_OOXML_CONTENT_TYPES: tuple[tuple[bytes, Kind], ...] = (
    (b"wordprocessingml.document.main", "docx"),
    (b"presentationml.presentation.main", "pptx"),
    (b"spreadsheetml.sheet.main", "xlsx"),
)
_BMP_HEADERS = frozenset({12, 16, 40, 52, 56, 64, 108, 124})
_HTML_START = re.compile(rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)\b", re.I | re.S)


@dataclass(frozen=True)
class Detected:
    """What the bytes are. ``warning`` is set when the name disagreed with the content."""

    kind: Kind
    mime_type: str
    warning: str | None = None


def _extension(filename: str | None) -> str:
    if not filename or "." not in filename:
        return ""
    return filename.rsplit(".", 1)[-1].lower()


def _magic(data: bytes) -> tuple[Kind, str] | None:
    head = data[:64]
    if b"%PDF-" in data[:1024]:
        return "pdf", MIME["pdf"]
    images = {
        b"\x89PNG\r\n\x1a\n": "image/png",
        b"\xff\xd8\xff": "image/jpeg",
        b"GIF87a": "image/gif",
        b"GIF89a": "image/gif",
        b"II*\x00": "image/tiff",
        b"MM\x00*": "image/tiff",
    }
    for prefix, mime in images.items():
        if head.startswith(prefix):
            return "image", mime
    # "BM" alone is too weak (SciFact abstract 1996292 starts "BMI-1 is..."): a BMP
    # also names a known DIB header size at offset 14.
    if head.startswith(b"BM") and int.from_bytes(head[14:18], "little") in _BMP_HEADERS:
        return "image", "image/bmp"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image", "image/webp"
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return "audio", "audio/wav"
    if head.startswith(b"fLaC"):
        return "audio", "audio/flac"
    if head.startswith(b"OggS"):
        return "audio", "audio/ogg"
    if head.startswith(b"ID3") or head[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio", "audio/mpeg"
    if head[4:8] == b"ftyp" and head[8:11] in (b"M4A", b"mp4", b"iso"):
        return "audio", "audio/mp4"
    return None


def _sniff_zip(data: bytes) -> Kind:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ExtractionError(
            "the file starts like a zip (docx/xlsx/pptx) but its directory is missing: "
            "it is truncated or damaged; upload it again or re-save it",
            reason="truncated",
        ) from exc
    names = set(archive.namelist())
    for member, kind in _OOXML_MEMBERS:
        if member in names:
            return kind
    if "[Content_Types].xml" in names:
        info = archive.getinfo("[Content_Types].xml")
        if info.file_size <= 1024 * 1024:
            types = archive.read(info)
            for marker, kind in _OOXML_CONTENT_TYPES:
                if marker in types:
                    return kind
    raise ExtractionError(
        "the file is a zip archive but not a Word, PowerPoint or Excel document; "
        "unpack it and upload the documents inside",
        reason="unsupported_type",
    )


def _looks_textual(data: bytes) -> bool:
    """UTF-8, UTF-16 with a BOM, or a legacy encoding charset-normalizer is sure of."""
    sample = data[:8192]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    if b"\x00" in sample:
        return False
    try:
        sample.decode("utf-8-sig")
        return True
    except UnicodeDecodeError as exc:
        if exc.start >= len(sample) - 4 and len(data) > len(sample):
            return True  # the sample was cut in the middle of a character
    from charset_normalizer import from_bytes

    best = from_bytes(sample).best()
    return best is not None and best.chaos < 0.2


def detect(
    data: bytes, filename: str | None = None, *, limits: ExtractionLimits = DEFAULT_LIMITS
) -> Detected:
    """Decide what ``data`` is from its content; raise ``ExtractionError`` if unusable.

    Raises with reason ``empty`` (zero bytes), ``too_large``, ``truncated`` (a
    zip without its directory), ``unsupported_type`` (legacy Office, other
    archives, unknown binary) or ``wrong_type`` (a binary file whose name
    claims a text format, or whose name claims a format the bytes are not).
    """
    if not data:
        raise ExtractionError("the file is empty (0 bytes); upload it again", reason="empty")
    if len(data) > limits.max_bytes:
        raise ExtractionError(
            f"the file is {len(data) // (1024 * 1024)} MiB, over the "
            f"{limits.max_bytes // (1024 * 1024)} MiB limit; split it or ask an admin",
            reason="too_large",
        )
    ext = _extension(filename)
    claimed = _EXTENSION_KIND.get(ext)
    found = _magic(data)
    kind: Kind
    if found is not None:
        kind, mime = found
    elif data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        kind = _sniff_zip(data)
        mime = MIME[kind]
    elif data.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        raise ExtractionError(
            "this is a legacy Office file (.doc/.xls/.ppt) or a password-protected one; "
            "save it as .docx/.xlsx/.pptx without a password and upload that",
            reason="unsupported_type",
        )
    elif _looks_textual(data):
        if _HTML_START.match(data[:4096].lstrip(b"\xef\xbb\xbf")):
            kind = "html"
        elif claimed in _TEXT_FAMILY:
            kind = claimed  # text formats cannot be told apart by bytes alone
        elif re.search(rb"(?m)^#{1,6} \S", data[:8192]):
            kind = "markdown"
        else:
            kind = "text"
        mime = MIME[kind]
    elif claimed is not None:
        raise ExtractionError(
            f"the file is named .{ext} but its content is not a {claimed.upper()} file "
            "(wrong extension or damaged); check that you picked the right file",
            reason="wrong_type",
        )
    else:
        raise ExtractionError(
            "the file type is not supported (not PDF, Office, HTML, text, CSV, image or audio)",
            reason="unsupported_type",
        )
    warning = None
    if claimed is not None and claimed != kind and not {claimed, kind} <= _TEXT_FAMILY:
        warning = f"the file is named .{ext} but its content is {kind.upper()}; read as {kind}"
    return Detected(kind=kind, mime_type=mime, warning=warning)

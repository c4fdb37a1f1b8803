"""Defences run before any parser sees hostile bytes (issue 6, "Bad input").

Each check reads only headers or directories, never inflates or decodes the
payload, so a bomb is refused with a bounded amount of memory:

- ``safe_filename``: a user-supplied name becomes a plain base name or is refused.
- ``check_zip``: the central directory of a docx/xlsx/pptx is checked (entry
  count, declared uncompressed total, per-member ratio, member paths) before
  python-docx/pptx/openpyxl open it. Python's ``zipfile`` stops inflating at
  the declared size, so a member that lies about its size cannot inflate past
  the total checked here.
- ``check_xml_parts``: OOXML never carries a DTD, so any ``<!DOCTYPE`` in a
  part's prolog (entity bombs, XXE) refuses the file. Only the prolog is read,
  streamed, so a 100 MB sheet costs a few KB to check.
- ``check_image_header``: width x height from the header (Pillow opens lazily)
  against a pixel budget, before decoding.
"""

from __future__ import annotations

import io
import re
import unicodedata
import warnings
import zipfile
from pathlib import PurePosixPath

from grounded.errors import ExtractionError
from grounded.ingest.limits import ExtractionLimits

_MAX_NAME_BYTES = 255
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def safe_filename(name: str) -> str:
    """The base name of ``name``, NFC-normalised, safe to show and to store.

    Directory parts (``../``, ``/abs/``, ``C:\\``) are dropped, since an upload's
    name is a label, never a path. NUL and other control characters are refused
    outright: no real file name has them and they truncate names in C code.
    Raises ``ExtractionError(reason="unsafe_filename")`` when nothing usable is left.
    """
    if _CONTROL.search(name):
        raise ExtractionError(
            "the file name contains control characters (such as NUL); rename the file",
            reason="unsafe_filename",
        )
    base = unicodedata.normalize("NFC", name).replace("\\", "/").rsplit("/", 1)[-1].strip()
    if base.startswith("~"):
        base = base.lstrip("~")
    if base in ("", ".", "..") or set(base) <= {"."}:
        raise ExtractionError(
            f"the file name {name!r} has no usable base name; give the file a plain name",
            reason="unsafe_filename",
        )
    encoded = base.encode("utf-8")
    if len(encoded) > _MAX_NAME_BYTES:
        stem, dot, ext = base.rpartition(".")
        keep = ("." + ext) if dot and len(ext) <= 10 else ""
        budget = _MAX_NAME_BYTES - len(keep.encode("utf-8"))
        head = (stem if keep else base).encode("utf-8")[:budget].decode("utf-8", "ignore")
        base = head + keep
    return base


def check_zip(data: bytes, limits: ExtractionLimits) -> zipfile.ZipFile:
    """Open a zip after checking its directory; refuse bombs and odd member paths."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ExtractionError(
            "the file is a damaged or truncated zip container (docx/xlsx/pptx); "
            "re-save it from the application that made it",
            reason="truncated",
        ) from exc
    infos = archive.infolist()
    if len(infos) > limits.max_zip_entries:
        raise ExtractionError(
            f"the archive has {len(infos)} entries (limit {limits.max_zip_entries}); "
            "this looks like a zip bomb, not an office document",
            reason="zip_bomb",
            details={"entries": len(infos)},
        )
    total = 0
    for info in infos:
        path = PurePosixPath(info.filename)
        if path.is_absolute() or ".." in path.parts:
            raise ExtractionError(
                f"the archive contains an unsafe member path {info.filename!r}",
                reason="zip_bomb",
            )
        if info.flag_bits & 0x1:
            raise ExtractionError(
                "the document is encrypted; remove the password and upload it again",
                reason="encrypted",
            )
        total += info.file_size
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > 1024 * 1024 and ratio > limits.max_zip_ratio:
            raise ExtractionError(
                f"member {info.filename!r} inflates {ratio:.0f}x "
                f"(limit {limits.max_zip_ratio:.0f}x); refused as a likely zip bomb",
                reason="zip_bomb",
                details={"member": info.filename, "ratio": round(ratio)},
            )
    if total > limits.max_zip_uncompressed:
        raise ExtractionError(
            f"the archive would inflate to {total // (1024 * 1024)} MiB "
            f"(limit {limits.max_zip_uncompressed // (1024 * 1024)} MiB); refused",
            reason="zip_bomb",
            details={"uncompressed_bytes": total},
        )
    return archive


def check_xml_parts(archive: zipfile.ZipFile, limits: ExtractionLimits) -> None:
    """Refuse an OOXML package whose XML parts declare a DTD (entity bombs, XXE)."""
    for info in archive.infolist():
        if not info.filename.endswith((".xml", ".rels", ".vml")):
            continue
        with archive.open(info) as stream:
            head = stream.read(limits.max_xml_prolog)
        if _declares_dtd(head, complete=len(head) < limits.max_xml_prolog):
            raise ExtractionError(
                f"part {info.filename!r} declares a DTD (XML entities); office documents never "
                "need one and it is how entity bombs and external-entity attacks work",
                reason="xml_hostile",
                details={"member": info.filename},
            )


def _declares_dtd(head: bytes, *, complete: bool) -> bool:
    """True if the prolog declares a DTD, or is too long to have been checked.

    ``complete`` says ``head`` is the whole part; otherwise a part whose root
    element does not start within the bytes read (a prolog padded with a huge
    comment to hide a DTD further on) is refused as well.
    """
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = head.decode("utf-16", "ignore")
    else:
        text = head.decode("utf-8", "ignore")
    upper = text.upper()
    if "<!DOCTYPE" in upper or "<!ENTITY" in upper:
        return True  # markup text would be escaped (&lt;), so this is a real declaration
    # The DTD can only sit in the prolog; the root element must start within the head.
    bare = re.sub(r"<!--.*?(-->|$)|<\?.*?(\?>|$)", "", text, flags=re.S)
    return re.search(r"<[A-Za-z_]", bare) is None and not complete


def check_image_header(data: bytes, limits: ExtractionLimits) -> tuple[str, int, int]:
    """(Pillow format, width, height) from the header, refusing absurd dimensions."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            # Pillow warns above its own threshold; our limit below decides instead.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as picture:  # lazy: reads the header only
                width, height = picture.size
                fmt = picture.format or "unknown"
    except Image.DecompressionBombError as exc:
        raise ExtractionError(
            "the image claims more pixels than any document image needs; refused before decoding",
            reason="image_too_large",
        ) from exc
    except (UnidentifiedImageError, OSError) as exc:
        raise ExtractionError(
            "the image could not be read (damaged, truncated or an unknown format)",
            reason="corrupt",
        ) from exc
    if width * height > limits.max_image_pixels:
        raise ExtractionError(
            f"the image claims {width} x {height} pixels "
            f"(limit {limits.max_image_pixels:,} pixels); refused before decoding",
            reason="image_too_large",
            details={"width": width, "height": height},
        )
    return fmt, width, height

"""Hard limits every extractor checks before it spends memory or time.

Built once by the caller (from settings) and passed down; the defaults fit a
worker with a few GiB of memory. Each limit exists because some input can make
a parser allocate far more than the file's size: a zip that inflates 1000x, an
image header that claims 100,000 x 100,000 pixels, a spreadsheet with a
million empty rows.
"""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024


@dataclass(frozen=True)
class ExtractionLimits:
    max_bytes: int = 200 * MiB
    """Largest file accepted at all."""
    max_zip_entries: int = 5_000
    """OOXML files have tens of members; thousands means something is off."""
    max_zip_uncompressed: int = 512 * MiB
    """Sum of declared uncompressed member sizes."""
    max_zip_ratio: float = 200.0
    """Largest uncompressed/compressed ratio for one member (XML compresses ~10-30x)."""
    max_image_pixels: int = 80_000_000
    """Width x height read from the header, before any pixel is decoded."""
    max_pages: int = 3_000
    max_cells: int = 2_000_000
    """Spreadsheet cells read across all sheets."""
    max_xml_prolog: int = 64 * 1024
    """How far into an XML part we look for the root element."""

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            if getattr(self, name) <= 0:
                raise ValueError(f"limit {name} must be positive")


DEFAULT_LIMITS = ExtractionLimits()

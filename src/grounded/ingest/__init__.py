"""The write path: from uploaded bytes to chunk records (issue 6).

The extraction and chunking core is a pure library (no database, no queue):

    detect(data, filename) -> Detected                     content-based type
    extract(data, filename, engines=Engines(...)) -> ExtractedDocument
    chunk_document(document, ChunkingConfig()) -> tuple[Chunk, ...]
    safe_filename(name) -> str                              or ExtractionError

Every failure a user can cause is a ``grounded.errors.ExtractionError`` with
a stable ``reason``. Jobs, storage and status live in sibling modules.
"""

from __future__ import annotations

from grounded.ingest.chunking import CHUNKING_VERSION, ChunkingConfig, chunk_document
from grounded.ingest.detect import Detected, detect
from grounded.ingest.extract import Engines, extract
from grounded.ingest.limits import DEFAULT_LIMITS, ExtractionLimits
from grounded.ingest.records import (
    Asset,
    Block,
    Cell,
    Chunk,
    ExtractedDocument,
    Provenance,
    Section,
    Table,
)
from grounded.ingest.safety import safe_filename

__all__ = [
    "CHUNKING_VERSION",
    "DEFAULT_LIMITS",
    "Asset",
    "Block",
    "Cell",
    "Chunk",
    "ChunkingConfig",
    "Detected",
    "Engines",
    "ExtractedDocument",
    "ExtractionLimits",
    "Provenance",
    "Section",
    "Table",
    "chunk_document",
    "detect",
    "extract",
    "safe_filename",
]

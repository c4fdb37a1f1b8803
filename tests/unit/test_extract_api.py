"""The ingest library's public surface, and records that serialise for storage."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import grounded.ingest as ingest
from grounded.ingest import chunk_document, extract

pytestmark = pytest.mark.unit

DOCS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"


def test_public_surface_is_deliberate_and_documented() -> None:
    assert sorted(ingest.__all__) == sorted(
        [
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
    )
    for name in ingest.__all__:
        obj = getattr(ingest, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"


@pytest.mark.parametrize(
    "name", ["data.pdf", "tbl-cell.pptx", "having-images.docx", "campaign_donors.csv"]
)
def test_chunks_tables_and_assets_serialise_to_json(name: str) -> None:
    document = extract((DOCS / name).read_bytes(), name)
    for chunk in chunk_document(document):
        row = json.loads(json.dumps(chunk.provenance_json()))
        assert chunk.modality in ("text", "table", "image", "audio", "slide", "code")
        assert len(chunk.content_sha256) == 64
        if chunk.table_index is not None:
            assert row["table"] == chunk.table_index < len(document.tables)
    for table in document.tables:
        detail = json.loads(json.dumps(table.to_json()))
        assert len(detail["column_kinds"]) == len(detail["header"])
        assert all(len(r) == len(detail["header"]) for r in detail["rows"])
    for asset in document.assets:
        assert json.loads(json.dumps(asset.to_json()))["width"] == asset.width

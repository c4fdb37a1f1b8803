"""Audio: a transcript with time ranges, from the Transcriber the caller passes in.

Where no model covers the recording's language the gateway raises
``UnsupportedLanguage``; that becomes a warning on an otherwise empty
document, so the status shows "no speech model for this language" instead of
an index full of fluent nonsense (issue 6, item 4).
"""

from __future__ import annotations

import hashlib

from grounded.errors import UnsupportedLanguage
from grounded.gateway.contracts import Transcriber
from grounded.ingest.records import Asset, Block, ExtractedDocument, Provenance, Section


def extract_audio(
    data: bytes,
    *,
    transcriber: Transcriber | None,
    language: str | None = None,
    media_type: str = "audio/*",
) -> ExtractedDocument:
    """One block per transcript segment (start_s/end_s provenance), one audio asset."""
    asset = Asset(
        kind="audio",
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        provenance=Provenance(),
        content=data,
    )
    if transcriber is None:
        return ExtractedDocument(
            mime_type="audio/*",
            title=None,
            sections=(),
            assets=(asset,),
            warnings=("no speech model is configured; the recording is not searchable",),
        )
    try:
        transcript = transcriber.transcribe(data, language)
    except UnsupportedLanguage as exc:
        return ExtractedDocument(
            mime_type="audio/*",
            title=None,
            sections=(),
            assets=(asset,),
            warnings=(exc.message,),
            language=language,
        )
    blocks = tuple(
        Block(
            seg.text, "audio", Provenance(start_s=round(seg.start_s, 2), end_s=round(seg.end_s, 2))
        )
        for seg in transcript.segments
        if seg.text.strip()
    )
    warnings = () if blocks else ("no speech was recognised in the recording",)
    return ExtractedDocument(
        mime_type="audio/*",
        title=None,
        sections=(Section(heading_path=(), blocks=blocks),) if blocks else (),
        assets=(asset,),
        warnings=warnings,
        language=transcript.language,
    )

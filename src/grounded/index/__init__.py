"""Index snapshots: BM25 (Jieba, en/es) and pgvector, built beside the live index.

Write side: ``Builder`` (full or incremental builds), ``publish``,
``rollback``, ``rebuild``, ``refresh``, ``status``. Read side (for the
retriever): ``IndexReader.candidates`` with an ``EligibilitySpec``. Tables,
segments and postings stay behind these names.

Names are resolved lazily (PEP 562): ``grounded.config`` imports
``grounded.index.settings``, and loading the whole package (database layer,
Jieba) at that moment would be both circular and slow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grounded.index.build import Builder, BuildReport
    from grounded.index.eligibility import EligibilitySpec
    from grounded.index.embedder import PassageEmbedder
    from grounded.index.publishing import publish, rollback
    from grounded.index.search import Candidate, Candidates, IndexReader, SnapshotInfo
    from grounded.index.service import rebuild, refresh, status
    from grounded.index.settings import IndexSettings
    from grounded.index.snapshots import IndexStatus, Snapshot

_WHERE = {
    "BuildReport": "build",
    "Builder": "build",
    "Candidate": "search",
    "Candidates": "search",
    "EligibilitySpec": "eligibility",
    "IndexReader": "search",
    "IndexSettings": "settings",
    "IndexStatus": "snapshots",
    "PassageEmbedder": "embedder",
    "Snapshot": "snapshots",
    "SnapshotInfo": "search",
    "publish": "publishing",
    "rebuild": "service",
    "refresh": "service",
    "rollback": "publishing",
    "status": "service",
}

__all__ = [
    "BuildReport",
    "Builder",
    "Candidate",
    "Candidates",
    "EligibilitySpec",
    "IndexReader",
    "IndexSettings",
    "IndexStatus",
    "PassageEmbedder",
    "Snapshot",
    "SnapshotInfo",
    "publish",
    "rebuild",
    "refresh",
    "rollback",
    "status",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'grounded.index' has no attribute {name!r}")
    return getattr(importlib.import_module(f"grounded.index.{module}"), name)

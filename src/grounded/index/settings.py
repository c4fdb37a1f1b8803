"""Index settings, nested under ``index`` (env ``GROUNDED_INDEX__...``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class IndexSettings(BaseModel):
    """BM25 constants, dense search policy, history and freshness. Every field is documented."""

    model_config = ConfigDict(extra="forbid")

    bm25_k1: float = Field(default=1.2, ge=0, description="BM25 term-frequency saturation k1.")
    bm25_b: float = Field(default=0.75, ge=0, le=1, description="BM25 length normalisation b.")
    title_weight: float = Field(
        default=2.0, gt=0, description="Weight of title and context-line terms (body is 1)."
    )
    exact_vector_max: int = Field(
        default=20000,
        ge=0,
        description=(
            "Eligible units up to which a dense query is answered by exact search "
            "(provably the true nearest neighbours) instead of HNSW."
        ),
    )
    hnsw_ef_search: int = Field(
        default=100,
        ge=10,
        le=1000,
        description="Initial hnsw.ef_search of a dense query (at least 4x k); widened x4 while "
        "too few eligible rows come back.",
    )
    hnsw_ef_search_max: int = Field(
        default=1000,
        ge=10,
        le=1000,
        description="Largest hnsw.ef_search a filtered dense query widens to before it falls "
        "back to exact search or reports an incomplete result.",
    )
    history_keep: int = Field(
        default=3, ge=1, description="Retired snapshots kept (with derived rows) for rollback."
    )
    max_segments: int = Field(
        default=8,
        ge=1,
        description="Stacked segments above which status reports that a compacting full build "
        "(`grounded index build --publish`, reuses unchanged vectors) is due.",
    )
    embed_batch: int = Field(default=64, ge=1, description="Passages per embedding call.")
    cache_snapshots: int = Field(
        default=4, ge=1, description="Loaded snapshots a process keeps in memory."
    )

"""BM25 over a compact in-memory postings structure, scored on the eligible corpus.

The variant (seed 002 ADR-008, seed 000 ADR-016):

    idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))      positive, smoothed
    tf(t, d) = title_weight * count in title/context line + body_weight * count in body
    |d|      = the same weighted sum over all terms of d
    score    = sum over distinct query terms t of
               idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))

``N``, ``df`` and ``avgdl`` are taken over the *eligible* corpus of the query
(tenant, ACL, review state, confidence, categories, documents), passed as a
boolean mask: filters apply before IDF. Query terms are de-duplicated; equal
scores are ordered by unit id. This is "title repeated twice", not BM25F.

Why this shape: postings are CSR arrays (term -> sorted positions, weighted
tf) built once per snapshot and cached; a query touches only the postings of
its own terms plus an O(N) mask reduction for ``N`` and ``avgdl``, so df over
any filter costs one boolean gather per term instead of a corpus scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from grounded.errors import InvalidInput

Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Bm25Params:
    """Scoring constants; recorded in every snapshot and receipt."""

    k1: float = 1.2
    b: float = 0.75
    title_weight: float = 2.0
    body_weight: float = 1.0
    variant: str = "okapi-positive-smoothed-idf"

    def __post_init__(self) -> None:
        if not (self.k1 >= 0 and 0 <= self.b <= 1 and self.title_weight > 0):
            raise InvalidInput("BM25 needs k1 >= 0, 0 <= b <= 1 and a positive title weight")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def weighted_terms(
    title_terms: Iterable[str], body_terms: Iterable[str], params: Bm25Params
) -> dict[str, float]:
    """Weighted term frequencies of one unit (title/context line x2, body x1)."""
    weights: dict[str, float] = {}
    for term in title_terms:
        weights[term] = weights.get(term, 0.0) + params.title_weight
    for term in body_terms:
        weights[term] = weights.get(term, 0.0) + params.body_weight
    return weights


def idf(n_eligible: int, df: npt.NDArray[np.int64] | int) -> npt.NDArray[np.float64]:
    """Positive smoothed IDF; never negative, even for a term in every unit."""
    dfa = np.asarray(df, dtype=np.float64)
    return np.asarray(np.log1p((n_eligible - dfa + 0.5) / (dfa + 0.5)), dtype=np.float64)


@dataclass(frozen=True)
class _Part:
    """One CSR block: term -> (positions, weighted tfs); positions are global."""

    vocabulary: dict[str, int]
    indptr: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.float32]


class Postings:
    """Immutable postings of one snapshot: CSR blocks over one unit position space.

    A full load is one block; a snapshot that adds a delta segment to a cached
    one is the cached blocks plus one small block (``stacked``), so a new
    document is searchable without rebuilding the big block. ``df`` sums over
    blocks, after the eligibility mask (which also hides replaced units).
    """

    def __init__(self, parts: list[_Part], lengths: npt.NDArray[np.float32]) -> None:
        self.parts = parts
        self.lengths = lengths

    @property
    def size(self) -> int:
        return int(self.lengths.shape[0])

    @property
    def count(self) -> int:
        return sum(int(p.positions.size) for p in self.parts)

    @property
    def terms(self) -> int:
        return len(set().union(*(p.vocabulary for p in self.parts))) if self.parts else 0

    @property
    def nbytes(self) -> int:
        blocks = sum(int(p.indptr.nbytes + p.positions.nbytes + p.tfs.nbytes) for p in self.parts)
        return blocks + int(self.lengths.nbytes)

    @classmethod
    def build(
        cls, units: Sequence[tuple[Sequence[str], Sequence[float]]], offset: int = 0
    ) -> Postings:
        """CSR from (terms, weighted tfs) per unit, in unit order, from ``offset``."""
        vocabulary: dict[str, int] = {}
        term_ids: list[int] = []
        unit_of: list[int] = []
        tf_list: list[float] = []
        lengths = np.zeros(len(units), dtype=np.float32)
        setdefault = vocabulary.setdefault
        for position, (terms, weights) in enumerate(units):
            term_ids.extend(setdefault(t, len(vocabulary)) for t in terms)
            unit_of.extend([position + offset] * len(terms))
            tf_list.extend(weights)
            lengths[position] = float(sum(weights))
        tids = np.asarray(term_ids, dtype=np.int64)
        order = np.argsort(tids, kind="stable")
        counts = np.bincount(tids, minlength=len(vocabulary))
        indptr = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        part = _Part(
            vocabulary,
            indptr,
            np.asarray(unit_of, dtype=np.int32)[order],
            np.asarray(tf_list, dtype=np.float32)[order],
        )
        return cls([part], lengths)

    def stacked(self, extra: Postings) -> Postings:
        """These blocks plus ``extra``'s, whose positions start at ``self.size``."""
        return Postings([*self.parts, *extra.parts], np.concatenate([self.lengths, extra.lengths]))

    def scores(
        self, query_terms: Iterable[str], eligible: Mask, params: Bm25Params
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """(positions, scores) of every eligible unit matching a query term."""
        n = int(np.count_nonzero(eligible))
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        avgdl = max(float(self.lengths[eligible].astype(np.float64).mean()), 1e-9)
        accumulator = np.zeros(self.size, dtype=np.float64)
        touched = []
        for term in dict.fromkeys(query_terms):  # de-duplicated (ADR-008)
            found_positions, found_tfs = [], []
            for part in self.parts:
                tid = part.vocabulary.get(term)
                if tid is None:
                    continue
                lo, hi = int(part.indptr[tid]), int(part.indptr[tid + 1])
                positions = part.positions[lo:hi]
                keep = eligible[positions]
                found_positions.append(positions[keep])
                found_tfs.append(part.tfs[lo:hi][keep])
            if not found_positions:
                continue
            positions = np.concatenate(found_positions)
            if positions.size == 0:
                continue
            tf = np.concatenate(found_tfs).astype(np.float64)
            length = self.lengths[positions].astype(np.float64)
            denominator = tf + params.k1 * (1.0 - params.b + params.b * length / avgdl)
            weight = idf(n, positions.size)
            accumulator[positions] += weight * tf * (params.k1 + 1.0) / denominator
            touched.append(positions)
        if not touched:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        hit = np.unique(np.concatenate(touched)).astype(np.int64)
        return hit, accumulator[hit]


def top_k(
    positions: npt.NDArray[np.int64],
    scores: npt.NDArray[np.float64],
    id_rank: npt.NDArray[np.int64],
    k: int,
) -> list[tuple[int, float]]:
    """The k best (position, score): score descending, then unit id ascending."""
    if positions.size == 0 or k <= 0:
        return []
    if positions.size > 4 * k:
        # Keep every unit tied with the k-th score so the id tie-break stays exact.
        kth = np.partition(scores, positions.size - k)[positions.size - k]
        keep = scores >= kth
        positions, scores = positions[keep], scores[keep]
    order = np.lexsort((id_rank[positions], -scores))[:k]
    return [(int(positions[i]), float(scores[i])) for i in order]

"""An answer split into claims, each with the evidence numbers it cites.

A claim is a sentence that says something: one with at least two content
terms, or any number. Connectives and preambles ("Here is what I found:")
are not claims and need no citation; everything else does. Citation markers
are ``[1]``, ``[1, 3]``, ``[1][2]`` and the full-width ``【1】``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from grounded.answer.text import numbers, sentence_spans, terms

_MARKER: Final = re.compile(r"[\[【]\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*[\]】]")
ABSTAIN_PREFIX: Final = "INSUFFICIENT_EVIDENCE"
_ONE: Final = r"[\[【]\s*\d[\d\s,，、]*[\]】]"
_LEADING: Final = re.compile(rf"([.!?。！？])\s*({_ONE}(?:\s*{_ONE})*)")


@dataclass(frozen=True)
class Claim:
    index: int
    text: str
    sentence: str
    citations: tuple[int, ...]


def split(answer: str) -> list[Claim]:
    """Claims in order; a marker that opens the next sentence belongs to the one before."""
    merged: list[tuple[str, list[int]]] = []
    for span in sentence_spans(_move_leading_markers(answer)):
        cited = [int(n) for group in _MARKER.findall(span.text) for n in re.split(r"\D+", group)]
        bare = " ".join(_MARKER.sub(" ", span.text).split())
        if not bare.strip(" .,;:，。；：") and merged:
            merged[-1][1].extend(cited)
            continue
        merged.append((span.text, cited))
    claims: list[Claim] = []
    for sentence, cited in merged:
        bare = _tidy(_MARKER.sub(" ", sentence))
        if len(terms(bare)) < 2 and not numbers(bare):
            continue
        claims.append(Claim(len(claims) + 1, bare, sentence, tuple(dict.fromkeys(cited))))
    return claims


def _tidy(text: str) -> str:
    return re.sub(r"\s+([.,;:!?。，；：！？])", r"\1", " ".join(text.split()))


def _move_leading_markers(text: str) -> str:
    """'Sentence. [2] Next.' -> 'Sentence [2]. Next.' so [2] cites the sentence it follows."""
    return _LEADING.sub(r" \2\1", text)


def abstention(answer: str) -> str | None:
    """The model's own abstention ("INSUFFICIENT_EVIDENCE: what is missing"), if it gave one."""
    stripped = answer.strip()
    if not stripped.upper().startswith(ABSTAIN_PREFIX):
        return None
    reason = stripped[len(ABSTAIN_PREFIX) :].lstrip(" :：-").strip()
    return reason or "the model found no answer in the evidence"

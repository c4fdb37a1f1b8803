"""Sentences with offsets and the content terms of a question (zh, en, es).

Offsets matter here, unlike in the gateway's fallbacks: a citation quotes a
span of the evidence by character range, so the span can be checked against
the stored chunk later. Question terms drop interrogatives ("which", "哪",
"cuál"), which say what kind of answer is wanted, not what it is about.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import Stemmer

# Sentence ends as the gateway's extractive answers split them (no split at ";" or "3.5").
_SENTENCE_END: Final = re.compile(r"[.!?。！？]+[\"'”’)\]】」』]*(?=\s|$)|[。！？]+|\n{2,}")
_WORD: Final = re.compile(r"[0-9]+(?:[.,][0-9]+)*%?|[^\W\d_]+(?:[-'][^\W\d_]+)*", re.UNICODE)
_CJK: Final = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_NUMBER: Final = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*%?")
_ANCHOR: Final = re.compile(
    r"《[^》]{1,40}》|“[^”]{2,40}”|\"[^\"]{2,40}\"|"  # titles and quoted names
    r"\b[\w-]*[A-Z][\w-]*\d[\w-]*\b|\b[\w-]*\d[\w-]*[A-Z][\w-]*\b|"  # IL-6, E2F1, 6MP
    r"\b[A-Z][A-Z0-9-]{1,}\b"  # acronyms: TNF, BRCA, NASA
)

STOP: Final = frozenset(
    # English function words and interrogatives
    "a an the of to in on at by for with from and or but is are was were be been being do does "  # noqa: SIM905
    "did has have had it its this that these those as into than then there their they them "
    "what which who whom whose when where why how can could should would may might will "
    "shall not no yes if so such about over under between among also more most less very "
    "i you he she we our your his her my me us any some each other both all"
    # Spanish
    " el la los las un una unos unas de del al y o u en por para con sin que qué cuál cuáles "
    "quién quiénes cuándo dónde cómo cuánto cuántos cuánta cuántas por qué se es son fue "
    "fueron ser está están lo le les su sus como más menos muy entre sobre este esta estos "
    "estas ese esa eso hay ha han".split()
)
_STEMMER: Final = Stemmer.Stemmer("english")
# Chinese interrogatives and particles: dropped as characters and inside bigrams.
_ZH_QUESTION: Final = frozenset("什么哪些个谁几多少怎么样如何为啥吗呢吧是的了在和与及或由被把")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


def sentence_spans(text: str) -> list[Span]:
    """Sentences of ``text`` with their character offsets (stripped, non-empty)."""
    spans: list[Span] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        _add(spans, text, start, match.end())
        start = match.end()
    _add(spans, text, start, len(text))
    return spans


def _add(spans: list[Span], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if len(stripped) < 2:
        return
    offset = start + (len(piece) - len(piece.lstrip()))
    spans.append(Span(offset, offset + len(stripped), stripped))


def terms(text: str) -> set[str]:
    """Content terms: lower-case words minus stop words; Chinese as characters and bigrams."""
    out: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            chars = [c for c in word if _CJK.match(c)]
            out.update(c for c in chars if c not in _ZH_QUESTION)
            out.update(
                a + b
                for a, b in itertools.pairwise(chars)
                if a not in _ZH_QUESTION and b not in _ZH_QUESTION
            )
        elif (word not in STOP and len(word) > 1) or word.isdigit():
            out.add(_stem(word))
    return out


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """English Snowball stem, so "inhibits" meets "inhibition" (Spanish words pass
    through mostly unchanged, the same way on both sides of a comparison)."""
    return str(_STEMMER.stemWord(word))


def numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


def anchors(text: str) -> list[str]:
    """Names, codes and titles a question is about; evidence that lacks them is off topic."""
    found = []
    for raw in _ANCHOR.findall(text):
        value = raw.strip('《》“”"')
        if value and value.lower() not in STOP:
            found.append(value)
    return list(dict.fromkeys(found))


def normalised(text: str) -> str:
    return " ".join(text.lower().split())

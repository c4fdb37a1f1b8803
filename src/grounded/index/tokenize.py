"""Tokenisers for the lexical index: Chinese (Jieba), English and Spanish (Snowball).

Seed 002 ADR-008 fixes the Chinese baseline: Jieba search mode, HMM off, a
project dictionary and a fixed stop-word list, all shipped in this package so
nothing downloads or drifts at run time. English and Spanish use Snowball
stemmers (PyStemmer) with fixed stop-word lists. Every tokeniser has an id
that changes whenever its behaviour can (library version, dictionary or
stop-word content); the ids are recorded in every snapshot and receipt, and a
query is only scored against a snapshot built with the same ids.

Routing: text is split into script runs. Han runs go to Jieba; everything else
goes to the stemmer of the chunk's language (``chunks.language`` when set,
otherwise a stop-word vote between English and Spanish, English on a tie).
Mixed Chinese/English text therefore keeps both halves searchable.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources
from typing import Final

import jieba
import Stemmer

_DATA = resources.files("grounded.index") / "data"
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SPANISH_MARKS = re.compile("[ñÑ¿¡]")
_PYSTEMMER: Final = metadata.version("PyStemmer")
LATIN_LANGUAGES: Final = {"en": "english", "es": "spanish"}


def _read(name: str) -> str:
    return (_DATA / name).read_text(encoding="utf-8")


def _words(name: str) -> frozenset[str]:
    return frozenset(
        line.strip() for line in _read(name).splitlines() if line.strip() and line[0] != "#"
    )


def _digest(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class Tokenised:
    """Terms of one text, and the tokeniser ids that produced them."""

    terms: tuple[str, ...]
    tokenizer_ids: frozenset[str]


class ChineseTokenizer:
    """Jieba search mode with HMM off, the project dictionary and fixed stop words."""

    def __init__(self) -> None:
        jieba.setLogLevel(logging.WARNING)
        self._dict_text = _read("zh_project_dict.txt")
        self._stop = _words("stopwords_zh.txt")
        self._jieba = jieba.Tokenizer()
        self._lock = threading.Lock()
        self._ready = False
        self.id = (
            f"jieba-{jieba.__version__}-search-nohmm-dict{_digest(self._dict_text)}"
            f"-stop{_digest(*sorted(self._stop))}"
        )

    def _init(self) -> None:
        # Jieba builds its prefix dictionary lazily and is not thread-safe while
        # doing so; the user dictionary is applied once, under the lock.
        with self._lock:
            if not self._ready:
                self._jieba.initialize()
                for line in self._dict_text.splitlines():
                    parts = line.split()
                    if parts:
                        self._jieba.add_word(parts[0], int(parts[1]), parts[2])
                self._ready = True

    def tokenize(self, text: str) -> list[str]:
        if not self._ready:
            self._init()
        out = []
        for token in self._jieba.cut_for_search(text, HMM=False):
            token = token.strip().lower()
            if token and token not in self._stop and _WORD.fullmatch(token):
                out.append(token)
        return out


class SnowballTokenizer:
    """Unicode words, lower-cased, stop words removed, Snowball-stemmed."""

    def __init__(self, language: str) -> None:
        self.language = language
        algorithm = LATIN_LANGUAGES[language]
        self._stemmer = Stemmer.Stemmer(algorithm)
        self.stop = _words(f"stopwords_{language}.txt")
        self.id = f"snowball-{algorithm}-pystemmer{_PYSTEMMER}-stop{_digest(*sorted(self.stop))}"

    def tokenize(self, text: str) -> list[str]:
        words = [w for w in _WORD.findall(text.lower()) if w not in self.stop]
        return list(self._stemmer.stemWords(words))


class Analyzer:
    """Routes text to the tokenisers above; one instance serves a whole process."""

    def __init__(self) -> None:
        self.chinese = ChineseTokenizer()
        self.latin = {code: SnowballTokenizer(code) for code in LATIN_LANGUAGES}

    @property
    def ids(self) -> dict[str, str]:
        """Tokeniser id per language code, as recorded in snapshots."""
        return {"zh": self.chinese.id, **{c: t.id for c, t in self.latin.items()}}

    def latin_language(self, text: str, declared: str | None) -> str:
        """The stemmer for non-Han runs: the declared language, else a stop-word vote."""
        if declared:
            code = declared.lower().split("-")[0].split("_")[0]
            if code in self.latin:
                return code
        words = _WORD.findall(text.lower())
        es = sum(w in self.latin["es"].stop for w in words) + bool(_SPANISH_MARKS.search(text))
        en = sum(w in self.latin["en"].stop for w in words)
        return "es" if es > en else "en"

    def tokenize(self, text: str, language: str | None = None) -> Tokenised:
        """Terms of ``text`` (duplicates kept: they are term frequencies)."""
        terms: list[str] = []
        ids: set[str] = set()
        latin = self.latin[self.latin_language(text, language)]
        position = 0
        for match in _HAN.finditer(text):
            if match.start() > position:
                found = latin.tokenize(text[position : match.start()])
                if found:
                    terms.extend(found)
                    ids.add(latin.id)
            found = self.chinese.tokenize(match.group())
            if found:
                terms.extend(found)
                ids.add(self.chinese.id)
            position = match.end()
        if position < len(text):
            found = latin.tokenize(text[position:])
            if found:
                terms.extend(found)
                ids.add(latin.id)
        return Tokenised(tuple(terms), frozenset(ids))

    def query_terms(self, text: str, language: str | None = None) -> list[str]:
        """Query terms, de-duplicated in first-seen order (seed 002 ADR-008).

        A query without a declared language is too short to identify, so its
        non-Han words are stemmed by every Latin stemmer and the terms united:
        "garantía meses" then meets Spanish documents and "warranty" English
        ones. Extra stems only score where they occur.
        """
        if language:
            return list(dict.fromkeys(self.tokenize(text, language).terms))
        terms: list[str] = []
        for code in self.latin:
            terms.extend(self.tokenize(text, code).terms)
        return list(dict.fromkeys(terms))


@cache
def analyzer() -> Analyzer:
    """The process-wide analyser (Jieba's dictionary is built once, lazily)."""
    return Analyzer()


def unique(terms: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(terms))

"""Per-chunk language detection (issue 6 item 5: zh/en/es at least).

Script decides first, because it is exact where it applies: a chunk that is
mostly Han characters is Chinese (kana -> Japanese, Hangul -> Korean) without
asking a statistical model, which is unreliable on a few CJK characters. Text
in Latin and other scripts goes to py3langid (a maintained, dependency-light
fork of langid.py: 97 languages, a byte n-gram naive Bayes model shipped in
the wheel, no download). Very short text returns ``None`` rather than a guess.
"""

from __future__ import annotations

import threading
from typing import Any

_MIN_LETTERS = 12
_CHINESE_VARIETIES = {"wuu", "yue", "zh"}
_lock = threading.Lock()
_identifier: Any = None


def _model() -> Any:
    global _identifier
    with _lock:
        if _identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier  # type: ignore[import-untyped]

            _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return _identifier


def _script_counts(text: str) -> tuple[int, int, int, int]:
    """(letters, han, kana, hangul) counted over ``text``."""
    letters = han = kana = hangul = 0
    for ch in text:
        code = ord(ch)
        if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF:
            han += 1
            letters += 1
        elif 0x3040 <= code <= 0x30FF:
            kana += 1
            letters += 1
        elif 0xAC00 <= code <= 0xD7AF:
            hangul += 1
            letters += 1
        elif ch.isalpha():
            letters += 1
    return letters, han, kana, hangul


def detect_language(text: str) -> str | None:
    """ISO 639-1 code of the main language of ``text``, or ``None`` when unsure.

    CJK characters carry a word each, so a few of them decide; Latin text needs
    at least a dozen letters and a confident model answer (probability >= 0.5).
    """
    letters, han, kana, hangul = _script_counts(text)
    cjk = han + kana + hangul
    if cjk >= 4 and cjk * 4 >= letters:  # one Han char ~ one word ~ 4 Latin letters
        if kana * 5 >= cjk:
            return "ja"
        if hangul * 2 >= cjk:
            return "ko"
        return "zh"
    if letters < _MIN_LETTERS:
        return None
    language, probability = _model().classify(text)
    if language in ("zxx", "und") or probability < 0.5:
        return None
    if han and language in _CHINESE_VARIETIES:
        return "zh"  # a few Han characters in mostly Latin text: the written language is zh
    return str(language)

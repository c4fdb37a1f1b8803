"""Scrub secrets and personal data from text before it leaves the process.

Applied by the gateway to every request bound for a remote provider (local
models see the original: nothing egresses). Detectors are regular expressions
chosen to prefer false positives over leaks; card numbers must also pass the
Luhn check so that ordinary long numbers (order ids, years in a table) survive.
Images sent for vision description cannot be scrubbed: that is why vision is
an explicit per-provider option.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

_API_KEY = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----"
    r"|\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}\b"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\bAIza[0-9A-Za-z_-]{35}\b"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    r"|(?i:\bbearer\s+)[A-Za-z0-9._~+/-]{16,}=*"
    r"|(?i:\b(?:api[_-]?key|secret|token|passw(?:or)?d)\b\s*[:=]\s*)[^\s,;\"']{6,}",
    re.DOTALL,
)
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_ID_NUMBER = re.compile(
    r"(?<![0-9A-Za-z])(?:"
    r"[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]"  # CN resident
    r"|\d{3}-\d{2}-\d{4}"  # US SSN
    r"|\d{8}[A-HJ-NP-TV-Z]"  # ES DNI
    r"|[XYZ]\d{7}[A-Z]"  # ES NIE
    r")(?![0-9A-Za-z])"
)
_PHONE = re.compile(
    r"(?<![\w+])(?:"
    r"\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]?\d{2,4}){1,4}"
    r"|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}"
    r"|\d{3}[.-]\d{3}[.-]\d{4}"
    r"|1[3-9]\d{9}"
    r")(?!\w)"
)


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card_ok(match: re.Match[str]) -> bool:
    digits = re.sub(r"\D", "", match.group(0))
    return 13 <= len(digits) <= 19 and _luhn(digits)


_DETECTORS: dict[str, tuple[re.Pattern[str], Callable[[re.Match[str]], bool] | None]] = {
    "api_key": (_API_KEY, None),
    "email": (_EMAIL, None),
    "iban": (_IBAN, None),
    "card": (_CARD, _card_ok),
    "id_number": (_ID_NUMBER, None),
    "phone": (_PHONE, None),
}


class Redactor:
    """Replaces detected spans with ``[REDACTED:KIND]``; counts what it replaced."""

    def __init__(self, kinds: Iterable[str], extra_patterns: Iterable[str] = ()) -> None:
        wanted = set(kinds)
        # Order matters: keys before e-mails (keys can contain '@'), cards before phones.
        self._detectors = [(kind, *_DETECTORS[kind]) for kind in _DETECTORS if kind in wanted]
        self._detectors += [("custom", re.compile(pattern), None) for pattern in extra_patterns]

    def text(self, value: str, counts: Counter[str] | None = None) -> str:
        for kind, pattern, accept in self._detectors:

            def replace(match: re.Match[str], kind: str = kind, accept: Any = accept) -> str:
                if accept is not None and not accept(match):
                    return match.group(0)
                if counts is not None:
                    counts[kind] += 1
                return f"[REDACTED:{kind.upper()}]"

            value = pattern.sub(replace, value)
        return value

    def request(self, request: T, counts: Counter[str] | None = None) -> T:
        """A copy of a request dataclass with every string (and tuple of strings) scrubbed."""
        return self._walk(request, counts)  # type: ignore[no-any-return]

    def _walk(self, value: Any, counts: Counter[str] | None) -> Any:
        if isinstance(value, str):
            return self.text(value, counts)
        if isinstance(value, tuple):
            return tuple(self._walk(item, counts) for item in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {
                f.name: self._walk(getattr(value, f.name), counts)
                for f in dataclasses.fields(value)
            }
            return dataclasses.replace(value, **changes)
        return value

"""Password policy and Argon2id hashing (seed 002 ADR-009, ASVS v4 2.1 and 2.4).

Policy: at least ``password_min_length`` (>= 8) and at most
``password_max_length`` (>= 64) characters, never truncated, not in the
common-password list. Hashes are Argon2id with the parameters in settings; a
login that finds an older parameter set rehashes (``needs_rehash``).

The common-password list (``data/common-passwords.txt.gz``, 19,646 entries)
is Django's ``common-passwords.txt.gz``: Royce Williams' list of the 20,000
most common passwords from the Pwned Passwords corpus, unhexed, lowercased
and deduplicated (BSD-3-Clause, see ``data/PROVENANCE.md``). Candidates are
compared lowercased and with surrounding whitespace stripped.
"""

from __future__ import annotations

import gzip
import unicodedata
from functools import cache
from importlib import resources

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from grounded.auth.settings import AuthSettings
from grounded.errors import InvalidInput


@cache
def common_passwords() -> frozenset[str]:
    """The shipped list, loaded once per process."""
    data = resources.files("grounded.auth").joinpath("data/common-passwords.txt.gz").read_bytes()
    return frozenset(gzip.decompress(data).decode("utf-8").split())


def check_policy(password: str, settings: AuthSettings, *, field: str = "password") -> None:
    """Refuse a password that breaks the policy, saying which rule (never echoing it)."""
    length = len(unicodedata.normalize("NFC", password))
    if length < settings.password_min_length:
        raise InvalidInput(
            f"{field}: use at least {settings.password_min_length} characters",
            details={"field": field, "problem": "too_short"},
        )
    if length > settings.password_max_length:
        raise InvalidInput(
            f"{field}: use at most {settings.password_max_length} characters",
            details={"field": field, "problem": "too_long"},
        )
    if password.strip().lower() in common_passwords():
        raise InvalidInput(
            f"{field}: this password is among the most common ones; choose another",
            details={"field": field, "problem": "common"},
        )


class Hasher:
    """Argon2id with the configured parameters, plus a dummy hash for equal timing."""

    def __init__(self, settings: AuthSettings) -> None:
        self._hasher = PasswordHasher(
            time_cost=settings.argon2_time_cost,
            memory_cost=settings.argon2_memory_kib,
            parallelism=settings.argon2_parallelism,
            type=Type.ID,
        )
        # Verified when there is no real hash (unknown tenant or user), so every
        # failed login costs one Argon2id verification: same timing class.
        self._dummy = self._hasher.hash("grounded-dummy-password-for-timing")

    def hash(self, password: str) -> str:
        return self._hasher.hash(unicodedata.normalize("NFC", password))

    def verify(self, stored: str | None, password: str) -> bool:
        """True when ``password`` matches ``stored``; a missing or corrupt hash is
        verified against the dummy (and is False), never an exception."""
        candidate = unicodedata.normalize("NFC", password)
        try:
            return self._hasher.verify(stored or self._dummy, candidate) and stored is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def burn(self, password: str) -> None:
        """Spend one verification on the dummy hash (unknown tenant/user path)."""
        self.verify(None, password)

    def needs_rehash(self, stored: str) -> bool:
        try:
            return self._hasher.check_needs_rehash(stored)
        except (InvalidHashError, ValueError):
            return True


_HASHERS: dict[tuple[int, int, int], Hasher] = {}


def hasher_for(settings: AuthSettings) -> Hasher:
    """One Hasher per parameter set per process (its dummy hash is costly to make)."""
    key = (settings.argon2_time_cost, settings.argon2_memory_kib, settings.argon2_parallelism)
    found = _HASHERS.get(key)
    if found is None:
        found = _HASHERS[key] = Hasher(settings)
    return found

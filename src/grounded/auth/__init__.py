"""Identity, sessions, tokens and the verified Principal."""

from grounded.auth.principal import Principal

__all__ = ["Principal"]

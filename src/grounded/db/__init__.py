"""Storage: one PostgreSQL (embedded or external), its migrations and tenant binding."""

from grounded.db.database import Connection, Database
from grounded.db.urls import DatabaseUrls, resolve

__all__ = ["Connection", "Database", "DatabaseUrls", "resolve"]

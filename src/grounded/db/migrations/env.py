"""Alembic environment: runs migrations as the schema owner, online only.

The application role's name arrives through ``config.attributes`` so that
migrations can grant it exactly the privileges each table needs.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

config = context.config
url = config.get_main_option("sqlalchemy.url")
assert url, "grounded.db.migrate passes sqlalchemy.url"

engine = create_engine(url, poolclass=pool.NullPool)
with engine.connect() as connection:
    context.configure(connection=connection, transaction_per_migration=True)
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()

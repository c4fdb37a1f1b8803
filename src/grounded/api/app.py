"""FastAPI application factory. Routers are thin; domains do the work."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from grounded import __version__
from grounded.api import (
    answers,
    auth,
    catalog,
    errors,
    health,
    index,
    ingest,
    knowledge,
    openai_compat,
    search,
    tokens,
    users,
)
from grounded.config import Settings
from grounded.db import Database
from grounded.queue import build_queue


def create_app(settings: Settings, database: Database | None = None) -> FastAPI:
    """Build the app. With no ``database`` given, one is opened at startup and
    closed at shutdown; startup fails (with the reason) on an un-migrated database.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = database is None
        app.state.database = database if database is not None else Database.open(settings)
        app.state.queue = build_queue(app.state.database.app_url)
        app.state.queue.open()
        try:
            yield
        finally:
            retriever = getattr(app.state, "retriever", None)
            if retriever is not None:
                retriever.gateway.close()
            app.state.queue.close()
            if owned:
                app.state.database.close()

    app = FastAPI(
        title="grounded",
        version=__version__,
        summary="Answers from your own documents with verified citations, or an honest abstention.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    errors.install(app)
    app.include_router(health.router)
    app.include_router(auth.router)
    app.include_router(users.router)
    app.include_router(tokens.router)
    app.include_router(ingest.router)
    app.include_router(catalog.router)
    app.include_router(knowledge.router)
    app.include_router(index.router)
    app.include_router(search.router)
    app.include_router(answers.router)
    app.include_router(openai_compat.router)
    return app

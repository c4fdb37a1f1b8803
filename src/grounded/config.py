"""One settings object for the whole platform.

Settings are read from (highest priority first) keyword arguments, environment
variables prefixed ``GROUNDED_`` (plus the conventional ``DATABASE_URL``), an
optional TOML file named by ``GROUNDED_CONFIG`` (default ``grounded.toml`` in
the working directory, if present), and the defaults below. They are built once
in an entry point (CLI command, API factory, worker) and passed down; nothing
builds settings at import time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from grounded.answer.settings import AnswerSettings
from grounded.auth.settings import AuthSettings
from grounded.gateway.settings import GatewaySettings
from grounded.index.settings import IndexSettings

DEFAULT_CONFIG_FILE = "grounded.toml"


class Settings(BaseSettings):
    """Effective configuration. Every field is documented: a test fails otherwise."""

    model_config = SettingsConfigDict(
        env_prefix="GROUNDED_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
    )

    data_dir: Path = Field(
        default=Path(".grounded"),
        description="Where grounded keeps the embedded database, raw files and secrets.",
    )
    database_url: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("GROUNDED_DATABASE_URL", "DATABASE_URL", "database_url"),
        description=(
            "PostgreSQL 15+ with pgvector, as the schema owner (runs migrations). "
            "Unset: an embedded PostgreSQL is started in data_dir."
        ),
    )
    app_database_url: SecretStr | None = Field(
        default=None,
        description=(
            "Connection for the unprivileged application role (row-level security applies). "
            "Unset: derived from database_url with the role grounded_app."
        ),
    )
    app_role: str = Field(
        default="grounded_app",
        pattern=r"^[a-z_][a-z0-9_]{0,62}$",
        description="Name of the PostgreSQL role the API and workers use.",
    )
    db_pool_min: int = Field(default=1, ge=0, description="Minimum pooled connections.")
    db_pool_max: int = Field(default=10, ge=1, description="Maximum pooled connections.")
    db_connect_timeout_s: float = Field(
        default=10.0, gt=0, description="Seconds to wait for a database connection."
    )
    host: str = Field(default="127.0.0.1", description="Address `grounded serve` binds.")
    port: int = Field(default=8000, ge=1, le=65535, description="Port `grounded serve` binds.")
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info", description="Minimum level of structured log lines."
    )
    log_format: Literal["json", "console"] = Field(
        default="json", description="json for machines and log shippers, console for people."
    )
    worker_concurrency: int = Field(
        default=2, ge=1, description="Jobs one `grounded worker` process runs at once."
    )
    max_upload_mb: int = Field(
        default=200,
        ge=1,
        le=10_000,
        description="Largest file accepted by upload or `grounded ingest`, in MiB.",
    )
    auth: AuthSettings = Field(
        default_factory=AuthSettings,
        description="Passwords, sessions, CSRF origins and login rate limits (GROUNDED_AUTH__...).",
    )
    index: IndexSettings = Field(
        default_factory=IndexSettings,
        description="Lexical and dense index: BM25, filtered vector search, history "
        "(GROUNDED_INDEX__...).",
    )
    gateway: GatewaySettings = Field(
        default_factory=GatewaySettings,
        description="Model gateway: providers, task routes, retry, budgets, redaction, cache "
        "(GROUNDED_GATEWAY__...).",
    )
    answer: AnswerSettings = Field(
        default_factory=AnswerSettings,
        description="Grounded answers: evidence count, context budget, retry, abstention gate "
        "(GROUNDED_ANSWER__...).",
    )

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().absolute()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        config_file = Path(os.environ.get("GROUNDED_CONFIG", DEFAULT_CONFIG_FILE))
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if config_file.is_file():
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config_file))
        return tuple(sources)

    @property
    def raw_dir(self) -> Path:
        """The raw zone: original bytes, content-addressed per tenant."""
        return self.data_dir / "raw"

    @property
    def embedded(self) -> bool:
        """True when grounded runs its own PostgreSQL inside data_dir."""
        return self.database_url is None

    def masked(self) -> dict[str, Any]:
        """Effective settings for display: nested groups as plain values, every secret
        and URL password replaced by ``***``."""
        return {name: _masked(getattr(self, name)) for name in type(self).model_fields}


def _masked(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return mask_url(value.get_secret_value())
    if isinstance(value, BaseModel):
        return {name: _masked(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def mask_url(url: str) -> str:
    """Hide the password of a connection URL; leave everything else readable."""
    parts = urlsplit(url)
    if parts.password is None:
        return url if "://" in url else "***"
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def field_docs() -> dict[str, str]:
    """Name -> description for every setting (used by docs and `config show --explain`)."""
    return {name: field.description or "" for name, field in Settings.model_fields.items()}

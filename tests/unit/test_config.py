"""Settings: documented, layered, masked."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from grounded.config import Settings, field_docs, mask_url

pytestmark = pytest.mark.unit


def test_every_setting_is_documented() -> None:
    undocumented = [name for name, doc in field_docs().items() if len(doc) < 10]
    assert undocumented == []


def test_environment_and_file_layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "grounded.toml"
    config.write_text('port = 9001\nlog_level = "debug"\n')
    monkeypatch.setenv("GROUNDED_CONFIG", str(config))
    monkeypatch.setenv("GROUNDED_PORT", "9002")
    settings = Settings()
    assert settings.port == 9002  # environment beats the file
    assert settings.log_level == "debug"  # the file beats defaults


def test_database_url_alias_and_masking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://owner:s3cret@db.example:5432/grounded")
    settings = Settings()
    assert not settings.embedded
    shown = settings.masked()
    assert shown["database_url"] == "postgresql://owner:***@db.example:5432/grounded"
    assert "s3cret" not in repr(settings) and "s3cret" not in str(shown)


def test_mask_url_without_password() -> None:
    assert mask_url("postgresql://u@/db?host=/tmp") == "postgresql://u@/db?host=/tmp"


def test_unknown_or_invalid_settings_name_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "grounded.toml"
    config.write_text("prot = 1\n")
    monkeypatch.setenv("GROUNDED_CONFIG", str(config))
    with pytest.raises(ValidationError, match="prot"):
        Settings()
    monkeypatch.delenv("GROUNDED_CONFIG")
    monkeypatch.setenv("GROUNDED_PORT", "99999")
    with pytest.raises(ValidationError, match="port"):
        Settings()


def test_data_dir_default_is_relative_to_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert Settings().data_dir == tmp_path / ".grounded"


def test_nested_secrets_are_masked_too() -> None:
    settings = Settings(
        gateway={
            "providers": {
                "hosted": {
                    "kind": "openai",
                    "base_url": "https://llm.example/v1",
                    "api_key": "sk-planted-123",
                    "models": {"generate": "qwen2.5-7b"},
                }
            },
            "routes": {"generate": ["hosted", "local"]},
        }
    )
    shown = settings.masked()
    assert "sk-planted-123" not in str(shown)
    assert shown["gateway"]["providers"]["hosted"]["api_key"] == "***"

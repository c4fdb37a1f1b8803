"""`grounded tenant|admin|token ...` through the real command line."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog
from typer.testing import CliRunner

from grounded.auth.clock import ManualClock
from grounded.cli import app as cli_app
from grounded.db import Database, DatabaseUrls
from tests.integration.auth_support import Browser, auth_settings, serve

pytestmark = pytest.mark.integration

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def env(db_urls: DatabaseUrls, pg_data_dir: Path) -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDED_")}
    found.update(
        {
            "DATABASE_URL": db_urls.owner,
            "GROUNDED_APP_DATABASE_URL": db_urls.app,
            "GROUNDED_DATA_DIR": str(pg_data_dir),
            "GROUNDED_CONFIG": "/nonexistent.toml",
            "GROUNDED_AUTH__ARGON2_TIME_COST": "1",
            "GROUNDED_AUTH__ARGON2_MEMORY_KIB": "1024",
            "GROUNDED_AUTH__ARGON2_PARALLELISM": "1",
        }
    )
    return found


@pytest.fixture
def cli(env: dict[str, str]) -> Run:
    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grounded", *args],
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


@pytest.fixture
def browser(pg_data_dir: Path, db_urls: DatabaseUrls) -> Iterator[Browser]:
    settings = auth_settings(pg_data_dir, db_urls)
    with Database.open(settings) as database, serve(settings, database, ManualClock()) as client:
        yield Browser(client)


def test_tenant_admin_token_lifecycle(cli: Run, browser: Browser) -> None:
    created = cli("tenant", "create", "acme", "--name", "Acme Corp", "--json")
    assert created.returncode == 0, created.stderr
    tenant = json.loads(created.stdout)
    assert tenant["slug"] == "acme" and tenant["name"] == "Acme Corp"

    again = cli("tenant", "create", "acme")
    assert again.returncode == 1
    assert "conflict" in again.stderr and "Traceback" not in again.stderr
    bad = cli("tenant", "create", "Not A Slug")
    assert bad.returncode == 1 and "slug" in bad.stderr

    listed = json.loads(cli("tenant", "list", "--json").stdout)
    assert [t["slug"] for t in listed] == ["acme"]

    password = "a long and unusual passphrase"
    admin = cli(
        "admin", "create", "--tenant", "acme", "--email", "Boss@Acme.test",
        "--password-stdin", "--json", stdin=password + "\n",
    )  # fmt: skip
    assert admin.returncode == 0, admin.stderr
    assert json.loads(admin.stdout)["email"] == "boss@acme.test"
    assert password not in admin.stdout + admin.stderr
    common = cli(
        "admin", "create", "--tenant", "acme", "--email", "x@acme.test", "--password-stdin",
        stdin="password123\n",
    )  # fmt: skip
    assert common.returncode == 1 and "common" in common.stderr
    nowhere = cli(
        "admin", "create", "--tenant", "initech", "--email", "x@acme.test", "--password-stdin",
        stdin=password + "\n",
    )  # fmt: skip
    assert nowhere.returncode == 1 and "no tenant 'initech'" in nowhere.stderr

    login = browser.login("acme", "boss@acme.test", password)
    assert login.status_code == 200 and login.json()["user"]["role"] == "admin"

    made = cli(
        "token", "create", "--tenant", "acme", "--name", "nightly batch",
        "-p", "read", "-p", "ask", "-g", "finance", "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)
    bearer = {"Authorization": f"Bearer {token['token']}"}
    browser.client.cookies.clear()  # the bearer token alone
    me = browser.client.get("/v1/auth/me", headers=bearer)
    assert me.status_code == 200, me.text
    assert me.json()["kind"] == "service" and me.json()["groups"] == ["finance"]
    assert me.json()["permissions"] == ["ask", "read"] and me.json()["roles"] == []

    bad_permission = cli("token", "create", "--tenant", "acme", "--name", "x", "-p", "root")
    assert bad_permission.returncode == 1 and "permissions" in bad_permission.stderr

    revoked = cli("token", "revoke", token["id"], "--json")
    assert revoked.returncode == 0, revoked.stderr
    assert browser.client.get("/v1/auth/me", headers=bearer).status_code == 401
    unknown = cli("token", "revoke", "00000000-0000-0000-0000-000000000000")
    assert unknown.returncode == 1 and "no token" in unknown.stderr


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """An in-process command configures logging onto CliRunner's stream, which is
    closed afterwards; put the process's logging back so later tests can log."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


@pytest.mark.usefixtures("restore_logging")
def test_admin_password_prompt_is_hidden_and_confirmed(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, cli: Run
) -> None:
    assert cli("tenant", "create", "acme").returncode == 0
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    runner = CliRunner()
    secret = "prompted passphrase here"
    mismatch = runner.invoke(
        cli_app,
        ["admin", "create", "--tenant", "acme", "--email", "a@acme.test"],
        input=f"{secret}\nsomething else\n{secret}\n{secret}\n",
    )
    assert mismatch.exit_code == 0, mismatch.output
    assert "Password" in mismatch.output and "do not match" in mismatch.output.lower()
    assert secret not in mismatch.output  # hidden input is never echoed

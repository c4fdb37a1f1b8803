"""Per-deployment secrets kept in the data directory (mode 0600).

Two secrets live here unless settings provide them: the password of the
application role (external PostgreSQL only) and the tenant-binding key that
lets the data layer, and nothing else, bind a transaction to a tenant.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from grounded.errors import DataDirError


def read_or_create(data_dir: Path, name: str) -> str:
    """Return the secret ``name``, creating a random one (256 bits) on first use."""
    folder = data_dir / "secrets"
    path = folder / name
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.exists():
            return path.read_text().strip()
        value = secrets.token_hex(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(value + "\n")
    except FileExistsError:
        return path.read_text().strip()
    except OSError as exc:
        raise DataDirError(
            f"cannot read or create secret {path} ({exc.strerror}); "
            "check the permissions of GROUNDED_DATA_DIR"
        ) from exc
    return value

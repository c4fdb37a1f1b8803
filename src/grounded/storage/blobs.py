"""Content-addressed blob storage on the filesystem (the raw zone).

Layout: ``<root>/<tenant_id>/<sha[:2]>/<sha>``. Blobs are per tenant on
purpose: a store shared across tenants would let one tenant learn, by timing
or by "already exists", that another holds the same file.

Writes stream to a temporary file in the same directory tree while hashing,
enforce the size limit as bytes arrive (an oversized upload never lands), and
finish with an atomic rename, so a crash leaves either the whole blob or none.
The same bytes twice are one blob.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO
from uuid import UUID

from grounded.errors import InvalidInput, NotFound

CHUNK = 1 << 20


class TooLarge(InvalidInput):
    code = "too_large"
    http_status = 413


@dataclass(frozen=True)
class BlobRef:
    sha256: str
    size: int


class BlobStore:
    def __init__(self, root: Path) -> None:
        self._root = root

    def _path(self, tenant_id: UUID, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise InvalidInput("not a sha256 digest", details={"field": "sha256"})
        return self._root / str(tenant_id) / sha256[:2] / sha256

    def put_stream(
        self, tenant_id: UUID, stream: BinaryIO | Iterable[bytes], *, max_bytes: int
    ) -> BlobRef:
        """Store bytes from ``stream``; TooLarge (413) past ``max_bytes``, nothing kept."""
        tmp_dir = self._root / str(tenant_id) / "tmp"
        tmp_dir.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        size = 0
        fd, tmp_name = tempfile.mkstemp(dir=tmp_dir, prefix="upload-")
        try:
            with os.fdopen(fd, "wb") as out:
                for piece in _pieces(stream):
                    size += len(piece)
                    if size > max_bytes:
                        raise TooLarge(
                            f"the file is larger than the limit of {max_bytes:,} bytes",
                            details={"max_bytes": max_bytes},
                        )
                    digest.update(piece)
                    out.write(piece)
                out.flush()
                os.fsync(out.fileno())
            sha = digest.hexdigest()
            final = self._path(tenant_id, sha)
            final.parent.mkdir(parents=True, exist_ok=True)
            if final.exists():
                os.unlink(tmp_name)
            else:
                os.replace(tmp_name, final)
            return BlobRef(sha, size)
        except BaseException:
            if os.path.exists(tmp_name):
                os.unlink(tmp_name)
            raise

    def put_bytes(self, tenant_id: UUID, data: bytes, *, max_bytes: int) -> BlobRef:
        return self.put_stream(tenant_id, [data], max_bytes=max_bytes)

    def read(self, tenant_id: UUID, sha256: str) -> bytes:
        path = self._path(tenant_id, sha256)
        try:
            return path.read_bytes()
        except FileNotFoundError as exc:
            raise NotFound(
                f"blob {sha256} is missing from the raw zone", details={"sha256": sha256}
            ) from exc

    def exists(self, tenant_id: UUID, sha256: str) -> bool:
        return self._path(tenant_id, sha256).exists()


def _pieces(stream: BinaryIO | Iterable[bytes]) -> Iterable[bytes]:
    if isinstance(stream, (list, tuple)):
        yield from stream
        return
    read = getattr(stream, "read", None)
    if read is None:
        yield from stream
        return
    while piece := read(CHUNK):
        yield piece

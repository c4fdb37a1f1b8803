"""OCR seconds per page: a scanned PDF rendered with pypdfium2, read by rapidocr.

Times rendering and recognition separately, per page, after one warm-up call
(model load is reported on its own line). Prints the machine it ran on.

    .venv/bin/python bench/ocr_speed.py --dpi 150 --pages 6
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

from grounded.gateway import local_models
from grounded.gateway.pdf import page_count, render_pages

DOCUMENTS = Path(__file__).resolve().parents[2] / "shared" / "evaldata" / "documents"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dpi", type=int, default=150)
    parser.add_argument("--pages", type=int, default=6)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pdf", type=Path, default=DOCUMENTS / "Seige_of_Vicksburg_Sample_OCR.pdf")
    args = parser.parse_args()
    from importlib.metadata import version

    print(
        f"machine: {platform.machine()}, {cpu_name()}, {os.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}, rapidocr {version('rapidocr')}, "
        f"threads {args.threads}, load average {os.getloadavg()[0]:.2f}"
    )
    data = args.pdf.read_bytes()
    pages = min(args.pages, page_count(data))
    started = time.perf_counter()
    local_models.ocr((DOCUMENTS / "monty-truth.png").read_bytes(), threads=args.threads)
    print(f"model load + first small image: {time.perf_counter() - started:.2f} s")
    render_s: list[float] = []
    ocr_s: list[float] = []
    cpu_s: list[float] = []
    lines = 0
    rendered = render_pages(data, range(pages), dpi=args.dpi)
    while True:
        t0 = time.perf_counter()
        page = next(rendered, None)
        if page is None:
            break
        t1, c1 = time.perf_counter(), time.process_time()
        result = local_models.ocr(page.png, threads=args.threads)
        t2, c2 = time.perf_counter(), time.process_time()
        cpu_s.append(c2 - c1)
        render_s.append(t1 - t0)
        ocr_s.append(t2 - t1)
        lines += len(result.lines)
        print(
            f"page {page.index + 1}: {page.width_px}x{page.height_px} px, render "
            f"{t1 - t0:.2f} s, ocr {t2 - t1:.2f} s ({c2 - c1:.2f} CPU-s), "
            f"{len(result.lines)} lines",
            flush=True,
        )
    total = [r + o for r, o in zip(render_s, ocr_s, strict=True)]
    print(
        f"{args.pdf.name} at {args.dpi} dpi, {pages} pages: median {statistics.median(total):.2f}"
        f" s/page (render {statistics.median(render_s):.2f} + ocr {statistics.median(ocr_s):.2f}),"
        f" mean {statistics.mean(total):.2f} s/page, OCR CPU median "
        f"{statistics.median(cpu_s):.2f} CPU-s/page, {lines} lines"
    )


if __name__ == "__main__":
    main()

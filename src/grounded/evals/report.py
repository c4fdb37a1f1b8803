"""Reports: per-query results -> figures per variant and scope, JSON and Markdown.

Scopes are ``all``, ``language:<code>`` and ``family:<name>`` (DESIGN: every
figure per language and per family). The JSON keeps every query's ranked
top 10 and receipt id, so any figure can be traced back to the searches that
made it; ``complete`` is false for a run that stopped early, and such a
report says so in its first line of Markdown too.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final

from grounded.evals import metrics
from grounded.evals.runner import QueryResult

FORMAT: Final = "grounded-eval-report/1"
RANKING_COLUMNS: Final = (
    ("ndcg@10", "nDCG@10"),
    ("recall@10", "R@10"),
    ("recall@100", "R@100"),
    ("mrr@10", "MRR@10"),
    ("top1", "top-1"),
    ("no_relevant", "no rel."),
)
ANSWER_COLUMNS: Final = (
    ("support_rate", "support"),
    ("citation_precision", "cite prec."),
    ("abstention_rate", "abstain"),
    ("answer_span_hit", "span hit"),
)


def machine() -> dict[str, Any]:
    """Enough to tell two runs' hardware apart."""
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }


def scopes(result: QueryResult) -> list[str]:
    return ["all", f"language:{result.language}", f"family:{result.family}"]


def summarise(results: Sequence[QueryResult], variant_order: Sequence[str]) -> list[dict[str, Any]]:
    """One row per (scope, variant): mean of each metric, latency p50/p95, n."""
    groups: dict[tuple[str, str], list[QueryResult]] = {}
    for r in results:
        for scope in scopes(r):
            groups.setdefault((scope, r.variant), []).append(r)
    order = {v: i for i, v in enumerate(variant_order)}
    rows = []
    for (scope, variant), items in sorted(
        groups.items(), key=lambda kv: (_scope_key(kv[0][0]), order.get(kv[0][1], 99))
    ):
        row: dict[str, Any] = {"scope": scope, "variant": variant, "n": len(items)}
        keys = sorted({k for r in items for k in r.scores})
        for key in keys:
            row[key] = metrics.mean(r.scores[key] for r in items if key in r.scores)
        latencies = [r.latency_ms for r in items]
        row["latency_p50_ms"] = metrics.percentile(latencies, 50)
        row["latency_p95_ms"] = metrics.percentile(latencies, 95)
        rows.append(row)
    return rows


def _scope_key(scope: str) -> tuple[int, str]:
    kind = scope.split(":", 1)[0]
    return ({"all": 0, "language": 1, "family": 2}.get(kind, 3), scope)


def curves(results: Sequence[QueryResult]) -> dict[str, dict[str, list[float]]]:
    """dataset -> variant -> mean recall at each of metrics.RECALL_CURVE_KS."""
    acc: dict[str, dict[str, list[tuple[float, ...]]]] = {}
    for r in results:
        acc.setdefault(r.dataset, {}).setdefault(r.variant, []).append(r.curve)
    return {
        dataset: {
            variant: [sum(c[i] for c in rows) / len(rows) for i in range(len(rows[0]))]
            for variant, rows in by_variant.items()
        }
        for dataset, by_variant in acc.items()
    }


def build(
    *,
    head: dict[str, Any],
    results: Sequence[QueryResult],
    variant_order: Sequence[str],
    complete: bool,
    error: str | None = None,
) -> dict[str, Any]:
    """The report as plain JSON-able data; ``head`` carries suite, data and config."""
    return {
        "format": FORMAT,
        "complete": complete,
        "error": error,
        **head,
        "machine": machine(),
        "summary": summarise(results, variant_order),
        "recall_curve_ks": list(metrics.RECALL_CURVE_KS),
        "curves": curves(results),
        "queries": [{k: v for k, v in asdict(r).items() if k != "curve"} for r in results],
    }


def write(report: dict[str, Any], directory: Path) -> list[Path]:
    """report.json, report.md and report.png under ``directory``."""
    from grounded.evals.plot import plot

    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / "report.json", directory / "report.md", directory / "report.png"]
    paths[0].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(report), encoding="utf-8")
    plot(report, paths[2])
    return paths


def markdown(report: dict[str, Any]) -> str:
    """Tables per scope, then gates and the baseline diff when present."""
    suite = report.get("suite", {})
    lines = []
    if not report["complete"]:
        lines += [f"**INCOMPLETE RUN** - {report.get('error')}", ""]
    lines += [
        f"# {suite.get('name', 'eval')} (tier {report.get('tier')})",
        "",
        f"Machine: {report['machine']['processor']}, {report['machine']['cpus']} CPUs, "
        f"Python {report['machine']['python']}. Started {report.get('started_at')}.",
        "",
    ]
    for d in report.get("datasets", []):
        lines.append(
            f"- {d['name']} ({d['language']}): {d['documents']} documents, "
            f"{d['queries']} queries, tenant `{d['tenant']}`"
            + (f", {len(d['skipped'])} queries skipped (empty)" if d.get("skipped") else "")
            + (
                f"; query embedding p50 {d['query_embed_ms']['p50']:.0f} ms (cached before"
                " timing, so variant latencies exclude it)"
                if d.get("query_embed_ms")
                else ""
            )
        )
    lines.append("")
    rows = report["summary"]
    answer_cols = [c for c in ANSWER_COLUMNS if any(r.get(c[0]) is not None for r in rows)]
    columns = [*RANKING_COLUMNS, *answer_cols]
    printed: dict[str, str] = {}
    for scope in dict.fromkeys(r["scope"] for r in rows):
        same = _same_as(printed, scope, [r for r in rows if r["scope"] == scope])
        if same:
            lines += [f"## {scope}: the same queries as {same}", ""]
            continue
        lines += [f"## {scope}", ""]
        lines += _table(
            ["variant", "n", *(label for _, label in columns), "p50 ms", "p95 ms"],
            (
                [
                    r["variant"],
                    str(r["n"]),
                    *(_fmt(r.get(key)) for key, _ in columns),
                    f"{r['latency_p50_ms']:.0f}",
                    f"{r['latency_p95_ms']:.0f}",
                ]
                for r in rows
                if r["scope"] == scope
            ),
        )
        lines.append("")
    if report.get("gates"):
        lines += ["## Gates", ""]
        lines += _table(
            ["gate", "value", "result"],
            (
                [g["description"], _fmt(g.get("value")), "pass" if g["passed"] else "FAIL"]
                for g in report["gates"]
            ),
        )
        lines.append("")
    baseline = report.get("baseline") or {}
    diff = [d for d in baseline.get("diff") or [] if abs(d["change"]) >= 0.0005]
    if baseline:
        lines += [f"## Against baseline {baseline['file']}", ""]
        if not diff:
            lines += [f"No figure changed ({len(baseline.get('diff') or [])} compared).", ""]
    if diff:
        lines += _table(
            ["scope", "variant", "metric", "baseline", "now", "change"],
            (
                [
                    d["scope"],
                    d["variant"],
                    d["metric"],
                    _fmt(d["baseline"]),
                    _fmt(d["now"]),
                    f"{d['change']:+.3f}",
                ]
                for d in diff
            ),
        )
        lines.append("")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _same_as(printed: dict[str, str], scope: str, rows: list[dict[str, Any]]) -> str | None:
    """A scope whose figures repeat one already printed (one family = one language)."""
    key = json.dumps([{k: v for k, v in r.items() if k != "scope"} for r in rows], default=str)
    if key in printed:
        return printed[key]
    printed[key] = scope
    return None

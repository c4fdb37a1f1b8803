"""Gates (thresholds from the suite file) and the diff against a saved baseline.

A gate on a figure that was not measured fails: a gate must never pass
because its variant, scope or metric silently dropped out of the run. An
incomplete run fails every gate for the same reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grounded.errors import InvalidInput
from grounded.evals.report import FORMAT
from grounded.evals.suite import LOWER_IS_BETTER, Gate

DIFF_METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "top1", "no_relevant")


def _lookup(summary: Sequence[dict[str, Any]], scope: str, variant: str, metric: str) -> Any:
    for row in summary:
        if row["scope"] == scope and row["variant"] == variant:
            return row.get(metric)
    return None


def check(
    gates: Sequence[Gate],
    report: dict[str, Any],
    tier: str,
    baseline: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One entry per gate of ``tier``: description, value, passed, message."""
    checked = []
    for gate in gates:
        if gate.tier is not None and gate.tier != tier:
            continue
        value = _lookup(report["summary"], gate.scope, gate.variant, gate.metric)
        name = f"{gate.variant} {gate.metric} ({gate.scope})"
        lower = gate.metric in LOWER_IS_BETTER
        problems = []
        if not report["complete"]:
            problems.append("the run is incomplete")
        elif value is None:
            problems.append("not measured in this run")
        else:
            if gate.min is not None and (value > gate.min if lower else value < gate.min):
                problems.append(
                    f"{value:.3f} {'>' if lower else '<'} {gate.min:g}"
                    f" ({'maximum' if lower else 'minimum'})"
                )
            if gate.max_drop is not None and baseline is not None:
                before = _lookup(baseline["summary"], gate.scope, gate.variant, gate.metric)
                if before is None:
                    problems.append("not in the baseline")
                else:
                    drop = (value - before) if lower else (before - value)
                    if drop > gate.max_drop:
                        problems.append(
                            f"{'rose' if lower else 'fell'} {drop:.3f} from baseline "
                            f"{before:.3f} (allowed {gate.max_drop:g})"
                        )
        bound = f">= {gate.min:g}" if gate.min is not None and not lower else ""
        if gate.min is not None and lower:
            bound = f"<= {gate.min:g}"
        description = f"{name} {bound}".strip()
        checked.append(
            {
                "description": description + f" [{gate.where}]",
                "value": value,
                "passed": not problems,
                "message": (
                    f"gate failed: {name}: {'; '.join(problems)} [{gate.where}]" if problems else ""
                ),
            }
        )
    return checked


def load_baseline(path: Path) -> dict[str, Any]:
    """A saved report.json; refuses other files and incomplete runs."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidInput(f"{path}: baseline not found", details={"file": str(path)}) from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{path}:{exc.lineno}: not JSON ({exc.msg})", details={"file": str(path)}
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidInput(
            f"{path}: not a grounded eval report ({FORMAT})", details={"file": str(path)}
        )
    if not data.get("complete"):
        raise InvalidInput(
            f"{path}: the baseline is an incomplete run", details={"file": str(path)}
        )
    return data


def diff(report: dict[str, Any], baseline: dict[str, Any]) -> list[dict[str, Any]]:
    """Every (scope, variant, metric) present in both, with the change."""
    before = {(r["scope"], r["variant"]): r for r in baseline["summary"]}
    rows = []
    for row in report["summary"]:
        old = before.get((row["scope"], row["variant"]))
        if old is None:
            continue
        for metric in DIFF_METRICS:
            if row.get(metric) is None or old.get(metric) is None:
                continue
            rows.append(
                {
                    "scope": row["scope"],
                    "variant": row["variant"],
                    "metric": metric,
                    "baseline": old[metric],
                    "now": row[metric],
                    "change": row[metric] - old[metric],
                }
            )
    return rows

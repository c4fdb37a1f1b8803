"""Confidence-weight calibration on frozen fixtures (seed 000 ADR-016).

The procedure is fixed by the ADR and by the fixture file, not by this code:
candidate weights 0.1..0.5 run on the calibration split; the smallest that
passes every gate is chosen and run once on the disjoint validation split;
every family and language is reported. Nothing here may edit labels, splits
or gates: they are read from the frozen file (its sha256 is in the report)
and a fixture file that does not have 12 + 12 disjoint families with English
and Spanish variants is refused. No candidate passing is a valid outcome:
the default stays 0.

Runs are on the retrieval path without rerank: preference is applied after
fusion and before rerank, so a reranker reorders the head by its own scores
and would measure the reranker, not the weight.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.errors import InvalidInput
from grounded.evals import corpus
from grounded.evals.metrics import mean
from grounded.gateway import Gateway
from grounded.retrieve import Retriever, SearchRequest

FORMAT: Final = "grounded-confidence-fixtures/1"
LANGUAGES: Final = ("en", "es")
LABELS: Final = frozenset({"verified", "inferred", "unverified"})


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    split: str
    language: str
    query: str
    relevant: frozenset[str]  # item refs "family/language/key"
    protected: bool


@dataclass(frozen=True)
class Fixtures:
    path: Path
    sha256: str
    version: int
    weights: tuple[float, ...]
    k: int
    gates: dict[str, Any]
    items: tuple[tuple[str, str, str], ...]  # (ref, label, body)
    cases: tuple[Case, ...]


def load_fixtures(path: Path) -> Fixtures:
    """Read and check the frozen file; InvalidInput names the file and line."""
    raw = path.read_text(encoding="utf-8")

    def bad(needle: str | None, message: str) -> InvalidInput:
        at = raw.find(needle) if needle else -1
        line = raw.count("\n", 0, at) + 1 if at >= 0 else None
        where = f"{path}:{line}" if line else str(path)
        return InvalidInput(f"{where}: {message}", details={"file": str(path), "line": line})

    try:
        doc = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{path}:{exc.lineno}: not JSON ({exc.msg})", details={"file": str(path)}
        ) from exc
    if doc.get("format") != FORMAT:
        raise bad(None, f"not a confidence fixture file ({FORMAT})")
    items: list[tuple[str, str, str]] = []
    cases: list[Case] = []
    splits: dict[str, set[str]] = {"calibration": set(), "validation": set()}
    for family in doc.get("families", []):
        fid, split = family.get("id"), family.get("split")
        if split not in splits or not isinstance(fid, str):
            raise bad(f'"id": "{fid}"', f"family {fid!r}: split must be calibration or validation")
        if fid in splits["calibration"] | splits["validation"]:
            raise bad(f'"id": "{fid}"', f"family {fid!r} appears twice")
        splits[split].add(fid)
        if set(family.get("variants", {})) != set(LANGUAGES):
            raise bad(f'"id": "{fid}"', f"family {fid!r} needs exactly {', '.join(LANGUAGES)}")
        for language in LANGUAGES:
            variant = family["variants"][language]
            keys = set()
            for item in variant["items"]:
                if item["confidence"] not in LABELS:
                    raise bad(item["body"][:40], f"label {item['confidence']!r} is not a label")
                keys.add(item["key"])
                items.append((f"{fid}/{language}/{item['key']}", item["confidence"], item["body"]))
            for case in variant["cases"]:
                missing = set(case["relevant"]) - keys
                if missing or not case["query"].strip():
                    raise bad(f'"{case["id"]}"', f"case {case['id']!r}: empty or unknown relevant")
                cases.append(
                    Case(
                        case["id"],
                        fid,
                        split,
                        language,
                        case["query"],
                        frozenset(f"{fid}/{language}/{k}" for k in case["relevant"]),
                        bool(case["protected"]),
                    )
                )
    if len(splits["calibration"]) != 12 or len(splits["validation"]) != 12:
        raise bad(None, "ADR-016 needs 12 calibration and 12 validation families")
    if len({body for _, _, body in items}) != len(items):
        raise bad(None, "item bodies must be unique (hits are matched back by text)")
    return Fixtures(
        path,
        hashlib.sha256(raw.encode()).hexdigest(),
        int(doc["version"]),
        tuple(float(w) for w in doc["candidate_weights"]),
        int(doc["k"]),
        dict(doc["gates"]),
        tuple(items),
        tuple(cases),
    )


def prepare(
    settings: Settings,
    database: Database,
    gateway: Gateway,
    fixtures: Fixtures,
    principal_for: Callable[[str], Principal],
    tenant: str | None = None,
) -> tuple[Principal, dict[str, str]]:
    """The fixture items as knowledge items in their own tenant, indexed.

    Returns the principal and item id -> ref. The tenant is keyed by the
    file's sha256 and reused while it matches.
    """
    from grounded.index import Builder, refresh
    from grounded.index.embedder import GatewayEmbedder
    from grounded.knowledge import KnowledgeItems
    from grounded.knowledge.items import NewItem

    slug = tenant or f"eval-conf-{fixtures.sha256[:16]}"
    reused = corpus.ensure_tenant(settings, slug, fixtures.sha256)
    principal = principal_for(slug)
    by_body = {body: ref for ref, _, body in fixtures.items}
    existing = _item_refs(database, principal, by_body)
    if not reused or len(existing) != len(fixtures.items):
        service = KnowledgeItems(database)
        have = set(existing.values())
        for ref, label, body in fixtures.items:
            if ref not in have:
                service.create(
                    principal, NewItem(body=body, confidence=label, category="eval-confidence")
                )
        existing = _item_refs(database, principal, by_body)
    refresh(Builder(database, settings.index, GatewayEmbedder(gateway, principal)), principal)
    return principal, existing


def _item_refs(database: Database, principal: Principal, by_body: dict[str, str]) -> dict[str, str]:
    with database.transaction(principal.tenant_id) as conn:
        rows = conn.execute(
            "SELECT id::text AS id, body FROM knowledge_items WHERE deleted_at IS NULL"
        ).fetchall()
    return {r["id"]: by_body[r["body"]] for r in rows if r["body"] in by_body}


def measure(
    retriever: Retriever,
    principal: Principal,
    refs: dict[str, str],
    cases: Sequence[Case],
    weight: float,
    k: int,
) -> list[dict[str, Any]]:
    """One row per case: the rank of its first relevant item (None: not returned)."""
    rows = []
    for case in cases:
        found = retriever.search(
            principal,
            SearchRequest(query=case.query, k=k, confidence_weight=weight, rerank=False),
        )
        ranked = [refs.get(h.chunk_id, "?") for h in found.hits]
        rank = next((i + 1 for i, r in enumerate(ranked) if r in case.relevant), None)
        rows.append(
            {
                "case": case.id,
                "family": case.family,
                "language": case.language,
                "protected": case.protected,
                "rank": rank,
                "top1": 1.0 if rank == 1 else 0.0,
                "recall@3": 1.0 if rank is not None and rank <= 3 else 0.0,
                "no_relevant": 1.0 if rank is None else 0.0,
                "run_id": str(found.run_id),
            }
        )
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    preference = [r for r in rows if not r["protected"]]
    protected = [r for r in rows if r["protected"]]
    return {
        "cases": len(rows),
        "top1": mean(r["top1"] for r in rows),
        "recall@3": mean(r["recall@3"] for r in rows),
        "no_relevant": mean(r["no_relevant"] for r in rows),
        "preference_top1": mean(r["top1"] for r in preference),
        "protected_cases": len(protected),
        "protected_lost": [r["case"] for r in protected if not r["recall@3"]],
    }


def gate(
    rows: Sequence[dict[str, Any]], zero: Sequence[dict[str, Any]], gates: dict[str, Any]
) -> list[str]:
    """Why ``rows`` fail the frozen gates (empty: pass)."""
    now, before = summary(rows), summary(zero)
    keep = int(gates["protected_kept_at"])
    lost = [r["case"] for r in rows if r["protected"] and (r["rank"] is None or r["rank"] > keep)]
    reasons = []
    if lost:
        reasons.append(f"protected cases lost their only answer from the top {keep}: {lost}")
    if (now["preference_top1"] or 0.0) < float(gates["min_preference_top1"]):
        reasons.append(
            f"preference top-1 {now['preference_top1']:.3f} < {gates['min_preference_top1']}"
        )
    if gates.get("no_top1_loss_vs_zero") and now["top1"] < before["top1"]:
        reasons.append(f"top-1 {now['top1']:.3f} below weight 0's {before['top1']:.3f}")
    if gates.get("no_recall_loss_vs_zero") and now["recall@3"] < before["recall@3"]:
        reasons.append(f"recall@3 {now['recall@3']:.3f} below weight 0's {before['recall@3']:.3f}")
    return reasons


def breakdown(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per family and language: the figures the ADR asks to report."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["family"], r["language"]), []).append(r)
        groups.setdefault(("all", r["language"]), []).append(r)
    return [
        {"family": f, "language": lang, **summary(items)}
        for (f, lang), items in sorted(groups.items(), key=lambda kv: (kv[0][0] != "all", kv[0]))
    ]


def calibrate(
    retriever: Retriever, principal: Principal, refs: dict[str, str], fixtures: Fixtures
) -> dict[str, Any]:
    """The whole ADR-016 procedure; the validation split is searched only for the chosen
    weight (and weight 0, the reference its gates compare with)."""
    calibration = [c for c in fixtures.cases if c.split == "calibration"]
    validation = [c for c in fixtures.cases if c.split == "validation"]
    zero = measure(retriever, principal, refs, calibration, 0.0, fixtures.k)
    candidates = [
        {
            "weight": 0.0,
            **summary(zero),
            "failures": [],
            "passed": None,
            "breakdown": breakdown(zero),
        }
    ]
    chosen = None
    for weight in fixtures.weights:
        rows = measure(retriever, principal, refs, calibration, weight, fixtures.k)
        failures = gate(rows, zero, fixtures.gates)
        candidates.append(
            {
                "weight": weight,
                **summary(rows),
                "failures": failures,
                "passed": not failures,
                "breakdown": breakdown(rows),
            }
        )
        if not failures and chosen is None:
            chosen = weight
    report: dict[str, Any] = {
        "fixtures": {
            "file": str(fixtures.path),
            "sha256": fixtures.sha256,
            "version": fixtures.version,
        },
        "gates": fixtures.gates,
        "calibration": candidates,
        "chosen_weight": chosen,
        "limits": (
            f"{len(calibration)} calibration and {len(validation)} validation cases "
            f"({sum(c.protected for c in validation)} protected); one case moves a split's "
            f"top-1 by {1 / max(1, len(validation)):.3f}. Hand-written, invented policy facts; "
            "one stale contradiction per family; no rerank. A pass here is evidence for a "
            "default, not proof."
        ),
    }
    if chosen is None:
        report["validation"] = None
        report["verdict"] = "no candidate passed calibration: the default weight stays 0"
        return report
    val_zero = measure(retriever, principal, refs, validation, 0.0, fixtures.k)
    val = measure(retriever, principal, refs, validation, chosen, fixtures.k)
    failures = gate(val, val_zero, fixtures.gates)
    report["validation"] = {
        "weight": chosen,
        **summary(val),
        "weight0": summary(val_zero),
        "failures": failures,
        "passed": not failures,
        "breakdown": breakdown(val),
        "cases": val,
    }
    report["verdict"] = (
        f"weight {chosen:g} passed calibration and validation"
        if not failures
        else f"weight {chosen:g} passed calibration but FAILED validation: the default stays 0"
    )
    return report


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Confidence-weight calibration ({Path(report['fixtures']['file']).name}, "
        f"sha256 {report['fixtures']['sha256'][:12]})",
        "",
        "| weight | top-1 | preference top-1 | recall@3 | no relevant | protected lost | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in report["calibration"]:
        result = "reference" if c["passed"] is None else ("pass" if c["passed"] else "fail")
        lines.append(
            f"| {c['weight']:g} | {c['top1']:.3f} | {c['preference_top1']:.3f} | "
            f"{c['recall@3']:.3f} | {c['no_relevant']:.3f} | "
            f"{len(c['protected_lost'])} | {result} |"
        )
    for c in report["calibration"]:
        if c["failures"]:
            lines.append(f"- weight {c['weight']:g}: {'; '.join(c['failures'])}")
    lines += ["", f"**{report['verdict']}**", ""]
    lines += _per_family(report["calibration"])
    val = report.get("validation")
    if val:
        lines += [
            f"Validation (weight {val['weight']:g}, once): top-1 {val['top1']:.3f} "
            f"(weight 0: {val['weight0']['top1']:.3f}), recall@3 {val['recall@3']:.3f}, "
            f"no relevant {val['no_relevant']:.3f}, protected lost {len(val['protected_lost'])}",
            "",
            "| family | language | cases | top-1 | recall@3 | no relevant | protected lost |",
            "|---|---|---|---|---|---|---|",
        ]
        for b in val["breakdown"]:
            lines.append(
                f"| {b['family']} | {b['language']} | {b['cases']} | {b['top1']:.3f} | "
                f"{b['recall@3']:.3f} | {b['no_relevant']:.3f} | {len(b['protected_lost'])} |"
            )
    lines += ["", f"Limits: {report['limits']}", ""]
    return "\n".join(lines)


def _per_family(candidates: Sequence[dict[str, Any]]) -> list[str]:
    """Calibration top-1 per family and language at every weight (P: a protected answer
    was lost from the top 3 at that weight)."""
    weights = [c["weight"] for c in candidates]
    cells: dict[tuple[str, str], list[str]] = {}
    for c in candidates:
        for b in c["breakdown"]:
            mark = " P" if b["protected_lost"] else ""
            cells.setdefault((b["family"], b["language"]), []).append(f"{b['top1']:.2f}{mark}")
    lines = [
        "Calibration top-1 per family and language (P: a protected answer lost):",
        "",
        "| family | language | " + " | ".join(f"w={w:g}" for w in weights) + " |",
        "|---|---|" + "---|" * len(weights),
    ]
    lines += [f"| {f} | {lang} | " + " | ".join(v) + " |" for (f, lang), v in cells.items()]
    return [*lines, ""]

"""Suites: versioned TOML files in ``evals/`` naming data, run config and gates.

Seed 001 ADR-011: eval sets are code. A suite pins what is measured (data,
split, subset), how (variants, k) and what must hold (gates), so a change to
any of them is a reviewed diff with a version bump. ``SUITE`` may also be a
BEIR directory or a SQuAD JSON file: then the suite is those data with the
default variants and no gates.

    [suite]
    name = "scifact"
    version = 1

    [[data]]
    format = "beir"          # beir | squad | grounded
    path = "../../shared/evaldata/scifact"   # relative to this file
    split = "train"
    language = "en"
    family = "scifact"
    tiers = ["full"]         # default: every tier
    # subset = { queries = 30, distractors = 150, seed = 7 }

    [run]
    variants = ["bm25", "dense", "hybrid", "hybrid+rerank"]

    [[gates]]
    tier = "fast"            # default: every tier
    variant = "hybrid"
    metric = "ndcg@10"
    scope = "all"            # all | language:<code> | family:<name>
    min = 0.6                # and/or max_drop = 0.02 (against --baseline)
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from grounded.errors import InvalidInput
from grounded.evals.datasets import Dataset, load_beir, load_native, load_squad, subset

TIERS: Final = ("fast", "full")
DEFAULT_VARIANTS: Final = ("bm25", "dense", "hybrid", "hybrid+rerank")
METRICS: Final = (
    "ndcg@10",
    "recall@10",
    "recall@100",
    "mrr@10",
    "top1",
    "no_relevant",
    "support_rate",
    "citation_precision",
    "abstention_rate",
    "answer_span_hit",
)
#: Lower is better for these; a gate on them is a maximum.
LOWER_IS_BETTER: Final = frozenset({"no_relevant", "abstention_rate"})


@dataclass(frozen=True)
class DataSpec:
    format: str
    path: Path
    split: str
    language: str
    family: str
    tiers: tuple[str, ...]
    subset: tuple[int, int, int] | None  # queries, distractors, seed
    line: int | None
    skip_empty: bool = False


@dataclass(frozen=True)
class Gate:
    variant: str
    metric: str
    scope: str
    min: float | None
    max_drop: float | None
    tier: str | None
    where: str  # file:line, for the failure message


@dataclass(frozen=True)
class Suite:
    name: str
    version: int
    file: Path | None
    sha256: str
    data: tuple[DataSpec, ...]
    variants: tuple[str, ...]
    k: int
    candidate_k: int
    gates: tuple[Gate, ...]

    def datasets(self, tier: str) -> list[Dataset]:
        """Load (and validate) every dataset of ``tier``."""
        found = [_load(spec) for spec in self.data if tier in spec.tiers]
        if not found:
            raise InvalidInput(
                f"{self.file or self.name}: no data for tier {tier!r}",
                details={"tier": tier},
            )
        return found


def load_suite(
    path: Path,
    *,
    split: str | None = None,
    language: str | None = None,
    skip_empty: bool = False,
) -> Suite:
    """A suite file, a BEIR directory or a SQuAD JSON file.

    ``skip_empty`` leaves out queries with no text (listed in the report);
    without it they are an error naming the file and line.
    """
    if path.is_dir():
        spec = DataSpec(
            "beir",
            path,
            split or "test",
            language or "auto",
            path.name,
            TIERS,
            None,
            None,
            skip_empty,
        )
        return _implicit(path, spec)
    if path.suffix == ".json":
        spec = DataSpec(
            "squad", path, "", language or "auto", path.stem, TIERS, None, None, skip_empty
        )
        return _implicit(path, spec)
    if not path.is_file():
        raise InvalidInput(f"{path}: no such suite file or directory", details={"file": str(path)})
    raw = path.read_text(encoding="utf-8")
    try:
        doc = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: {exc}", details={"file": str(path)}) from exc
    return _parse(path, raw, doc, split, skip_empty)


def _implicit(path: Path, spec: DataSpec) -> Suite:
    return Suite(path.name, 0, None, "", (spec,), DEFAULT_VARIANTS, 100, 100, ())


def _parse(path: Path, raw: str, doc: dict[str, Any], split: str | None, skip_empty: bool) -> Suite:
    def bad(line: int | None, message: str) -> InvalidInput:
        where = f"{path}:{line}" if line else str(path)
        return InvalidInput(f"{where}: {message}", details={"file": str(path), "line": line})

    unknown = set(doc) - {"suite", "data", "run", "gates"}
    if unknown:
        key = sorted(unknown)[0]
        raise bad(_key_line(raw, key), f"unknown table {key!r}")
    head = doc.get("suite")
    if not isinstance(head, dict) or not isinstance(head.get("name"), str):
        raise bad(_key_line(raw, "suite"), "[suite] needs a `name`")
    version = head.get("version")
    if not isinstance(version, int):
        raise bad(
            _key_line(raw, "version") or _key_line(raw, "suite"),
            "[suite] needs an integer `version`",
        )
    data_lines = _header_lines(raw, "[[data]]")
    entries = doc.get("data")
    if not isinstance(entries, list) or not entries:
        raise bad(None, "the suite names no [[data]]")
    specs = [
        _data_spec(
            path, entry, split, data_lines[i] if i < len(data_lines) else None, bad, skip_empty
        )
        for i, entry in enumerate(entries)
    ]
    run = doc.get("run", {})
    variants = tuple(run.get("variants", DEFAULT_VARIANTS))
    k, candidate_k = run.get("k", 100), run.get("candidate_k", 100)
    if not isinstance(k, int) or not 10 <= k <= 100:
        raise bad(_key_line(raw, "k"), "[run] k must be an integer from 10 to 100")
    if not isinstance(candidate_k, int) or not k <= candidate_k <= 1000:
        raise bad(_key_line(raw, "candidate_k"), "[run] candidate_k must be from k to 1000")
    gate_lines = _header_lines(raw, "[[gates]]")
    gates = tuple(
        _gate(path, g, gate_lines[i] if i < len(gate_lines) else None, variants, bad)
        for i, g in enumerate(doc.get("gates", []))
    )
    digest = hashlib.sha256(raw.encode()).hexdigest()
    return Suite(head["name"], version, path, digest, tuple(specs), variants, k, candidate_k, gates)


def _data_spec(
    path: Path, entry: Any, split: str | None, line: int | None, bad: Any, skip_empty: bool
) -> DataSpec:
    if not isinstance(entry, dict):
        raise bad(line, "[[data]] must be a table")
    fmt = entry.get("format")
    if fmt not in {"beir", "squad", "grounded"}:
        raise bad(line, f"[[data]] format must be beir, squad or grounded, not {fmt!r}")
    for key in ("path", "language"):
        if not isinstance(entry.get(key), str):
            raise bad(line, f"[[data]] needs `{key}`")
    tiers = tuple(entry.get("tiers", TIERS))
    if not set(tiers) <= set(TIERS):
        raise bad(line, f"[[data]] tiers must be among {', '.join(TIERS)}")
    cut = entry.get("subset")
    picked: tuple[int, int, int] | None = None
    if cut is not None:
        try:
            picked = (int(cut["queries"]), int(cut.get("distractors", 0)), int(cut.get("seed", 7)))
        except (KeyError, TypeError, ValueError) as exc:
            raise bad(line, "subset = { queries = N, distractors = N, seed = N }") from exc
    data_path = (path.parent / entry["path"]).resolve()
    return DataSpec(
        fmt,
        data_path,
        split or str(entry.get("split", "test")),
        entry["language"],
        str(entry.get("family") or data_path.stem),
        tiers,
        picked,
        line,
        skip_empty or bool(entry.get("skip_empty_queries", False)),
    )


def _gate(path: Path, g: Any, line: int | None, variants: tuple[str, ...], bad: Any) -> Gate:
    if not isinstance(g, dict):
        raise bad(line, "[[gates]] must be a table")
    variant, metric = g.get("variant"), g.get("metric")
    if variant not in variants:
        raise bad(line, f"gate variant {variant!r} is not among [run] variants")
    if metric not in METRICS:
        raise bad(line, f"gate metric {metric!r} is not one of {', '.join(METRICS)}")
    minimum, max_drop = g.get("min"), g.get("max_drop")
    if minimum is None and max_drop is None:
        raise bad(line, "a gate needs `min` and/or `max_drop`")
    for value in (minimum, max_drop):
        if value is not None and not isinstance(value, (int, float)):
            raise bad(line, "gate thresholds must be numbers")
    scope = str(g.get("scope", "all"))
    if not re.fullmatch(r"all|language:\S+|family:\S+", scope):
        raise bad(line, f"gate scope {scope!r} must be all, language:<code> or family:<name>")
    tier = g.get("tier")
    if tier is not None and tier not in TIERS:
        raise bad(line, f"gate tier must be one of {', '.join(TIERS)}")
    return Gate(
        variant,
        metric,
        scope,
        None if minimum is None else float(minimum),
        None if max_drop is None else float(max_drop),
        tier,
        f"{path.name}:{line}" if line else path.name,
    )


def _header_lines(raw: str, header: str) -> list[int]:
    """1-based lines of each ``[[array]]`` header (tomllib keeps no positions)."""
    return [n for n, text in enumerate(raw.splitlines(), start=1) if text.strip() == header]


def _key_line(raw: str, key: str) -> int | None:
    pattern = re.compile(rf"^\s*(\[+\s*)?{re.escape(key)}\b")
    for n, text in enumerate(raw.splitlines(), start=1):
        if pattern.match(text):
            return n
    return None


def _load(spec: DataSpec) -> Dataset:
    if spec.format == "beir":
        dataset = load_beir(
            spec.path,
            spec.split,
            language=spec.language,
            family=spec.family,
            skip_empty=spec.skip_empty,
        )
    elif spec.format == "squad":
        dataset = load_squad(
            spec.path, language=spec.language, family=spec.family, skip_empty=spec.skip_empty
        )
    else:
        dataset = load_native(
            spec.path / "corpus.jsonl",
            spec.path / "queries.jsonl",
            language=spec.language,
            family=spec.family,
        )
    if spec.subset is not None:
        queries, distractors, seed = spec.subset
        dataset = subset(dataset, queries=queries, distractors=distractors, seed=seed)
    if spec.language == "auto":
        dataset = _with_language(dataset, _guess_language(dataset))
    return dataset


def _guess_language(dataset: Dataset) -> str:
    """The most common language of the first queries (data given without a suite)."""
    from collections import Counter

    from grounded.ingest.language import detect_language

    votes = Counter(detect_language(q.text) or "und" for q in dataset.queries[:50])
    return votes.most_common(1)[0][0]


def _with_language(dataset: Dataset, language: str) -> Dataset:
    queries = tuple(dataclasses.replace(q, language=language) for q in dataset.queries)
    return dataclasses.replace(dataset, language=language, queries=queries)

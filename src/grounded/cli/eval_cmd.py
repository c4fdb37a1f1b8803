"""`grounded eval`: measure retrieval (and answers) on versioned suites."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from grounded.cli.common import JsonOption, err_console, load_settings
from grounded.cli.local_admin import local_admin
from grounded.db import Database
from grounded.evals import RunOptions, load_baseline, load_suite, markdown, run, write

app = typer.Typer(help="Evaluate retrieval quality on suites (see docs/evals.md).")


@app.command("run")
def run_cmd(
    suite_path: Path = typer.Argument(
        ..., metavar="SUITE", help="A suite file (evals/*.toml), a BEIR directory or SQuAD JSON."
    ),
    tenant: str | None = typer.Option(
        None, "--tenant", "-t", help="Tenant for the corpus [default: eval-<fingerprint>]."
    ),
    tier: str = typer.Option("fast", "--tier", help="fast (CI subset) or full."),
    split: str | None = typer.Option(
        None, "--split", help="BEIR split (queries_<split>.jsonl, qrels/<split>.tsv)."
    ),
    language: str | None = typer.Option(
        None, "--language", help="Language of data given without a suite [default: detected]."
    ),
    variant: list[str] = typer.Option(
        None, "--variant", help="Only these variants (repeatable) [default: the suite's]."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N queries."),
    skip_empty: bool = typer.Option(
        False, "--skip-empty-queries", help="Leave out queries with no text (listed in the report)."
    ),
    report_dir: Path | None = typer.Option(
        None, "--report", help="Write report.json, report.md and report.png here."
    ),
    baseline: Path | None = typer.Option(
        None, "--baseline", help="A saved report.json to diff against (and for max_drop gates)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Ingest the suite's corpus into its own tenant (reused while its fingerprint
    matches), run every query through each variant, print the figures, check the gates.

    Exit 1 when a gate fails or the run is incomplete.
    """
    if tier not in ("fast", "full"):
        raise typer.BadParameter("--tier must be fast or full")
    settings = load_settings()
    suite = load_suite(suite_path, split=split, language=language, skip_empty=skip_empty)
    saved = None
    if baseline is not None:
        saved = load_baseline(baseline)
        saved["_file"] = str(baseline)
    options = RunOptions(
        tier=tier, tenant=tenant, variants=tuple(variant or ()) or None, limit=limit
    )
    with Database.open(settings) as database:
        found = run(
            settings,
            database,
            suite,
            options,
            lambda slug: local_admin(settings, slug),
            baseline=saved,
            say=lambda line: err_console.print(line, highlight=False),
        )
    if report_dir is not None:
        for path in write(found, report_dir):
            err_console.print(f"wrote {path}", highlight=False)
    if as_json:
        typer.echo(json.dumps(found, indent=2, ensure_ascii=False))
    else:
        typer.echo(markdown(found))
    failed = [g["message"] for g in found["gates"] if not g["passed"]]
    for message in failed:
        err_console.print(message, highlight=False, markup=False)
    if not found["complete"]:
        err_console.print(f"INCOMPLETE RUN: {found['error']}", highlight=False, markup=False)
    if failed or not found["complete"]:
        raise typer.Exit(1)

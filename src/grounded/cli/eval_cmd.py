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
        err_console.print(message, highlight=False, markup=False, soft_wrap=True)
    if not found["complete"]:
        err_console.print(f"INCOMPLETE RUN: {found['error']}", highlight=False, markup=False)
    if failed or not found["complete"]:
        raise typer.Exit(1)


@app.command("calibrate")
def calibrate_cmd(
    fixtures_path: Path = typer.Argument(
        Path("evals/confidence-fixtures.json"), metavar="FIXTURES", help="The frozen fixture file."
    ),
    tenant: str | None = typer.Option(
        None, "--tenant", "-t", help="Tenant for the items [default: eval-conf-<sha256>]."
    ),
    report_dir: Path | None = typer.Option(
        None, "--report", help="Write calibration.json and calibration.md here."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Seed 000 ADR-016: run weights 0.1..0.5 on the calibration split, pick the smallest
    that passes the file's gates, evaluate it once on validation. Exit 1 if none passes."""
    from grounded.evals import calibration
    from grounded.gateway import open_gateway
    from grounded.index import IndexReader
    from grounded.retrieve import Retriever

    settings = load_settings()
    fixtures = calibration.load_fixtures(fixtures_path)
    with Database.open(settings) as database:
        gateway = open_gateway(settings, database)
        try:
            principal, refs = calibration.prepare(
                settings,
                database,
                gateway,
                fixtures,
                lambda slug: local_admin(settings, slug),
                tenant,
            )
            retriever = Retriever(database, IndexReader(database, settings.index), gateway)
            found = calibration.calibrate(retriever, principal, refs, fixtures)
        finally:
            gateway.close()
    text = calibration.markdown(found)
    if report_dir is not None:
        report_dir.mkdir(parents=True, exist_ok=True)
        (report_dir / "calibration.json").write_text(
            json.dumps(found, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        (report_dir / "calibration.md").write_text(text, encoding="utf-8")
    typer.echo(json.dumps(found, indent=2, ensure_ascii=False) if as_json else text)
    validation = found.get("validation")
    if not validation or not validation["passed"]:
        raise typer.Exit(1)

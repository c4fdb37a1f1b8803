"""`grounded ask` and `grounded answers`: verified answers from the command line."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import typer
from rich.table import Table

from grounded.answer import Answer, Answerer, AnswerRequest
from grounded.auth.principal import Principal
from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.cli.local_admin import local_admin
from grounded.config import Settings
from grounded.db import Database
from grounded.gateway import open_gateway
from grounded.index import IndexReader
from grounded.retrieve import Retriever

answers_app = typer.Typer(help="Stored answers and the abstention rate.", no_args_is_help=True)


def _principal(settings: Settings, tenant: str, public: bool) -> Principal:
    principal = local_admin(settings, tenant)
    return Principal("system", principal.id, principal.tenant_id) if public else principal


def _with_answerer(settings: Settings, run: Any) -> Any:
    with Database.open(settings) as database:
        gateway = open_gateway(settings, database)
        try:
            retriever = Retriever(database, IndexReader(database, settings.index), gateway)
            return run(Answerer(database, retriever, gateway, settings.answer))
        finally:
            gateway.close()


def ask(
    question: str = typer.Argument(..., help="The question to answer from your documents."),
    tenant: str = typer.Option(..., "--tenant", "-t", help="Tenant slug to ask in."),
    k: int | None = typer.Option(None, "--k", help="Sections retrieved as evidence (1-20)."),
    retry: bool = typer.Option(
        True, "--retry/--no-retry", help="Retry once with a rewritten question before abstaining."
    ),
    public: bool = typer.Option(
        False, "--public", help="Ask as a plain user would (verified knowledge only)."
    ),
    explain: bool = typer.Option(False, "--explain", help="Show every attempt's receipt."),
    as_json: bool = JsonOption,
) -> None:
    """Answer with verified citations, or abstain and say what was missing."""
    settings = load_settings()
    principal = _principal(settings, tenant, public)
    answer: Answer = _with_answerer(
        settings,
        lambda a: a.answer(principal, AnswerRequest(question=question, k=k, retry=retry)),
    )
    _show(answer, as_json, explain)
    if answer.abstained:
        raise typer.Exit(2)


@answers_app.command("show")
def show(
    answer_id: uuid.UUID = typer.Argument(..., help="Answer id (from `grounded ask --json`)."),
    tenant: str = typer.Option(..., "--tenant", "-t", help="Tenant slug."),
    as_json: bool = JsonOption,
) -> None:
    """Print a stored answer with its citations and attempts."""
    settings = load_settings()
    principal = local_admin(settings, tenant)
    answer: Answer = _with_answerer(settings, lambda a: a.get(principal, answer_id))
    _show(answer, as_json, explain=True)


@answers_app.command("stats")
def stats(
    tenant: str = typer.Option(..., "--tenant", "-t", help="Tenant slug."),
    as_json: bool = JsonOption,
) -> None:
    """How many answers were given and how many abstained."""
    settings = load_settings()
    principal = local_admin(settings, tenant)
    figures: dict[str, Any] = _with_answerer(settings, lambda a: a.stats(principal))
    if as_json:
        print_json(figures)
        return
    rate = figures["abstention_rate"]
    console.print(
        f"{figures['answers']} answers, {figures['abstained']} abstained"
        f" ({'-' if rate is None else f'{rate:.1%}'}), {figures['extractive']} extractive"
    )


def _show(answer: Answer, as_json: bool, explain: bool) -> None:
    if as_json:
        data = dataclasses.asdict(answer)
        if not explain:
            data.pop("attempts")
        print_json(data)
        return
    if answer.abstained:
        console.print(f"[yellow]Abstained[/yellow]: {answer.text}")
    else:
        label = " (extractive: no LLM configured)" if answer.mode == "extractive" else ""
        console.print(f"{answer.text}\n[dim]{answer.mode}{label}[/dim]")
        table = Table("#", "document", "where", "quote")
        for c in answer.citations:
            where = ", ".join(
                f"{key} {value}"
                for key, value in c.provenance.items()
                if key in ("page", "slide", "sheet", "cell_range", "start_s")
            )
            table.add_row(
                str(c.number),
                (c.document_title or c.source_name or "")[:30],
                where,
                (c.quote or "")[:90],
            )
        console.print(table)
    console.print(
        f"[dim]answer {answer.id}; retrieval runs "
        f"{', '.join(str(r) for r in answer.retrieval_run_ids)}[/dim]"
    )
    if explain:
        print_json({"attempts": answer.attempts, "claims": answer.claims})

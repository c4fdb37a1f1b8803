"""`grounded search`: the read path from the command line, with its receipt on demand."""

from __future__ import annotations

import dataclasses
import json

import typer
from rich.table import Table

from grounded.auth.principal import Principal
from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.cli.local_admin import local_admin
from grounded.db import Database
from grounded.gateway import open_gateway
from grounded.index import IndexReader
from grounded.retrieve import Retriever, SearchRequest


def search(
    query: str = typer.Argument(..., help="What to look for."),
    tenant: str = typer.Option(..., "--tenant", "-t", help="Tenant slug to search in."),
    k: int = typer.Option(8, "--k", help="Results to return."),
    candidate_k: int = typer.Option(
        50, "--candidate-k", help="Candidates per retriever before fusion (1-1000)."
    ),
    weight: float = typer.Option(
        0.0, "--confidence-weight", help="Bounded preference for verified over unverified, 0-0.5."
    ),
    mode: list[str] = typer.Option(
        ["bm25", "dense"], "--mode", help="bm25 and/or dense (repeatable)."
    ),
    rerank: bool = typer.Option(True, "--rerank/--no-rerank", help="Rerank the top candidates."),
    public: bool = typer.Option(
        False, "--public", help="Search as a plain user would (verified knowledge only)."
    ),
    explain: bool = typer.Option(False, "--explain", help="Print the full receipt."),
    as_json: bool = JsonOption,
) -> None:
    """Hybrid search (BM25 + dense, RRF k=60, rerank, one hit per section)."""
    settings = load_settings()
    principal = local_admin(settings, tenant)
    if public:
        principal = Principal("system", principal.id, principal.tenant_id)
    with Database.open(settings) as database:
        gateway = open_gateway(settings, database)
        try:
            retriever = Retriever(database, IndexReader(database, settings.index), gateway)
            found = retriever.search(
                principal,
                SearchRequest(
                    query=query,
                    k=k,
                    candidate_k=candidate_k,
                    confidence_weight=weight,
                    modes=frozenset(mode),
                    rerank=rerank,
                ),
            )
        finally:
            gateway.close()
    if as_json:
        out: dict[str, object] = {
            "retrieval_run_id": str(found.run_id),
            "results": [dataclasses.asdict(h) for h in found.hits],
        }
        if explain:
            out["receipt"] = found.receipt
        print_json(out)
        return
    table = Table("#", "score", "document", "where", "text")
    for hit in found.hits:
        where = ", ".join(
            f"{key} {value}"
            for key, value in hit.provenance.items()
            if key in ("page", "slide", "sheet", "cell_range", "start_s")
        )
        table.add_row(
            str(hit.rank),
            f"{hit.score:.4f}",
            (hit.document_title or "")[:30],
            where,
            hit.text[:90].replace("\n", " "),
        )
    console.print(table)
    console.print(f"receipt: retrieval run {found.run_id}")
    if explain:
        console.print_json(json.dumps(found.receipt, default=str))

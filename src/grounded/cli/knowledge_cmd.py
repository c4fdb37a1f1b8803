"""`grounded knowledge`: curate reviewed knowledge items from the command line."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, cast

import typer
from rich.table import Table

from grounded.auth.principal import Principal
from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.cli.local_admin import local_admin
from grounded.db import Database
from grounded.errors import InvalidInput
from grounded.knowledge import ItemFilter, KnowledgeItem, KnowledgeItems, NewItem, ReviewInput
from grounded.knowledge import list_events as read_events
from grounded.knowledge.review import Action

app = typer.Typer(
    help="Curate knowledge items: add, review, revise, delete, restore.", no_args_is_help=True
)

TenantOption = typer.Option(..., "--tenant", "-t", help="Tenant slug to act in.")
VersionOption = typer.Option(
    ..., "--version", "-v", help="The version you read (stale versions are refused)."
)


@contextmanager
def _session(tenant: str) -> Iterator[tuple[KnowledgeItems, Principal, Database]]:
    settings = load_settings()
    principal = local_admin(settings, tenant)
    with Database.open(settings) as database:
        yield KnowledgeItems(database), principal, database


def _show(item: KnowledgeItem, as_json: bool) -> None:
    if as_json:
        print_json(item_json(item))
        return
    console.print(
        f"[bold]{item.id}[/] v{item.version}  {item.review_state}  "
        f"confidence={item.effective_confidence}"
        f"{' (stored ' + repr(item.confidence) + ')' if item.confidence not in (None, item.effective_confidence) else ''}"  # noqa: E501
        f"{'  pinned' if item.pinned else ''}{'  DELETED' if item.deleted_at else ''}"
    )
    console.print(item.body, highlight=False, markup=False)


def item_json(item: KnowledgeItem) -> dict[str, Any]:
    data = dataclasses.asdict(item)
    data["effective_confidence"] = item.effective_confidence
    return data


@app.command("add")
def add(
    body: str = typer.Argument(..., help="The statement or passage."),
    tenant: str = TenantOption,
    category: str = typer.Option(None, help="A category to filter by later."),
    tag: list[str] = typer.Option(None, "--tag", help="A tag (repeatable)."),
    confidence: str = typer.Option(
        None, help="verified | inferred | unverified (a writer declaration, not a probability)."
    ),
    basis: str = typer.Option(None, help="Evidence pointer as JSON, e.g. '{\"url\": ...}'."),
    source_id: uuid.UUID = typer.Option(None, help="The source it comes from."),
    document_id: uuid.UUID = typer.Option(None, help="The document it comes from."),
    submit: bool = typer.Option(False, help="Submit for review at once (state pending)."),
    as_json: bool = JsonOption,
) -> None:
    """Add a knowledge item (a draft unless --submit)."""
    with _session(tenant) as (items, principal, _):
        item = items.create(
            principal,
            NewItem(
                body=body,
                basis=_json_arg(basis, "basis"),
                category=category,
                tags=tuple(tag or ()),
                confidence=confidence,
                source_id=source_id,
                document_id=document_id,
                submit=submit,
            ),
        )
    _show(item, as_json)


@app.command("list")
def list_items(
    tenant: str = TenantOption,
    state: str = typer.Option(None, help="Only items in this review state."),
    category: str = typer.Option(None, help="Only items in this category."),
    deleted: bool = typer.Option(False, "--include-deleted", help="Include tombstones."),
    limit: int = typer.Option(50, help="Items per page (1-200)."),
    cursor: str = typer.Option(None, help="Continue from a previous page's cursor."),
    as_json: bool = JsonOption,
) -> None:
    """List items in creation order, a page at a time."""
    with _session(tenant) as (items, principal, _):
        page = items.page(
            principal,
            cursor=cursor,
            limit=limit,
            filters=ItemFilter(review_state=state, category=category, include_deleted=deleted),
        )
    if as_json:
        print_json({"items": [item_json(i) for i in page.items], "next_cursor": page.next_cursor})
        return
    table = Table("id", "v", "state", "confidence", "body")
    table.columns[0].no_wrap = True
    for i in page.items:
        table.add_row(
            str(i.id),
            str(i.version),
            i.review_state,
            i.effective_confidence,
            i.body[:60] + ("…" if len(i.body) > 60 else ""),
        )
    console.print(table)
    if page.next_cursor:
        console.print(f"more: --cursor {page.next_cursor}")


@app.command("show")
def show(item_id: uuid.UUID, tenant: str = TenantOption, as_json: bool = JsonOption) -> None:
    """Show one item (tombstones included)."""
    with _session(tenant) as (items, principal, _):
        item = items.get(principal, item_id, include_deleted=True)
    _show(item, as_json)


@app.command("review")
def review_item(
    item_id: uuid.UUID,
    action: str = typer.Option(..., help="submit | verify | reject"),
    tenant: str = TenantOption,
    version: int = VersionOption,
    note: str = typer.Option(None, help="Why (required to verify or reject)."),
    source_link: str = typer.Option(None, help="Where it was checked (required to verify)."),
    captured_at: datetime = typer.Option(
        None, help="When the source was captured, ISO 8601 (required to verify)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Move an item through review: submit, verify (with evidence) or reject (with a note)."""
    if action not in ("submit", "verify", "reject"):
        raise InvalidInput("action must be submit, verify or reject", details={"field": "action"})
    with _session(tenant) as (items, principal, _):
        item = items.review(
            principal,
            item_id,
            version,
            ReviewInput(
                action=cast(Action, action),
                note=note,
                source_link=source_link,
                captured_at=captured_at,
            ),
        )
    _show(item, as_json)


@app.command("revise")
def revise(
    item_id: uuid.UUID,
    tenant: str = TenantOption,
    version: int = VersionOption,
    body: str = typer.Option(None, help="The new body."),
    basis: str = typer.Option(None, help="The new basis as JSON."),
    confidence: str = typer.Option(None, help="Explicit label; omitted = derived from inputs."),
    input_id: list[uuid.UUID] = typer.Option(None, "--input", help="Another input (repeatable)."),
    as_json: bool = JsonOption,
) -> None:
    """Change body or basis: the item returns to review and its label is re-derived."""
    with _session(tenant) as (items, principal, _):
        item = items.revise(
            principal,
            item_id,
            version,
            body=body,
            basis=_json_arg(basis, "basis") if basis else None,
            confidence_label=confidence,
            inputs=tuple(input_id or ()),
        )
    _show(item, as_json)


@app.command("delete")
def delete(
    item_id: uuid.UUID,
    tenant: str = TenantOption,
    version: int = VersionOption,
    as_json: bool = JsonOption,
) -> None:
    """Tombstone an item (nothing is physically deleted)."""
    with _session(tenant) as (items, principal, _):
        item = items.delete(principal, item_id, version)
    _show(item, as_json)


@app.command("restore")
def restore(
    item_id: uuid.UUID,
    tenant: str = TenantOption,
    version: int = VersionOption,
    as_json: bool = JsonOption,
) -> None:
    """Bring a tombstoned item back."""
    with _session(tenant) as (items, principal, _):
        item = items.restore(principal, item_id, version)
    _show(item, as_json)


@app.command("history")
def history(item_id: uuid.UUID, tenant: str = TenantOption, as_json: bool = JsonOption) -> None:
    """The full event history of an item, oldest first."""
    with _session(tenant) as (items, principal, database):
        items.get(principal, item_id, include_deleted=True)
        with database.transaction(principal.tenant_id) as conn:
            events = read_events(
                conn, entity_type="knowledge_item", entity_id=item_id, limit=10_000
            )
    if as_json:
        print_json([dataclasses.asdict(e) for e in events])
        return
    table = Table("#", "when", "action", "actor", "version")
    for e in events:
        version = (e.after or {}).get("version", "")
        table.add_row(
            str(e.id),
            f"{e.occurred_at:%Y-%m-%d %H:%M:%S}",
            e.action,
            f"{e.actor_kind}:{str(e.actor_id)[:8]}",
            str(version),
        )
    console.print(table)


def _json_arg(value: str | None, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{field} must be a JSON object: {exc.msg}", details={"field": field}
        ) from exc
    if not isinstance(parsed, dict):
        raise InvalidInput(f"{field} must be a JSON object", details={"field": field})
    return parsed

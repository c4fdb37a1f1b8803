"""Tokenisers: Jieba search mode with the project dictionary, Snowball en/es, routing."""

from __future__ import annotations

import pytest

from grounded.index.tokenize import analyzer

pytestmark = pytest.mark.unit


def test_chinese_uses_search_mode_project_dictionary_and_stop_words() -> None:
    terms = analyzer().tokenize("我们的检索增强生成系统使用语料指纹").terms
    # Project dictionary words survive whole, search mode adds their parts.
    assert "检索增强生成" in terms
    assert "语料指纹" in terms
    assert {"检索", "生成", "语料", "指纹"} <= set(terms)
    # "我们" and "的" are fixed stop words.
    assert "我们" not in terms
    assert "的" not in terms


def test_hmm_is_off_so_unknown_words_are_not_invented() -> None:
    # Jieba's README example: with HMM on, "杭研" is discovered as a new word.
    terms = analyzer().tokenize("他来到了网易杭研大厦").terms
    assert "杭研" not in terms
    assert {"杭", "研"} <= set(terms)


def test_english_and_spanish_are_stemmed_without_stop_words() -> None:
    a = analyzer()
    assert a.tokenize("The policies were running", "en").terms == ("polici", "run")
    assert a.tokenize("Las políticas están disponibles", "es").terms == ("polit", "dispon")


def test_undeclared_latin_text_is_routed_by_stop_word_vote() -> None:
    a = analyzer()
    assert a.latin_language("los datos de la empresa y el informe", None) == "es"
    assert a.latin_language("the data of the company and the report", None) == "en"
    assert a.latin_language("xyz", None) == "en"


def test_mixed_chinese_and_english_keeps_both_and_records_both_ids() -> None:
    a = analyzer()
    result = a.tokenize("向量索引 uses HNSW graphs")
    assert "向量索引" in result.terms
    assert "hnsw" in result.terms
    assert "graph" in result.terms
    assert result.tokenizer_ids == {a.ids["zh"], a.ids["en"]}


def test_query_terms_are_deduplicated_in_order() -> None:
    assert analyzer().query_terms("apple apples APPLE banana", "en") == ["appl", "banana"]


def test_tokenizer_ids_name_library_dictionary_and_stop_words() -> None:
    ids = analyzer().ids
    assert ids["zh"].startswith("jieba-0.42.1-search-nohmm-dict")
    assert "-stop" in ids["zh"]
    assert ids["en"].startswith("snowball-english-")
    assert ids["es"].startswith("snowball-spanish-")

"""Tokenizer: what BM25 sees of Chinese, English and mixed text."""

from __future__ import annotations

import math

import pytest

from agentic_rag.text.language import detect_language
from agentic_rag.text.tokenize import add_terms, tokenize


def test_chinese_is_segmented_into_words_with_search_subwords():
    toks = tokenize("中华人民共和国劳动合同法")
    assert "中华人民共和国" in toks
    assert {"人民", "共和国"} <= set(toks)  # sub-words let a partial name match


def test_english_is_lowercased_and_stemmed_without_stopwords():
    assert tokenize("The Employers are PAYING wages") == ["employ", "pay", "wage"]


def test_mixed_text_keeps_numbers_and_drops_punctuation():
    toks = tokenize("2023年营收增长7.6%，iPhone 15 Pro发布！")
    assert toks[:2] == ["2023", "年"] and "增长" in toks
    assert "7.6" in toks and "15" in toks and "pro" in toks
    assert not any(t in toks for t in ("，", "%", "！", " "))


def test_fullwidth_digits_and_letters_match_ascii():
    assert tokenize("２０２４年ＡＢＣ") == tokenize("2024年abc")


def test_letters_with_diacritics_match_their_plain_spelling():
    # a name is often typed without its accents; a letter the tokenizer did not know split it
    assert tokenize("Björn Ångström moved to Göteborg") == tokenize("Bjorn Angstrom moved to Goteborg")
    assert tokenize("Nguyễn, Łódź, Straße, Øresund") == ["nguyen", "lodz", "strass", "oresund"]
    assert tokenize("医疗保险 café") == tokenize("医疗保险 cafe")


def test_chinese_stopwords_and_question_words_are_dropped():
    toks = tokenize("工伤认定的期限是什么？")
    assert "的" not in toks and "什么" not in toks and "是" not in toks
    assert "工伤" in toks and "期限" in toks


def test_query_and_document_tokenize_alike():
    doc = set(tokenize("职工发生事故伤害，应当自事故伤害发生之日起30日内提出工伤认定申请。"))
    query = tokenize("工伤认定申请要在多少日内提出")
    assert {"工伤", "认定", "申请", "提出"} <= doc & set(query)


def test_empty_and_symbol_only_text():
    assert tokenize("") == []
    assert tokenize("，。！？——……") == []


def test_detect_language():
    assert detect_language("用人单位应当按月支付劳动者工资。") == "zh"
    assert detect_language("Employers shall pay wages monthly.") == "en"
    assert detect_language("根据 Article 5 的规定，用人单位应当支付工资") == "zh"
    assert detect_language("The statute is called 劳动法 in Chinese and it regulates wages.") == "en"


def test_added_terms_stay_whole():
    term = "灵活就业补贴券"
    assert term not in tokenize(f"申请{term}的条件")
    add_terms([term, "x"])  # latin or one-character terms are ignored
    assert term in tokenize(f"申请{term}的条件")


SENTENCES = [
    "参保人员住院发生的政策范围内费用起付标准为一级定点医疗机构",
    "中华人民共和国劳动合同法第三十九条规定的情形",
    "他克莫司胶囊纳入门诊慢特病用药范围",  # an unknown drug name: jieba's HMM joins it
    "个体工商户营业执照上登记的经营者与实际经营者不一致",
]


def test_segmentation_is_jiebas_over_the_same_dictionary(monkeypatch):
    import jieba

    import agentic_rag.text.tokenize as tok
    from agentic_rag.text.tokenize import cut, cut_for_search

    monkeypatch.setattr(tok, "_state", {})  # the dictionary as shipped, without added terms
    for s in SENTENCES:
        assert cut(s) == jieba.lcut(s, HMM=False)
        assert cut_for_search(s) == jieba.lcut_for_search(s)


def test_dictionary_cache_is_written_once_then_read_and_a_damaged_one_is_rebuilt(tmp_path, monkeypatch):
    import agentic_rag.text.tokenize as tok

    dic = tmp_path / "dict.txt"
    dic.write_text("工伤 30 n\n工伤认定 10 n\n认定 50 v\n", encoding="utf-8")
    cache = tmp_path / "cache"
    first = tok.load_dictionary(dic, cache)
    logp, total = first
    assert total == 90 and set(logp) == {"工", "工伤", "工伤认", "工伤认定", "认", "认定"}
    assert logp["工伤"] == pytest.approx(math.log(30 / 90)) and logp["工"] > 0  # a prefix only
    (entry,) = cache.iterdir()
    good = entry.read_bytes()

    def unreadable(path):
        raise AssertionError("the dictionary was parsed again")

    with monkeypatch.context() as m:
        m.setattr(tok, "read_dictionary", unreadable)
        assert tok.load_dictionary(dic, cache) == first  # from the cache file alone
    entry.write_bytes(good[:40])  # truncated: rebuilt from the dictionary and rewritten
    assert tok.load_dictionary(dic, cache) == first
    assert entry.read_bytes() == good
    dic.write_text("工伤 30 n\n", encoding="utf-8")  # the dictionary changed: a new cache entry
    assert tok.load_dictionary(dic, cache)[1] == 30


def test_an_unwritable_cache_only_costs_the_build(tmp_path):
    from agentic_rag.text.tokenize import load_dictionary

    dic = tmp_path / "dict.txt"
    dic.write_text("工伤 30 n\n", encoding="utf-8")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    logp, total = load_dictionary(dic, blocker / "cache")
    assert total == 30 and "工伤" in logp


def test_a_bad_dictionary_line_is_reported_with_its_number(tmp_path):
    from agentic_rag.text.tokenize import load_dictionary

    dic = tmp_path / "dict.txt"
    dic.write_text("工伤 30 n\n认定 many v\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        load_dictionary(dic, None)

"""Tokenizer: what BM25 sees of Chinese, English and mixed text."""

from __future__ import annotations

from agentic_rag.tokenizer import add_terms, detect_language, tokenize


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

"""Question words as the Reasoner reads them: what is subject matter, and how a word is matched."""

from __future__ import annotations

from agentic_rag.agents.vocabulary import TextCover
from agentic_rag.text.terms import content_terms, english_verbs, irregular_form, is_everyday, stem


def test_interjections_and_reflexive_pronouns_are_no_subject_matter():
    keys = [t.key for t in content_terms("Oops, I booked the flight myself. Hello, who approves it?")]
    assert keys == [stem("booked"), "flight", stem("approves")]


def test_irregular_past_forms_and_british_spellings_meet_their_base_word():
    assert stem("paid") == stem("pay") and stem("sent") == stem("send")
    assert stem("behaviour") == stem("behavior") and stem("licence") == stem("license")
    assert TextCover("Employees who pay for a client dinner must claim it.").covers(content_terms("paid")[0])
    assert TextCover("Unacceptable behavior includes theft.").covers(content_terms("behaviour")[0])
    assert irregular_form("paid") and not irregular_form("behaviour") and not irregular_form("left")


def test_verbs_are_read_off_the_modal_or_to_before_them():
    assert english_verbs("Which devices can't I bring abroad? Do we have to report it?") == {"bring", "report"}
    # a subject that is no pronoun is not taken for the verb
    assert english_verbs("Can staff get paid time off?") == frozenset()


def test_a_question_word_joined_to_its_noun_leaves_the_noun():
    assert [t.text for t in content_terms("园区里哪些地方禁止吸烟？")] == ["园区", "地方", "禁止", "吸烟"]


def test_a_separable_verb_split_by_an_aspect_particle_is_the_whole_verb():
    # documents write 请假 / 报名 / 加班 whole; a question puts 了 or 过 inside
    assert [t.text for t in content_terms("上个月我请了假，工资怎么算？")] == ["上个月", "请假", "工资"]
    assert "报名" in [t.text for t in content_terms("青岚半程马拉松有多少人报了名？")]
    assert "加班" in [t.text for t in content_terms("周末加过班能拿多少加班费？")]
    assert [t.text for t in content_terms("了解过程")] == ["了解", "过程"]  # 了 / 过 opening a word stay


def test_a_count_and_its_measure_word_are_no_part_of_the_thing():
    # the segmenter keeps 一辆车 / 两张卡 as words; documents say 车辆 or 卡, never the count
    assert [t.text for t in content_terms("租一辆货车要交多少押金？")] == ["货车", "押金"]
    assert [t.text for t in content_terms("一家企业最多能申请几张停车证？")] == ["企业", "申请", "停车"]
    assert [t.text for t in content_terms("移走一棵古树要补种几棵？")] == ["移走", "古树", "补种"]
    assert "个人账户" in [t.text for t in content_terms("个人账户余额怎么查？")]  # 个人 counts nothing


def test_the_words_of_a_text_are_a_fresh_list_each_time():
    first = content_terms("园区里哪些地方禁止吸烟？")
    first.append(first[0])  # a caller's list: what the next caller gets is unchanged
    assert [t.text for t in content_terms("园区里哪些地方禁止吸烟？")] == ["园区", "地方", "禁止", "吸烟"]


def test_words_that_ask_or_point_are_no_subject_matter():
    # the segmenter's 由谁来 / 找谁 / 这件 ask or point; the noun beside them stays
    assert [t.text for t in content_terms("停车费由谁来交？")] == ["停车费"]
    assert [t.text for t in content_terms("这件包裹由谁签收？")] == ["包裹", "签收"]
    assert [t.text for t in content_terms("每位住户都要登记吗？")] == ["住户", "登记"]


def test_a_colloquial_noun_with_the_suffix_zi_is_covered_by_its_written_word():
    # 房子 is written 房屋, 箱子 箱包: the suffix 子 drops; a word in which 子 is no suffix keeps it
    assert TextCover("出租房屋应当符合安全标准。").covers("房子")
    assert TextCover("托运箱包不得超过二十公斤。").covers("箱子")
    assert not TextCover("电动自行车应当登记。").covers("电子")
    assert not TextCover("女职工享受产假。").covers("女子")


def test_everyday_words_are_told_from_the_terms_of_a_field_by_how_often_people_use_them():
    assert all(is_everyday(w) for w in ("医院", "房子", "孩子"))
    assert not any(is_everyday(w) for w in ("公积金", "工伤", "产假", "养犬登记证"))


def test_a_word_between_pronouns_is_read_as_a_verb_but_not_an_adverb_or_preposition():
    assert english_verbs("If I resign, does the company pay me?") == {"resign", "pay"}
    # an adverb after the subject and a preposition before the object are no verbs
    assert english_verbs("We often ask about them.") == frozenset()

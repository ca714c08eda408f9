"""Chinese and full-width numerals, as statutes and users write them."""

import pytest

from agentic_rag.text.numerals import cn_to_int, int_to_cn, normalize_digits


@pytest.mark.parametrize(("text", "value"), [
    ("一", 1), ("十", 10), ("十二", 12), ("二十", 20), ("一百零五", 105), ("一百一十", 110),
    ("两千", 2000), ("三千零五", 3005), ("一千二百六十", 1260), ("一万", 10_000),
    ("十万", 100_000), ("一亿二千万", 120_000_000), ("〇", 0), ("零", 0), ("二〇二四", 2024),
    ("12", 12), ("１２", 12), ("壹佰", 100),
])
def test_cn_to_int(text, value):
    assert cn_to_int(text) == value


@pytest.mark.parametrize("text", ["", "之一", "第十条", "abc", "十二条"])
def test_cn_to_int_rejects_non_numerals(text):
    assert cn_to_int(text) is None


@pytest.mark.parametrize(("value", "text"), [
    (1, "一"), (10, "十"), (12, "十二"), (20, "二十"), (105, "一百零五"), (110, "一百一十"),
    (1005, "一千零五"), (1260, "一千二百六十"), (10_005, "一万零五"),
])
def test_int_to_cn(value, text):
    assert int_to_cn(value) == text


def test_round_trip_over_article_numbers():
    assert all(cn_to_int(int_to_cn(n)) == n for n in range(0, 2000))


def test_int_to_cn_refuses_negative():
    with pytest.raises(ValueError, match="-1"):
        int_to_cn(-1)


def test_normalize_digits():
    assert normalize_digits("第１２条，３．５万元") == "第12条，3.5万元"

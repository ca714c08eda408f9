import pytest

from agentic_rag.text.names import opens_with_chinese_name


@pytest.mark.parametrize("text, name", [
    ("韦青近日在首映礼上说", True),     # surname + a given name split into single characters
    ("邹岚溪表示", True),              # surname + a given name the segmenter keeps as one unknown word
    ("高速公路收费站", False),          # a dictionary word that starts with a surname character
    ("周末照常开放", False),
    ("和队员们一起", False),            # a function word, not a surname
    ("张的作品", False),                # a particle opens no given name
])
def test_a_chinese_personal_name_is_told_from_a_word(text: str, name: bool) -> None:
    assert opens_with_chinese_name(text) is name

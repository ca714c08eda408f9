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


@pytest.mark.parametrize("question, names", [
    # a document's title joining two matters with "and" is one name ...
    ("Is the Noise and Nuisance Policy older than the Parking Policy?", ["Noise and Nuisance Policy", "Parking Policy"]),
    ("What does Ardlow's Travel and Subsistence Handbook say about taxis?",
     ["Ardlow's Travel and Subsistence Handbook"]),
    # ... while "and" still separates two things
    ("Did Anna Vale and Tom Reid both study in Leeds?", ["Anna Vale", "Tom Reid", "Leeds"]),
    ("Who produced Blue Harbour and Night Train?", ["Blue Harbour", "Night Train"]),
])
def test_a_documents_title_joined_by_and_is_one_name(question: str, names: list[str]) -> None:
    from agentic_rag.text.names import extract_names

    assert extract_names(question) == names

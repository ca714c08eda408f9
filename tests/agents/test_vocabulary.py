"""One vocabulary (packaged + the user's tables) reaches the Router, the Retriever and the Reasoner."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from agentic_rag.agents.reasoner import Reasoner
from agentic_rag.agents.vocabulary import Vocabulary
from agentic_rag.config import RetrievalSettings, Settings
from agentic_rag.engine import Engine
from agentic_rag.errors import ConfigError
from agentic_rag.types import Chunk, Evidence, RouteDecision


@pytest.fixture
def user_synonyms(tmp_path):
    path = tmp_path / "my_synonyms.json"
    path.write_text(json.dumps({"groups": [["commuter pass", "transit card"], ["乘车卡", "交通卡"]]}),
                    encoding="utf-8")
    return path


def transit_chunk() -> Chunk:
    text = "Staff who travel to client sites receive a transit card, topped up each month by the office."
    return Chunk(chunk_id="perks:a3:0", doc_id="perks", ord=0, text=text, clause="3", clause_no="3",
                 title="Staff Perks", publish_date=dt.date(2024, 1, 1), language="en", span=(0, len(text)))


def ask(reasoner: Reasoner, question: str):
    ev = [Evidence(chunk=transit_chunk(), score=1.0, rank=1, legs=["bm25"])]
    return reasoner.reason(question, RouteDecision(question=question, query=question, language="en"), ev)


def test_the_reasoner_reads_a_users_synonyms_instead_of_abstaining(user_synonyms):
    question = "Who tops up the commuter pass?"
    assert ask(Reasoner(), question).status == "abstained"
    answer = ask(Reasoner(vocabulary=Vocabulary.load(user_synonyms)), question)
    assert answer.status == "answered"
    assert answer.text.startswith("Staff who travel to client sites receive a transit card")


def test_the_engine_hands_one_vocabulary_to_all_three_agents(tmp_path, user_synonyms):
    settings = Settings(index=tmp_path / "index", retrieval=RetrievalSettings(synonyms=user_synonyms))
    with Engine(settings) as engine:
        vocab = engine.vocabulary
        assert vocab.synonyms("Commuter Pass") == {"transit card"}
        assert vocab.synonyms("公积金") == {"住房公积金"}  # the packaged groups stay
        assert engine.reasoner.vocabulary is vocab
        assert ["commuter pass", "transit card"] in engine.retriever.synonyms
        assert engine.router.colloquial == dict(vocab.colloquial)


@pytest.mark.parametrize(("content", "message"), [
    ('{"groups": [["only one"]]}', "synonyms must be"),
    ("{not json", "invalid JSON"),
    (None, "file not found"),
])
def test_a_bad_synonyms_file_is_a_config_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "team_terms.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=f"team_terms.json: {message}"):
        Vocabulary.load(path)


def test_a_derived_english_word_is_covered_by_its_stem_family():
    from agentic_rag.agents.vocabulary import TextCover
    from agentic_rag.text.terms import content_terms

    cover = TextCover("The governor chose a new harbour commission after the vote.")
    words = {t.text: cover.covers(t) for t in content_terms("Which government appointed the commissioners?")}
    assert words == {"government": True, "appointed": False, "commissioners": True}
    assert not TextCover("A short note.").covers(content_terms("notebook")[0])  # a stem under six letters


def test_an_abbreviation_is_covered_by_its_characters_in_order_a_few_apart():
    from agentic_rag.agents.vocabulary import TextCover, shared_cover

    text = "参加基本医疗保险的职工按规定享受待遇。"
    assert TextCover(text).covers("医保")  # 医疗保险: 医, then 保 two characters on
    assert not TextCover("保险医疗费用").covers("医保")  # both characters, not in order
    assert not TextCover("医疗机构应当按照规定公开收费和质量保证信息").covers("医保")  # too far apart
    # one shared cover per text, deciding as a fresh one does
    assert shared_cover(text) is shared_cover(text) and shared_cover(text).covers("医保")


def test_a_cover_keeps_its_answers_per_term_and_tells_terms_with_other_synonyms_apart():
    from agentic_rag.agents.vocabulary import TextCover
    from agentic_rag.text.terms import Term

    cover = TextCover("员工每年享有疗养假五天。")
    plain = Term("休养", "休养")
    assert not cover.covers(plain) and not cover.covers(plain)  # asked again: the same answer
    # the same word with the user's synonyms is another term, answered on its own
    assert cover.covers(Term("休养", "休养", alts=("疗养",)))
    assert not cover.covers(plain)

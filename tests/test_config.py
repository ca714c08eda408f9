"""Settings: file < env < explicit keywords; bad values name the key; secrets stay secret."""

from __future__ import annotations

import pytest

from agentic_rag.config import Settings
from agentic_rag.errors import ConfigError


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for key in list(__import__("os").environ):
        if key.startswith("ARAG_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def test_defaults_follow_design():
    s = Settings.load()
    w = s.retrieval.weights
    assert (w.vector, w.bm25, w.graph, w.position) == (0.4, 0.3, 0.2, 0.1)
    assert s.llm.provider == "none"
    assert s.runtime.max_steps == 6 and s.retrieval.max_rounds == 3


def test_file_then_env_then_keywords(tmp_path, monkeypatch):
    (tmp_path / "arag.toml").write_text('[retrieval]\nk = 5\nfusion = "rrf"\n', encoding="utf-8")
    assert Settings.load().retrieval.k == 5
    monkeypatch.setenv("ARAG_RETRIEVAL__K", "7")
    s = Settings.load()
    assert s.retrieval.k == 7
    assert s.retrieval.fusion == "rrf", "an env var for one key must not reset the file's other keys"
    assert Settings.load(retrieval={"k": 3}).retrieval.k == 3


def test_invalid_value_names_the_key(tmp_path):
    (tmp_path / "arag.toml").write_text("[retrieval]\nk = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="retrieval.k"):
        Settings.load()


def test_malformed_toml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[retrieval\nk=", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid TOML"):
        Settings.load(bad)
    with pytest.raises(ConfigError, match="not found"):
        Settings.load(tmp_path / "nope.toml")


def test_unknown_key_is_refused(tmp_path):
    (tmp_path / "arag.toml").write_text("[retrieval]\ntop_k = 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="top_k"):
        Settings.load()


def test_api_key_only_from_env_and_never_shown(tmp_path, monkeypatch):
    (tmp_path / "arag.toml").write_text('[llm]\napi_key = "sk-file"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="ARAG_LLM_API_KEY"):
        Settings.load()
    (tmp_path / "arag.toml").unlink()
    monkeypatch.setenv("ARAG_LLM_API_KEY", "sk-secret-123")
    s = Settings.load()
    assert s.llm.api_key.get_secret_value() == "sk-secret-123"
    assert "sk-secret-123" not in repr(s) and "sk-secret-123" not in s.model_dump_json()


# -- issue 11 (8): environment variables, weights and data files ------------------------------

def test_a_misspelled_env_var_is_refused_with_the_name_it_meant(monkeypatch):
    monkeypatch.setenv("ARAG_RETRIVAL__K", "3")
    with pytest.raises(ConfigError, match=r"ARAG_RETRIVAL__K.*did you mean ARAG_RETRIEVAL__K\?"):
        Settings.load()


def test_an_unknown_env_var_is_refused_naming_it(monkeypatch):
    monkeypatch.setenv("ARAG_COLOUR", "blue")
    with pytest.raises(ConfigError, match="unknown environment variable ARAG_COLOUR"):
        Settings.load()


def test_the_env_vars_that_are_not_settings_still_pass(monkeypatch, tmp_path):
    for name in ("ARAG_LLM_API_KEY", "ARAG_EMBEDDER_API_KEY", "ARAG_BENCH_DIR", "ARAG_EVAL_CACHE"):
        monkeypatch.setenv(name, str(tmp_path))
    monkeypatch.setenv("ARAG_INDEX", str(tmp_path / "idx"))
    monkeypatch.setenv("ARAG_REASONER__AUTHORITY_WEIGHTS__NPC", "2.5")
    s = Settings.load()
    assert s.index == tmp_path / "idx" and s.reasoner.authority_weights == {"npc": 2.5}


@pytest.mark.parametrize("name, value", [("ARAG_LLM", "x"), ("ARAG_RETRIEVAL__WEIGHTS", "{bad"),
                                         ("ARAG_REASONER__AUTHORITY_WEIGHTS", "[1, 2]")])
def test_a_section_given_a_non_object_names_the_variable(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=f"{name}=.*JSON object") as err:
        Settings.load()
    assert "\n" not in str(err.value)


def test_a_section_given_as_a_json_object_works(monkeypatch):
    monkeypatch.setenv("ARAG_RETRIEVAL__WEIGHTS", '{"vector": 0, "bm25": 1, "graph": 0, "position": 0}')
    assert Settings.load().retrieval.weights.bm25 == 1


def test_all_zero_fusion_weights_are_refused():
    zero = {"vector": 0, "bm25": 0, "graph": 0, "position": 0}
    with pytest.raises(ConfigError, match="retrieval.weights.*all fusion weights are 0"):
        Settings.load(retrieval={"weights": zero})
    assert Settings.load(retrieval={"weights": {**zero, "bm25": 1}}).retrieval.weights.bm25 == 1


@pytest.mark.parametrize("weights, problem", [({"npc": -1}, "greater than or equal to 0"),
                                              ({"npc": float("inf")}, "finite")])
def test_negative_or_infinite_authority_weights_are_refused(weights, problem):
    with pytest.raises(ConfigError, match=f"reasoner.authority_weights.npc=.*{problem}"):
        Settings.load(reasoner={"authority_weights": weights})


@pytest.mark.parametrize("section, key, content", [
    ("router", "intent_tree", "{not json"),
    ("router", "lexicon", "社保卡\tnonsense-category\n"),
    ("router", "colloquial_rules", '{"rules": {"a": 1}}'),
    ("retrieval", "synonyms", '{"groups": 3}'),
    ("reasoner", "overrides_file", "[1, 2"),
])
def test_a_bad_data_file_names_its_key(tmp_path, section, key, content):
    bad = tmp_path / "bad.data"
    bad.write_text(content, encoding="utf-8")
    settings = Settings.load(**{section: {key: bad}})
    with pytest.raises(ConfigError, match=rf"invalid setting {section}\.{key}=.*bad\.data"):
        settings.check_files()
    missing = Settings.load(**{section: {key: tmp_path / "missing.json"}})
    with pytest.raises(ConfigError, match=rf"{section}\.{key}=.*missing\.json.*not found"):
        missing.check_files()


def test_a_misspelled_file_key_is_refused_with_the_key_it_meant(tmp_path):
    (tmp_path / "arag.toml").write_text("[retreival]\nk = 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown setting retreival: .*did you mean retrieval\?"):
        Settings.load()
    (tmp_path / "arag.toml").write_text("[retrieval.weights]\nvectr = 5\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"retrieval.weights.vectr: .*did you mean vector\?"):
        Settings.load()


def test_store_url_selects_postgres_and_never_shows_its_password(monkeypatch):
    monkeypatch.setenv("ARAG_STORE__URL", "postgresql://arag:s3cret@db:5432/arag")
    settings = Settings.load()
    assert settings.store.url.get_secret_value().endswith("@db:5432/arag")
    assert "s3cret" not in repr(settings)
    monkeypatch.setenv("ARAG_STORE__URL", "mysql://arag:s3cret@db/arag")
    with pytest.raises(ConfigError, match="store.url") as info:
        Settings.load()
    assert "s3cret" not in str(info.value)

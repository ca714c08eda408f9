"""Prometheus metrics of one server process (``GET /metrics``, text exposition format).

Requests and latency per endpoint (the route template, not the raw path), latency per agent
stage taken from each answer's trace (route, each search tool, reason, verify), LLM calls and
tokens, deterministic fallbacks (by what fell back), answers by status (abstentions included),
cache hits and misses, deadline fallbacks. With ``--workers N`` each worker counts its own
requests; a scrape sees the worker that took it.
"""

from __future__ import annotations

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)

from agentic_rag.types import Answer

_LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
#: trace events whose duration is a stage of its own (a search's legs are inside its tool time)
_STAGES = {"route", "tool", "reason", "verify", "write"}


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("arag_requests", "HTTP requests", ["endpoint", "method", "status"],
                                registry=r)
        self.latency = Histogram("arag_request_seconds", "HTTP request latency", ["endpoint"],
                                 buckets=_LATENCY, registry=r)
        self.stage = Histogram("arag_stage_seconds", "agent stage latency", ["stage"],
                               buckets=_LATENCY, registry=r)
        self.llm_calls = Counter("arag_llm_calls", "LLM calls", registry=r)
        self.llm_tokens = Counter("arag_llm_tokens", "LLM tokens", ["kind"], registry=r)
        self.fallbacks = Counter("arag_fallbacks", "deterministic fallbacks", ["what"], registry=r)
        self.answers = Counter("arag_answers", "answers by status", ["status"], registry=r)
        self.cache = Counter("arag_cache", "answer cache lookups", ["result"], registry=r)
        self.deadline = Counter("arag_deadline_fallbacks", "answers replaced at the deadline",
                                registry=r)

    def request(self, endpoint: str, method: str, status: int, seconds: float) -> None:
        self.requests.labels(endpoint, method, str(status)).inc()
        self.latency.labels(endpoint).observe(seconds)

    def answer(self, answer: Answer, *, cached: bool, deadline: bool) -> None:
        self.answers.labels(answer.status).inc()
        if deadline:
            self.deadline.inc()
        if cached:
            return  # its stages and LLM calls were counted when it was computed
        for event in answer.trace:
            if event.kind in _STAGES:
                self.stage.labels(event.tool or event.kind).observe(event.duration_ms / 1000.0)
            elif event.kind == "fallback":
                self.fallbacks.labels(event.tool or "unknown").inc()
        self.llm_calls.inc(answer.usage.llm_calls)
        self.llm_tokens.labels("prompt").inc(answer.usage.prompt_tokens)
        self.llm_tokens.labels("completion").inc(answer.usage.completion_tokens)

    def cache_lookup(self, hit: bool) -> None:
        self.cache.labels("hit" if hit else "miss").inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)

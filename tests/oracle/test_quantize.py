"""Weight quantization (`--quantize int4|int8`, ONNX: com.microsoft.MatMulNBits).

- Bit for bit: each MatMulNBits hfx writes holds the codes, scales and zero points that
  onnxruntime's own quantizer (MatMulNBitsQuantizer, round to nearest) writes for the same linear
  of hfx's float32 export of the same checkpoint — int4 and int8, symmetric and asymmetric,
  blocks that divide the input size and blocks it pads.
- Against transformers: the quantized export's logits equal transformers' on the same
  checkpoint with every quantized weight replaced by its dequantized value (decoded here from
  the MatMulNBits initializers, as the contrib op's spec defines them), within 1e-4; greedy
  generation through examples/generate_onnx.py equals that model's generate.
- Only checkpoint matrices that a linear alone reads are quantized: a tied head (the embedding
  a Gather also reads) stays float."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import numpy_helper

import models
import decoders_encoders_models as W
from conftest import PARITY_ATOL, describe, run_hfx
from genutil import genai_greedy

# K not a multiple of every block (intermediate 200: the down projection pads), an untied head
Q_LLAMA = models.Variant("q_llama", "llama", dict(models.LLAMA, hidden_size=96, intermediate_size=200,
                                                  vocab_size=300, tie_word_embeddings=False), seed=3)
Q_QWEN3 = models.Variant("q_qwen3", "qwen3", dict(models.QWEN3, tie_word_embeddings=True), seed=4)
# an odd vocabulary: the standard form's [K, N] codes pack across rows
Q_LLAMA_ODD = models.Variant("q_llama_odd", "llama", dict(models.LLAMA, hidden_size=96, intermediate_size=200,
                                                          vocab_size=301, tie_word_embeddings=False), seed=5)
VARIANTS = {v.name: v for v in (Q_LLAMA, Q_QWEN3, Q_LLAMA_ODD)}

# (bits, block, symmetric)
SCHEMES = [(4, 32, True), (4, 32, False), (4, 128, True), (4, 64, False), (8, 32, True), (8, 128, False)]


def _id(s):
    return f"int{s[0]}-b{s[1]}-{'sym' if s[2] else 'asym'}"


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("quant_ckpt")
    others = W.Checkpoints(root / "decoders_encoders")
    done = {}

    def get(name):
        if name not in done:
            done[name] = others(name) if name == "gpt2" else models.save_checkpoint(VARIANTS[name], root / name)
        return done[name]
    return get


def _export(checkpoint, out, *flags):
    proc = run_hfx(["export", checkpoint, out, "--format", "onnx", "--dynamic", "--quiet", *flags])
    assert proc.returncode == 0, describe(proc)
    return out


def _nbits_nodes(model):
    """{output name: (node, {input name: array})} for every MatMulNBits."""
    inits = {i.name: i for i in model.graph.initializer}
    out = {}
    for n in model.graph.node:
        if n.op_type == "MatMulNBits":
            out[n.output[0]] = (n, {name: numpy_helper.to_array(inits[name]) for name in n.input[1:] if name})
    return out


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


@pytest.mark.parametrize("name,dtype,scheme", [(n, "fp32", s) for n in ("q_llama", "gpt2") for s in SCHEMES] +
                         [("q_llama", "fp16", s) for s in (SCHEMES[1], SCHEMES[4])],
                         ids=lambda x: _id(x) if isinstance(x, tuple) else str(x))
def test_bytes_equal_onnxruntime_quantizer(ckpt, tmp_path, name, dtype, scheme):
    """fp16: the scales are float16, and the codes use each scale as stored (rounded)."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    bits, block, sym = scheme
    ck = ckpt(name)
    plain = onnx.load(str(_export(ck, tmp_path / "plain", "--dtype", dtype) / "model.onnx"))
    q = MatMulNBitsQuantizer(plain, bits=bits, block_size=block, is_symmetric=sym)
    q.process()
    theirs = _nbits_nodes(q.model.model)
    ours_dir = _export(ck, tmp_path / "q", "--dtype", dtype, "--accuracy-level", "0", "--quantize", f"int{bits}",
                       "--group-size", str(block), "--sym" if sym else "--asym")
    ours = _nbits_nodes(onnx.load(str(ours_dir / "model.onnx")))
    assert ours, "no MatMulNBits written"
    plain_inits = {i.name: numpy_helper.to_array(i) for i in plain.graph.initializer}
    for out, (node, arrays) in ours.items():
        if out not in theirs:
            # a head tied to the embeddings: hfx's float export reads the table through Gemm, which
            # the quantizer leaves; its routine (qbits_block_quant) on the table, as a MatMul's B
            table = node.input[1].rsplit("_Q", 1)[0]
            assert out == "logits" and table in plain_inits, f"hfx quantized {out}, which onnxruntime's quantizer did not"
            from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, DefaultWeightOnlyQuantizer

            ref = DefaultWeightOnlyQuantizer(DefaultWeightOnlyQuantConfig(block_size=block, is_symmetric=sym, bits=bits))
            want = ref.qbits_block_quant(np.ascontiguousarray(plain_inits[table].T))
            for x, y, what in zip(arrays.values(), want, ("codes", "scales", "zero points")):
                assert np.array_equal(x.ravel(), y.ravel()) and x.dtype == y.dtype, f"{out} {what}"
            continue
        their_node, their_arrays = theirs[out]
        assert _attrs(node) == _attrs(their_node), out
        a, b = list(arrays.values()), list(their_arrays.values())
        assert len(a) == len(b), f"{out}: inputs {list(arrays)} vs {list(their_arrays)}"
        for x, y, what in zip(a, b, ("codes", "scales", "zero points")):
            assert x.dtype == y.dtype and x.shape == y.shape, f"{out} {what}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
            assert np.array_equal(x, y), f"{out} {what}: {np.sum(x != y)} of {x.size} differ"


def _dequantize(node, arrays):
    """The float [N, K] weight a MatMulNBits computes with (the contrib op's definition): code −
    zero point (2^(bits−1) when absent) times the block's scale."""
    at = _attrs(node)
    n, k, bits, block = at["N"], at["K"], at["bits"], at["block_size"]
    codes, scales = list(arrays.values())[:2]
    blocks = (k + block - 1) // block
    raw = codes.reshape(n, blocks, -1)
    if bits == 4:
        q = np.stack([raw & 0xF, raw >> 4], axis=-1).reshape(n, blocks, block)
    else:
        q = raw.reshape(n, blocks, block)
    if len(arrays) > 2:
        z = list(arrays.values())[2].reshape(n, -1)
        if bits == 4:
            z = np.stack([z & 0xF, z >> 4], axis=-1).reshape(n, -1)
        zp = z[:, :blocks].astype(np.float32)
    else:
        zp = np.full((n, blocks), 2 ** (bits - 1), np.float32)
    w = (q.astype(np.float32) - zp[:, :, None]) * scales.reshape(n, blocks)[:, :, None].astype(np.float32)
    return w.reshape(n, blocks * block)[:, :k]


def _is_tied_table(model, name):
    """Whether checkpoint tensor `name` is an embedding table a tied head shares: its lookup and
    the head's product can each read their own stored form of it."""
    emb = model.get_input_embeddings().weight
    tied = bool(getattr(model.config, "tie_word_embeddings", False))
    return tied and model.state_dict()[name].data_ptr() == emb.data_ptr()


class _Replaced:
    """Dequantized weights for a transformers model, by checkpoint tensor and reader: a tied
    table's lookup and head take theirs separately (hfx stores one copy per distinct
    quantization; a quantized lookup with no head of its own quantizes both)."""

    def __init__(self, model):
        self.model, self.state, self.tables, self.heads, self.count = model, model.state_dict(), {}, {}, 0

    def put(self, name, w, lookup):
        assert name in self.state, f"no checkpoint tensor {name}"
        w = w.reshape(self.state[name].shape)
        if not _is_tied_table(self.model, name):
            self.state[name] = w
        else:
            (self.tables if lookup else self.heads)[name] = w
        self.count += 1

    def load(self):
        self.model.load_state_dict(self.state)
        for w in self.heads.values():  # a head of its own: untied first
            self.model.get_output_embeddings().weight = torch.nn.Parameter(w, requires_grad=False)
        for w in self.tables.values():  # the table, and the head while it still shares it
            self.model.get_input_embeddings().weight.data.copy_(w)
        return self.model, self.count


def _gather_nodes(model):
    """[(node, [codes, scales, zero points] arrays, the codes' initializer)] for every
    GatherBlockQuantized; codes that a Reshape of an initializer computes (a tied head's,
    shared) come reshaped."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant":
            inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    reshaped = {n.output[0]: (inits[n.input[0]].reshape(inits[n.input[1]]), n.input[0])
                for n in model.graph.node if n.op_type == "Reshape" and n.input[0] in inits and n.input[1] in inits}
    return [(n, [inits[x] if x in inits else reshaped[x][0] for x in n.input if x in inits or x in reshaped],
             reshaped[n.input[0]][1] if n.input[0] in reshaped else n.input[0])
            for n in model.graph.node if n.op_type == "GatherBlockQuantized"]


def _dequantize_table(node, arrays):
    """The float [rows, cols] table a GatherBlockQuantized looks rows up in (the contrib op's
    definition): (code − zero point, 0 for signed codes) · scale, blocks along the row; uint8
    data holds `bits`-bit codes two to a byte, zero point 2^(bits−1) when absent."""
    at = _attrs(node)
    block = at["block_size"]
    codes = arrays[0]
    if codes.dtype == np.uint8 and at.get("bits", 4) == 4:
        codes = np.stack([codes & 0xF, codes >> 4], axis=-1).reshape(codes.shape[0], -1)
        if len(arrays) == 2:
            arrays = arrays + [np.full(arrays[1].shape, 8, np.uint8)]
        else:  # packed per row, as MatMulNBits' zero points
            z = arrays[2]
            z = np.stack([z & 0xF, z >> 4], axis=-1).reshape(z.shape[0], -1)[:, :arrays[1].shape[1]]
            arrays = arrays[:2] + [z]
    codes = codes.astype(np.float32)
    scale = np.repeat(arrays[1].astype(np.float32), block, axis=1)[:, :codes.shape[1]]
    zp = np.repeat(arrays[2].astype(np.float32), block, axis=1)[:, :codes.shape[1]] if len(arrays) > 2 else 0
    return torch.from_numpy((codes - zp) * scale)


def _dequantized_model(checkpoint, graph):
    """transformers' model of the checkpoint with each quantized weight (named by its initializer:
    the checkpoint tensor + "_Q<bits>") replaced by its dequantized value, for the readers that
    read it so: (model, how many readers)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(checkpoint), attn_implementation="eager").eval()
    r = _Replaced(model)
    onnx_model = onnx.load(str(graph))
    for node, arrays in _nbits_nodes(onnx_model).values():
        r.put(node.input[1].rsplit("_Q", 1)[0].split("/")[0], torch.from_numpy(_dequantize(node, arrays)), False)
    for node, arrays, codes in _gather_nodes(onnx_model):
        r.put(codes.rsplit("_Q", 1)[0].split("/")[0], _dequantize_table(node, arrays), True)
    return r.load()


def _greedy(model, row, n):
    """transformers' greedy tokens after `row` (batch 1), up to n or its end-of-sequence token."""
    with torch.no_grad():
        out = model.generate(torch.tensor([row]), max_new_tokens=n, do_sample=False, pad_token_id=0)
    return out[0, len(row):].tolist()


def _assert_logits(run, model, vocab):
    """run(feed) → logits within 1e-4 of transformers' `model` on the same inputs, at the
    positions the mask keeps: batch 1, and batch 3 left-padded."""
    for case in (models.Case(1, 7), models.Case(3, 9, (0, 4, 2))):
        feed = models.make_inputs(case, vocab)
        with torch.no_grad():
            want = model(**{k: torch.from_numpy(v) for k, v in feed.items()}, use_cache=False).logits.numpy()
        diff = np.abs(run(feed) - want)[feed["attention_mask"].astype(bool)].max()
        assert diff <= PARITY_ATOL, f"{case.id}: max abs diff {diff:.2e}"


@pytest.mark.parametrize("scheme", [SCHEMES[0], SCHEMES[3], SCHEMES[5]], ids=_id)
@pytest.mark.parametrize("name", ["q_llama", "q_qwen3"])
def test_logits_equal_transformers_on_dequantized_weights(ckpt, tmp_path, name, scheme):
    bits, block, sym = scheme
    ck = ckpt(name)
    out = _export(ck, tmp_path / "q", "--accuracy-level", "0", "--quantize", f"int{bits}", "--group-size", str(block),
                  "--sym" if sym else "--asym")
    model, replaced = _dequantized_model(ck, out / "model.onnx")
    cfg = json.loads((ck / "config.json").read_text())
    layers = cfg["num_hidden_layers"]
    # every projection of every layer, and the head, tied to the embeddings or not
    assert replaced == 7 * layers + 1
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    _assert_logits(lambda feed: sess.run(["logits"], feed)[0], model, cfg["vocab_size"])


# (dtype, block, symmetric) for quantized embedding tables: q_llama's rows (96) hold one block of 64
# and a short one of 32; float16's arithmetic rounds after every operation
TABLE_SCHEMES = [("fp32", 32, True), ("fp32", 32, False), ("fp32", 64, True), ("fp32", 64, False),
                 ("fp16", 64, False), ("fp16", 32, True)]


# q_qwen3: tied, its head float (else the table is the head's codes: test_tied_table_shares_the_heads_codes)
@pytest.mark.parametrize("name,scheme", [("q_llama", s) for s in TABLE_SCHEMES] + [("q_qwen3", TABLE_SCHEMES[1])],
                         ids=lambda x: "-".join(map(str, x)) if isinstance(x, tuple) else x)
def test_table_bytes_equal_onnxruntime_quantizer(ckpt, tmp_path, name, scheme):
    """--quantize-embeddings int4: the GatherBlockQuantized hfx writes holds the codes, scales and
    zero points onnxruntime's quantizer writes for the embedding Gather of hfx's unquantized
    export (MatMulNBitsQuantizer with op_types_to_quantize MatMul and Gather)."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    dtype, block, sym = scheme
    ck = ckpt(name)
    plain = onnx.load(str(_export(ck, tmp_path / "plain", "--dtype", dtype) / "model.onnx"))
    q = MatMulNBitsQuantizer(plain, bits=4, block_size=block, is_symmetric=sym, op_types_to_quantize=("MatMul", "Gather"))
    q.process()
    theirs = _gather_nodes(q.model.model)
    out = _export(ck, tmp_path / "q", "--dtype", dtype, "--quantize", "int4", "--group-size", str(block),
                  "--sym" if sym else "--asym", "--quantize-embeddings", "int4",
                  *(["--quantize-lm-head", "none"] if name == "q_qwen3" else []))
    ours = _gather_nodes(onnx.load(str(out / "model.onnx")))
    assert len(ours) == len(theirs) == 1
    (node, a, _), (their_node, b, _) = ours[0], theirs[0]
    assert _attrs(node) == _attrs(their_node) and node.input[1] == their_node.input[1]
    assert len(a) == len(b) == (2 if sym else 3)
    for x, y, what in zip(a, b, ("codes", "scales", "zero points")):
        assert x.dtype == y.dtype and x.shape == y.shape, f"{what}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
        assert np.array_equal(x, y), f"{what}: {np.sum(x != y)} of {x.size} differ"
    md = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]["quantization"]
    assert md["embeddings"] == {"bits": 4, "group_size": block, "symmetric": sym}


@pytest.mark.parametrize("sym", ["--sym", "--asym"])
def test_tied_table_shares_the_heads_codes(ckpt, tmp_path, sym):
    """A tied head and its table quantized alike (int4, symmetric, blocks that divide the row)
    are stored once, as onnxruntime-genai's builder stores them: GatherBlockQuantized reads the
    head's MatMulNBits codes (reshaped) and scales. Logits within 1e-4 of transformers with that
    dequantized table for both the lookup and the head."""
    ck = ckpt("q_qwen3")
    out = _export(ck, tmp_path / "q", "--accuracy-level", "0", "--quantize", "int4", "--quantize-embeddings", "int4", sym)
    m = onnx.load(str(out / "model.onnx"))
    (gather, _, _), = _gather_nodes(m)
    head = [n for n in m.graph.node if n.op_type == "MatMulNBits" and n.output[0] == "logits"]
    producer = {o: n for n in m.graph.node for o in n.output}[gather.input[0]]
    assert len(head) == 1 and producer.op_type == "Reshape" and producer.input[0] == head[0].input[1]
    assert gather.input[2:] == head[0].input[2:] and _attrs(gather)["bits"] == 4
    cfg = json.loads((ck / "config.json").read_text())
    assert not any(list(i.dims) == [cfg["vocab_size"], cfg["hidden_size"]] for i in m.graph.initializer), \
        "the float table is stored too"
    model, replaced = _dequantized_model(ck, out / "model.onnx")
    assert replaced == 7 * cfg["num_hidden_layers"] + 2
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    _assert_logits(lambda feed: sess.run(["logits"], feed)[0], model, cfg["vocab_size"])


@pytest.mark.parametrize("name", ["q_llama", "q_qwen3"])
def test_quantized_tables_logits_equal_transformers(ckpt, tmp_path, name):
    """int4 tables (GatherBlockQuantized) with int4 linears, asymmetric: logits within 1e-4 of
    transformers on the dequantized weights (q_qwen3: the tied head and the lookup share one
    stored table)."""
    ck = ckpt(name)
    out = _export(ck, tmp_path / "q", "--accuracy-level", "0", "--quantize", "int4", "--group-size", "64", "--asym",
                  "--quantize-embeddings", "int4")
    model, replaced = _dequantized_model(ck, out / "model.onnx")
    cfg = json.loads((ck / "config.json").read_text())
    assert replaced == 7 * cfg["num_hidden_layers"] + 2
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    _assert_logits(lambda feed: sess.run(["logits"], feed)[0], model, cfg["vocab_size"])


def _dq_nodes(model):
    """{MatMul output: (DequantizeLinear node, [codes, scales, zero points] arrays)} for every
    MatMul whose weight a DequantizeLinear of initializers computes (the standard form)."""
    inits = {i.name: i for i in model.graph.initializer}
    dq = {n.output[0]: n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits}
    return {n.output[0]: (dq[n.input[1]], [numpy_helper.to_array(inits[x]) for x in dq[n.input[1]].input if x])
            for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in dq}


def _dequantize_columns(node, arrays):
    """The float [N, K] weight DequantizeLinear (axis 0, block_size) computes from codes [K, N]."""
    block = _attrs(node)["block_size"]
    codes = arrays[0].astype(np.float32)
    scale = np.repeat(arrays[1].astype(np.float32), block, axis=0)[:codes.shape[0]]
    zp = np.repeat(arrays[2].astype(np.float32), block, axis=0)[:codes.shape[0]] if len(arrays) > 2 else 0
    return torch.from_numpy(((codes - zp) * scale).T.copy())


# (model, dtype, block, symmetric): q_llama's down projection (K = 200) ends in a short block
STANDARD_SCHEMES = [("q_llama", "fp32", 32, True), ("q_llama", "fp32", 32, False), ("q_llama", "fp32", 64, False),
                    ("q_llama", "fp16", 32, True), ("q_llama_odd", "fp32", 32, False), ("q_llama_odd", "fp16", 64, True)]


@pytest.mark.parametrize("scheme", STANDARD_SCHEMES, ids=lambda s: "-".join(map(str, s)))
def test_standard_ops_bytes_equal_onnxruntime_quantizer(ckpt, tmp_path, scheme):
    """--onnx-ops standard: each quantized linear is DequantizeLinear (int4 codes [K, N], blocks
    down K) + MatMul, with the bytes onnxruntime's quantizer writes in its QDQ format for the
    same MatMul of hfx's unquantized export."""
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    from onnxruntime.quantization.quant_utils import QuantFormat

    name, dtype, block, sym = scheme
    ck = ckpt(name)
    plain = onnx.load(str(_export(ck, tmp_path / "plain", "--dtype", dtype, "--opset", "21") / "model.onnx"))
    q = MatMulNBitsQuantizer(plain, bits=4, block_size=block, is_symmetric=sym, quant_format=QuantFormat.QDQ)
    q.process()
    theirs = _dq_nodes(q.model.model)
    out = _export(ck, tmp_path / "q", "--dtype", dtype, "--opset", "21", "--quantize", "int4", "--group-size", str(block),
                  "--sym" if sym else "--asym", "--onnx-ops", "standard")
    ours = _dq_nodes(onnx.load(str(out / "model.onnx")))
    assert len(ours) == len(theirs) == 15 and set(ours) == set(theirs)
    for key, (node, a) in ours.items():
        their_node, b = theirs[key]
        assert _attrs(node) == _attrs(their_node), key
        assert len(a) == len(b) == (2 if sym else 3), key
        for x, y, what in zip(a, b, ("codes", "scales", "zero points")):
            assert x.dtype == y.dtype and x.shape == y.shape, f"{key} {what}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
            assert np.array_equal(x, y), f"{key} {what}: {np.sum(x != y)} of {x.size} differ"


@pytest.mark.parametrize("name,bits", [("q_llama", 4), ("q_qwen3", 4), ("q_llama", 8)])
def test_standard_ops_logits_equal_transformers(ckpt, tmp_path, name, bits):
    """The standard form in ONNX Runtime with its graph optimizations off (no fusion into contrib
    ops: the standard operators as any runtime runs them): logits within 1e-4 of transformers on
    the dequantized weights, a tied head (q_qwen3) included; int8 too."""
    ck = ckpt(name)
    out = _export(ck, tmp_path / "q", "--opset", "21", "--quantize", f"int{bits}", "--asym", "--onnx-ops", "standard")
    m = onnx.load(str(out / "model.onnx"))
    assert not any(n.domain for n in m.graph.node), "contrib ops in the standard form"
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(ck), attn_implementation="eager").eval()
    r = _Replaced(model)
    for node, arrays in _dq_nodes(m).values():
        r.put(node.input[0].rsplit("_DQ_Q", 1)[0], _dequantize_columns(node, arrays), False)
    model, replaced = r.load()
    cfg = json.loads((ck / "config.json").read_text())
    assert replaced == 7 * cfg["num_hidden_layers"] + 1
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(str(out / "model.onnx"), so, providers=["CPUExecutionProvider"])
    _assert_logits(lambda feed: sess.run(["logits"], feed)[0], model, cfg["vocab_size"])


def _integer_nodes(model):
    """{linear output: {"codes", "zero point", "scale"} arrays} for every MatMulInteger whose
    weight is an initializer (quantize_dynamic's form: MatMulInteger → Cast → Mul by the product
    of the activation's and the weight's scales), and {"table": ...} for a Gather of a quantized
    table that a DequantizeLinear follows."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    found = {}
    for n in model.graph.node:
        if n.op_type == "Mul" and n.input[0] in producer and producer[n.input[0]].op_type == "Cast":
            mi = producer.get(producer[n.input[0]].input[0])
            if mi is not None and mi.op_type == "MatMulInteger" and mi.input[1] in inits:
                found[n.output[0]] = {"codes": inits[mi.input[1]], "zero point": inits[mi.input[3]],
                                      "scale": inits[producer[n.input[1]].input[1]]}
        if n.op_type == "DequantizeLinear" and n.input[0] in producer and producer[n.input[0]].op_type == "Gather":
            g = producer[n.input[0]]
            if g.input[0] in inits:
                found["table"] = {"codes": inits[g.input[0]], "scale": inits[n.input[1]], "zero point": inits[n.input[2]]}
    return found


# (per_channel, reduce_range, weight_type): hfx's --group-size 0, --reduce-range, --asym (uint8 weights)
DYNAMIC_CASES = [(False, False, "QInt8"), (True, False, "QInt8"), (False, True, "QInt8"), (False, False, "QUInt8"),
                 (True, True, "QUInt8")]


def _dynamic_flags(per_channel, reduce_range, weight_type):
    return (["--quantize", "int8-dynamic"] + (["--group-size", "0"] if per_channel else []) +
            (["--reduce-range"] if reduce_range else []) + (["--asym"] if weight_type == "QUInt8" else []))


@pytest.mark.parametrize("case", DYNAMIC_CASES, ids=lambda c: f"{'channel' if c[0] else 'tensor'}-"
                         f"{'reduced' if c[1] else 'full'}-{c[2]}")
def test_dynamic_bytes_and_logits_equal_quantize_dynamic(ckpt, tmp_path, case):
    """--quantize int8-dynamic: every linear's int8 weights (codes, zero point, scale) and the
    embedding table's uint8 ones equal what onnxruntime's quantize_dynamic writes for hfx's
    float32 export, and ONNX Runtime's logits of the two models agree within 1e-4."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    per_channel, reduce_range, weight_type = case
    ck = ckpt("q_llama")
    plain = _export(ck, tmp_path / "plain")
    quantize_dynamic(str(plain / "model.onnx"), str(tmp_path / "ref.onnx"), per_channel=per_channel,
                     reduce_range=reduce_range, weight_type=getattr(QuantType, weight_type))
    out = _export(ck, tmp_path / "q", *_dynamic_flags(*case))
    ours, theirs = (_integer_nodes(onnx.load(str(p))) for p in (out / "model.onnx", tmp_path / "ref.onnx"))
    assert len(ours) == len(theirs) == 16 and set(ours) == set(theirs), (sorted(ours), sorted(theirs))
    for key, parts in ours.items():
        for what, x in parts.items():
            y = theirs[key][what]
            assert x.dtype == y.dtype and x.shape == y.shape, f"{key} {what}: {x.dtype}{x.shape} vs {y.dtype}{y.shape}"
            assert np.array_equal(x, y), f"{key} {what}: {np.sum(x != y)} of {x.size} differ"
    cfg = json.loads((ck / "config.json").read_text())
    sess = [ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for p in (out / "model.onnx",
                                                                                      tmp_path / "ref.onnx")]
    for c in (models.Case(1, 7), models.Case(3, 9, (0, 4, 2))):
        feed = models.make_inputs(c, cfg["vocab_size"])
        got, want = (s.run(["logits"], feed)[0] for s in sess)
        diff = np.abs(got - want)[feed["attention_mask"].astype(bool)].max()
        assert diff <= PARITY_ATOL, f"{c.id}: max abs diff {diff:.2e}"


def test_dynamic_generation_equals_quantize_dynamic(ckpt, tmp_path):
    """The int8-dynamic generation export (prefill + decode) through examples/generate_onnx.py gives
    the greedy tokens of hfx's float32 generation export quantized by quantize_dynamic, batch 1 and
    3 left-padded (activations are quantized at run time, so transformers' float model is not the
    reference: onnxruntime's own quantizer is)."""
    import shutil

    from genutil import run_loop
    from onnxruntime.quantization import quantize_dynamic

    ck = ckpt("q_llama")
    plain = _export(ck, tmp_path / "plain", "--for-generation")
    ref = tmp_path / "ref"
    shutil.copytree(plain, ref)
    for f in ("prefill.onnx", "decode.onnx"):
        quantize_dynamic(str(plain / f), str(ref / f))
    out = _export(ck, tmp_path / "q", "--for-generation", "--quantize", "int8-dynamic")
    vocab = json.loads((ck / "config.json").read_text())["vocab_size"]
    rng = np.random.default_rng(9)
    for lengths in ((6,), (9, 4, 1)):
        rows = [rng.integers(3, vocab, size=n).tolist() for n in lengths]
        got, want = run_loop(out, rows, 16), run_loop(ref, rows, 16)
        assert got.proc.returncode == 0 and want.proc.returncode == 0, describe(got.proc) + describe(want.proc)
        assert got.tokens == want.tokens and len(got.tokens) == len(rows), f"{lengths}: {got.tokens} vs {want.tokens}"


def test_generation_equals_transformers_on_dequantized_weights(ckpt, tmp_path):
    """int4 prefill + decode through examples/generate_onnx.py: transformers' greedy tokens on
    the dequantized weights, batch 1 and batch 3 left-padded."""
    from genutil import run_loop

    ck = ckpt("q_llama")
    out = _export(ck, tmp_path / "q", "--for-generation", "--quantize", "int4", "--accuracy-level", "0")
    model, _ = _dequantized_model(ck, out / "prefill.onnx")  # decode.onnx's are the same weights, alike
    vocab = json.loads((ck / "config.json").read_text())["vocab_size"]
    rng = np.random.default_rng(5)
    for lengths in ((6,), (9, 4, 1)):
        rows = [rng.integers(3, vocab, size=n).tolist() for n in lengths]
        res = run_loop(out, rows, 24)
        assert res.proc.returncode == 0, describe(res.proc)
        assert len(res.tokens) == len(rows)
        for row, got in zip(rows, res.tokens):
            want = _greedy(model, row, 24)  # up to its end-of-sequence token; the loop pads with it after that
            assert got[:len(want)] == want and set(got[len(want):]) <= {2}, f"prompt {row}: {got} vs {want}"


def test_tied_head_quantized_table_float(ckpt, tmp_path):
    """A head tied to the embeddings is quantized for its product while the embedding lookup
    reads the float table; MatMulNBits takes accuracy_level 4 by default (onnxruntime-genai's
    CPU choice)."""
    out = _export(ckpt("q_qwen3"), tmp_path / "q", "--quantize", "int8")
    m = onnx.load(str(out / "model.onnx"))
    assert {_attrs(n).get("accuracy_level") for n in m.graph.node if n.op_type == "MatMulNBits"} == {4}
    md = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]["quantization"]
    assert md == {"bits": 8, "group_size": 32, "symmetric": True, "linears": 15, "embeddings": None,
                  "lm_head": {"bits": 8, "group_size": 32, "symmetric": True}}
    head = [n for n in m.graph.node if n.op_type == "MatMulNBits" and n.input[1].startswith("model.embed_tokens.weight")]
    assert len(head) == 1 and head[0].output[0] == "logits"
    assert any(n.op_type == "Gather" and n.input[0] == "model.embed_tokens.weight" for n in m.graph.node)


@pytest.mark.parametrize("flags,message", [
    (["--quantize", "int3"], "--quantize must be int4, int8, int8-dynamic, gguf or stored"),
    (["--quantize", "int4", "--group-size", "24"], "power of two"),
    (["--group-size", "64"], "set 'quantize'"),
    (["--quantize-lm-head", "none"], "set 'quantize'"),
    (["--quantize", "int4", "--quantize-embeddings", "int5"], "--quantize-embeddings must be int4, int8 or none"),
    (["--quantize", "int4", "--quantize-embeddings", "int8"], "4 bits (onnxruntime's GatherBlockQuantized"),
    (["--quantize", "int4", "--onnx-ops", "standard"], "opset 21"),
    (["--quantize", "int4", "--onnx-ops", "standard", "--opset", "21", "--quantize-embeddings", "int4"],
     "no standard form"),
    (["--quantize", "int4", "--onnx-ops", "fast"], "--onnx-ops must be contrib or standard"),
    (["--quantize", "int4", "--reduce-range"], "set 'quantize' to \"int8-dynamic\""),
    (["--quantize", "int8-dynamic", "--group-size", "32"], "a scale per tensor or per row"),
    (["--quantize", "int8-dynamic", "--dtype", "fp16"], "dynamic int8 quantization takes a float32"),
])
def test_bad_quantization_is_refused(ckpt, tmp_path, flags, message):
    proc = run_hfx(["export", ckpt("q_llama"), tmp_path / "out", "--format", "onnx", "--quiet", *flags])
    assert proc.returncode == 2, describe(proc)
    assert message in proc.stderr
    assert not (tmp_path / "out").exists()


# (every format writes quantized weights now; torch.export's int4 refusal: test_dynamo_quant.py)


def test_openvino_refuses_dynamic_int8(ckpt, tmp_path):
    proc = run_hfx(["export", ckpt("q_llama"), tmp_path / "out", "--format", "openvino", "--quiet", "--quantize",
                    "int8-dynamic"])
    assert proc.returncode == 2 and "no dynamic int8 form" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("scheme,tables", [(SCHEMES[0], False), (SCHEMES[1], False), (SCHEMES[1], True)],
                         ids=lambda x: _id(x) if isinstance(x, tuple) else ("tables" if x else "float-table"))
def test_onnxruntime_genai_runs_an_int4_export(ckpt, tmp_path, scheme, tables):
    """onnxruntime-genai on the int4 multi-token export (genai_config.json + decode.onnx), its
    embedding table quantized too or not: the dequantized model's greedy tokens."""
    import onnxruntime_genai as og

    bits, block, sym = scheme
    ck = ckpt("q_llama")
    out = _export(ck, tmp_path / "q", "--for-generation", "--multi-token-decode", "--accuracy-level", "0",
                  "--quantize", f"int{bits}", "--group-size", str(block), "--sym" if sym else "--asym",
                  *(["--quantize-embeddings", "int4"] if tables else []))
    model, _ = _dequantized_model(ck, out / "decode.onnx")
    genai = og.Model(str(out))
    eos = model.generation_config.eos_token_id
    for prompt in ([5, 6, 7, 8, 9, 10], [11, 12, 13]):
        got = genai_greedy(genai, prompt, 24)
        want = _greedy(model, prompt, 24)
        if want and want[-1] == eos:  # genai ends the sequence before the EOS it stopped at
            want = want[:-1]
        assert got == want and len(want) >= 8, f"prompt {prompt}: {got} vs {want}"


# ---- OpenVINO: NNCF's compressed weights ------------------------------------------------------------

# inputs divisible by the groups (NNCF's rule); weights above and below the 10,000 elements where
# NNCF switches to its OpenVINO-compiled implementation
Q_LLAMA_OV = models.Variant("q_llama_ov", "llama", dict(models.LLAMA, hidden_size=128, intermediate_size=384,
                                                        vocab_size=300, tie_word_embeddings=False), seed=6)
# a head tied to the embeddings: NNCF compresses the shared table once, as an embedding
Q_QWEN3_OV = models.Variant("q_qwen3_ov", "qwen3", dict(models.QWEN3, hidden_size=128, intermediate_size=256,
                                                        tie_word_embeddings=True), seed=7)
VARIANTS[Q_LLAMA_OV.name] = Q_LLAMA_OV
VARIANTS[Q_QWEN3_OV.name] = Q_QWEN3_OV

# (bits, group, symmetric) as hfx's flags; NNCF: mode INT{bits}_{A,}SYM, group_size (−1: per row)
OV_SCHEMES = [(4, 128, False), (4, 64, True), (4, 32, False), (4, 0, True), (8, 0, False), (8, 0, True)]


def _ov_id(s):
    return f"int{s[0]}-{'g' + str(s[1]) if s[1] else 'row'}-{'sym' if s[2] else 'asym'}"


def _nncf_python():
    """The NNCF virtualenv scripts/setup-venv.sh layers over the oracle's."""
    py = Path(str(os.environ.get("HFX_VENV", Path.home() / ".cache" / "hfx" / "venv")) + "-nncf") / "bin" / "python"
    assert py.exists(), f"{py}: missing; `make venv` (scripts/setup-venv.sh) creates it"
    return py


NNCF_COMPRESS = (
    "import sys, openvino as ov, nncf\n"
    "src, dst, mode, group, all_layers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == '1'\n"
    "model = ov.Core().read_model(src)\n"
    "extra = {'all_layers': True} if all_layers else {}  # default: embeddings and the last layer int8\n"
    "model = nncf.compress_weights(model, mode=getattr(nncf.CompressWeightsMode, mode), group_size=group, ratio=1.0,\n"
    "                              **extra)\n"
    "ov.save_model(model, dst, compress_to_fp16=False)\n"
)


def _ov_export(checkpoint, out, *flags):
    proc = run_hfx(["export", checkpoint, out, "--format", "openvino", "--dynamic", "--quiet", *flags])
    assert proc.returncode == 0, describe(proc)
    return out


def _ov_flags(scheme):
    bits, group, sym = scheme
    return ["--quantize", f"int{bits}", "--group-size", str(group), "--sym" if sym else "--asym"]


# the decompression subgraph between a compressed weight's constants and its reader
_DECOMPRESSION = {"Convert", "Subtract", "Multiply", "Reshape"}


def _compressed(xml):
    """Per reader of a checkpoint matrix (a MatMul's weight, a Gather's table), in graph order:
    (op type, the constants of its decompression — codes, zero point, scale: element type,
    shape, bytes — {} for a float weight, the codes constant's name)."""
    import openvino as ov

    model = ov.Core().read_model(str(xml))
    found = []
    for op in model.get_ordered_ops():
        port = {"MatMul": 1, "Gather": 0}.get(op.get_type_name())
        if port is None:
            continue
        src = op.input(port).get_source_output().get_node()
        if op.get_type_name() == "Gather" and not (src.get_type_name() in _DECOMPRESSION or (
                src.get_type_name() == "Constant" and len(src.get_output_shape(0)) == 2)):
            continue  # a lookup in computed values (shapes), not in a table
        consts, stack, name = {}, [src], None
        while stack:
            n = stack.pop()
            if n.get_type_name() == "Constant":
                t, shape = n.get_output_element_type(0).get_type_name(), tuple(n.get_output_shape(0))
                role = ("scale" if t == "f16" else "zero point" if shape[-1] == 1 and len(shape) > 1 and t in ("u4", "u8")
                        else "codes" if t in ("u4", "i4", "u8", "i8") else None)
                if role:
                    consts[role] = (t, shape, n.get_data().copy())
                if role == "codes":
                    name = n.get_friendly_name()
            elif n.get_type_name() in _DECOMPRESSION:
                stack += [i.get_source_output().get_node() for i in n.inputs()]
        found.append((op.get_type_name(), consts, name))
    return found


# (scheme, all layers): hfx's defaults are NNCF's (int4: embeddings and the head int8 per row,
# asymmetric; a tied head reads the table's); all_layers=True is --quantize-embeddings and
# --quantize-lm-head at the primary precision
NNCF_CASES = ([("q_llama_ov", s, True) for s in OV_SCHEMES[:4]] +  # (int8 modes take every layer alike)
              [("q_llama_ov", s, False) for s in (OV_SCHEMES[0], OV_SCHEMES[1], OV_SCHEMES[4], OV_SCHEMES[5])] +
              [("q_qwen3_ov", s, False) for s in (OV_SCHEMES[0], OV_SCHEMES[4])] +
              [("q_qwen3_ov", OV_SCHEMES[2], True)])


@pytest.mark.parametrize("name,scheme,all_layers", NNCF_CASES,
                         ids=[f"{n}-{_ov_id(s)}-{'all' if a else 'default'}" for n, s, a in NNCF_CASES])
def test_openvino_constants_equal_nncf(ckpt, tmp_path, name, scheme, all_layers):
    """hfx's compressed weights equal nncf.compress_weights' on hfx's float32 IR (ratio 1; its
    default mixed precision or all layers alike): every MatMul's and embedding Gather's element
    types, shapes and bytes of codes, zero points and scales."""
    bits, group, sym = scheme
    ck = ckpt(name)
    plain = _ov_export(ck, tmp_path / "plain") / "model.xml"
    ref = tmp_path / "nncf.xml"
    mode = f"INT{bits}_{'SYM' if sym else 'ASYM'}"
    proc = subprocess.run([str(_nncf_python()), "-c", NNCF_COMPRESS, str(plain), str(ref), mode, str(group or -1),
                           "1" if all_layers else "0"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    flags = _ov_flags(scheme) + (["--quantize-embeddings", f"int{bits}", "--quantize-lm-head", f"int{bits}"]
                                 if all_layers else [])
    ours = _compressed(_ov_export(ck, tmp_path / "q", *flags) / "model.xml")
    theirs = _compressed(ref)
    assert len(ours) == len(theirs) == 16 and all(c for _, c, _ in ours), "every linear's weight and the table compressed"
    kinds = {}
    for i, ((op_a, a, _), (op_b, b, _)) in enumerate(zip(ours, theirs)):
        assert op_a == op_b and set(a) == set(b), f"{op_a} {i}: {set(a)} vs {set(b)}"
        for role in a:
            (ta, sa, da), (tb, sb, db) = a[role], b[role]
            assert (ta, sa) == (tb, sb), f"{op_a} {i} {role}: {ta}{sa} vs {tb}{sb}"
            assert np.array_equal(da, db), f"{op_a} {i} {role}: {int(np.sum(da != db))} of {da.size} differ"
        kinds.setdefault(op_a, set()).add(a["codes"][0])
    if bits == 4 and not all_layers:  # the mixed precision is there: the table in int8
        assert kinds["Gather"] == {"u8"}, kinds


def _ov_dequantized_model(checkpoint, xml):
    """transformers' model with each compressed weight (its codes constant named by the checkpoint
    tensor, NNCF's "/zero_point" and "/scale" beside it) replaced by the weight the decompression
    computes for its readers: (code − zero point) · scale, in float32 as OpenVINO's CPU plugin
    computes it at float32 inference precision. (model, how many readers)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(checkpoint), attn_implementation="eager").eval()
    r = _Replaced(model)
    for op, consts, name in _compressed(xml):
        if not consts:
            continue
        t, shape, raw = consts["codes"]
        raw = raw.ravel()
        if t in ("u4", "i4"):
            q = np.stack([raw & 0xF, raw >> 4], axis=-1).ravel().astype(np.int16)
            if t == "i4":
                q = np.where(q >= 8, q - 16, q)
        else:
            q = raw.view(np.int8 if t == "i8" else np.uint8).astype(np.int16)
        q = q.reshape(shape).astype(np.float32)
        if "zero point" in consts:
            zt, _, z = consts["zero point"]
            z = z.ravel()
            if zt == "u4":
                z = np.stack([z & 0xF, z >> 4], axis=-1).ravel()
            q = q - z[: int(np.prod(shape[:-1]))].reshape(shape[:-1] + (1,)).astype(np.float32)
        w = torch.from_numpy(q * consts["scale"][2].astype(np.float32))
        r.put(re.sub(r"/\d+$", "", name), w, op == "Gather")
    return r.load()


def _quantized_readers(out, component="model"):
    """How many readers export.json says took quantized weights: linears (with the head) and tables."""
    q = json.loads((out / "export.json").read_text())["components"][component]["metadata"]["quantization"]
    return q["linears"] + (1 if q.get("embeddings") else 0)


@pytest.mark.parametrize("scheme", [OV_SCHEMES[0], OV_SCHEMES[1], OV_SCHEMES[4]], ids=_ov_id)
def test_openvino_logits_equal_transformers_on_dequantized_weights(ckpt, tmp_path, scheme):
    import openvino as ov

    ck = ckpt("q_llama_ov")
    out = _ov_export(ck, tmp_path / "q", *_ov_flags(scheme))
    model, replaced = _ov_dequantized_model(ck, out / "model.xml")
    assert replaced == _quantized_readers(out) == 16  # NNCF's default: the table and the head in int8
    cfg = json.loads((ck / "config.json").read_text())
    # f32, and no dynamic int8 quantization of the activations (the CPU plugin's default for
    # compressed weights): the product of the weights as stored
    compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                                     "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})
    _assert_logits(lambda feed: compiled(feed)["logits"], model, cfg["vocab_size"])


@pytest.mark.parametrize("scheme", [OV_SCHEMES[0], OV_SCHEMES[4]], ids=_ov_id)
def test_openvino_generation_equals_transformers_on_dequantized_weights(ckpt, tmp_path, scheme):
    """The stateful export with compressed weights: OpenVINO GenAI's LLMPipeline (from token ids;
    dynamic activation quantization off, f32) and examples/generate_openvino.py give the
    dequantized model's greedy tokens, batch 1 and 3 left-padded."""
    import openvino as ov
    import openvino_genai
    from genutil import left_pad, run_loop
    from ovutil import GENERATE_OV_SCRIPT

    ck = ckpt("q_llama_ov")
    out = _ov_export(ck, tmp_path / "q", "--for-generation", *_ov_flags(scheme))
    model, replaced = _ov_dequantized_model(ck, out / "openvino_model.xml")
    assert replaced == 16
    pipe = openvino_genai.LLMPipeline(str(out), "CPU", INFERENCE_PRECISION_HINT="f32", KV_CACHE_PRECISION="f32",
                                      DYNAMIC_QUANTIZATION_GROUP_SIZE="0")
    rng = np.random.default_rng(8)
    vocab = json.loads((ck / "config.json").read_text())["vocab_size"]
    for lengths in ((6,), (9, 4, 1)):
        rows = [rng.integers(3, vocab, size=n).tolist() for n in lengths]
        wants = [_greedy(model, row, 16) for row in rows]
        ids, mask = left_pad(rows, 0)
        res = pipe.generate(openvino_genai.TokenizedInputs(ov.Tensor(ids), ov.Tensor(mask)), max_new_tokens=16,
                            do_sample=False)
        got = [list(map(int, t)) for t in res.tokens]
        assert got == wants, f"GenAI {lengths}: {got} vs {wants}"
        loop = run_loop(out, rows, 16, script=GENERATE_OV_SCRIPT)
        assert loop.proc.returncode == 0, describe(loop.proc)
        for g, want in zip(loop.tokens, wants):
            assert g[:len(want)] == want and set(g[len(want):]) <= {2}, f"loop {lengths}: {g} vs {want}"


# every decoder of the README's table whose linears read whole checkpoint tensors (fused q/k/v or
# gate/up slices — Phi-3, GPT-NeoX, GPT-2 — are checked bit for bit above instead)
TABLE = ["llama_default", "mistral_swa", "qwen2_swa", "qwen3", "granite", "olmo2", "starcoder2", "gemma", "gemma2",
         "gemma3"]


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", TABLE)
def test_every_architecture_on_dequantized_weights(checkpoints, tmp_path, name, fmt):
    """int4 (ONNX: blocks of 32, symmetric; OpenVINO: groups of 32, asymmetric): logits within 1e-4
    of transformers with every quantized weight replaced by its dequantized value, left-padded
    batch included."""
    import openvino as ov

    ck = checkpoints(name)
    out = tmp_path / "q"
    flags = ["--accuracy-level", "0"] if fmt == "onnx" else []
    proc = run_hfx(["export", ck, out, "--format", fmt, "--dynamic", "--quiet", "--quantize", "int4", "--group-size", "32",
                    *flags])
    assert proc.returncode == 0, describe(proc)
    readers = _quantized_readers(out)
    if fmt == "onnx":
        model, replaced = _dequantized_model(ck, out / "model.onnx")
        sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
        run = lambda feed: sess.run(["logits"], feed)[0]  # noqa: E731
    else:
        model, replaced = _ov_dequantized_model(ck, out / "model.xml")
        compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                                         "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})
        run = lambda feed: compiled(feed)["logits"]  # noqa: E731
    assert replaced == readers > 0
    _assert_logits(run, model, json.loads((ck / "config.json").read_text())["vocab_size"])

"""--format executorch --quantize int4|int8: linears as XNNPACK's quantized fully-connected layers
(blockwise int4 with bfloat16 scales, per-channel int4 or int8 with float32 scales), the
activations quantized per token at run time: what ExecuTorch's XNNPACK flow makes of torchao's
Int8DynamicActivationIntxWeightConfig (8da4w, 8da8w). The reference is torchao on the
transformers model, in the executorch venv (etutil's worker): its quantize_ gives the codes and
scales hfx must store bit for bit, and that quantized model's eager forward and generate() the
logits within 1e-4 and the greedy tokens — its blockwise scales rounded to bfloat16 as ExecuTorch
stores them for XNNPACK, and its linears' inputs quantized per token by XNNPACK's arithmetic,
which ExecuTorch's programs run (checked against ExecuTorch's own lowering of torchao's linear)."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import models
from conftest import PARITY_ATOL, describe, run_hfx
from etutil import flatc_json, flatc_xnngraph, worker
from genutil import NEW_TOKENS, left_pad, prompts

MAX_BATCH, MAX_SEQ, MAX_CACHE_LEN = 4, 40, 64
BOUNDED = {"export_format": "executorch",
           "dynamic_shapes": {"input_ids": {"0": {"name": "batch", "min": 1, "max": MAX_BATCH},
                                            "1": {"name": "sequence", "min": 1, "max": MAX_SEQ}}}}
GEN_BOUNDED = {"export_format": "executorch",
               "dynamic_shapes": {"input_ids": {"0": {"name": "batch", "min": 1, "max": MAX_BATCH},
                                                "1": {"name": "sequence", "min": 1, "max": MAX_CACHE_LEN}}}}

# (bits, group; 0: per output channel) and XNNPACK's datatype for it
SCHEMES = [(4, 32), (4, 64), (4, 0), (8, 0)]
DATATYPES = {(4, 32): "xnn_datatype_qbint4", (4, 64): "xnn_datatype_qbint4", (4, 0): "xnn_datatype_qcint4",
             (8, 0): "xnn_datatype_qcint8"}
CASES = [models.Case(1, 7), models.Case(3, 9, (0, 4, 2)), models.Case(2, 33, (5, 0))]


def _sid(s):
    return f"int{s[0]}-{'g' + str(s[1]) if s[1] else 'channel'}"


def _flags(scheme):
    return ["--quantize", f"int{scheme[0]}", "--group-size", str(scheme[1])]


# XNNPACK's dynamic quantization of a linear's input (src/xnnpack/quantization.h and its f32-qd8
# convert): per row, the range [min(0, lo), max(0, hi)]; scale = 255 / range in float32 (1 for an
# empty range); the zero point from whichever end errs less, clamped to [-128, 127] and rounded
# (rint); code = clamp(rint(x * scale + zero point)). torchao's eager linear quantizes and
# dequantizes its input per token by its own arithmetic (x / (range / 255), the zero point
# rounded before it is added), which rounds some values the other way (a symmetric range puts
# the minimum at a tie); ExecuTorch's programs run XNNPACK's. test_reference_is_xnnpacks checks
# this against ExecuTorch's own lowering of torchao's linear.
XNNPACK_QD8 = r"""
import torch
from torchao.quantization.quantize_.workflows.intx import intx_unpacked_to_int8_tensor as _intx
if not hasattr(_intx, "_hfx_torchao_qd8"):  # torchao's own, for exporting
    _intx._hfx_torchao_qd8 = _intx._apply_int8_act_asym_per_token_quant_dequant
def _xnnpack_qd8(x):
    lo = x.amin(-1, keepdim=True).clamp(max=0.0)
    hi = x.amax(-1, keepdim=True).clamp(min=0.0)
    scale = torch.where(lo == hi, torch.ones_like(lo), 255.0 / (hi - lo))
    lo_s, hi_s = lo * scale, hi * scale
    zp = torch.where((-128.0 + lo_s) + (127.0 + hi_s) > 0, -128.0 - lo_s, 127.0 - hi_s).clamp(-128.0, 127.0).round()
    q = (x * scale + zp).round().clamp(-128.0, 127.0)
    return (q - zp) * (1.0 / scale)
def _use(fn):
    _intx._apply_int8_act_asym_per_token_quant_dequant = fn
_use(_xnnpack_qd8)
"""

# torchao on the transformers model, once per (checkpoint, scheme), in the executorch venv, its
# linears' inputs quantized as XNNPACK quantizes them
TORCHAO = XNNPACK_QD8 + r"""
import builtins
import numpy as np, torch
ck, bits, group, what, payload, out = args
cache = builtins.__dict__.setdefault("_hfx_torchao_models", {})
if (ck, bits, group) not in cache:
    from transformers import AutoModelForCausalLM
    from torchao.quantization import quantize_
    from torchao.quantization.granularity import PerAxis, PerGroup
    from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig
    m = AutoModelForCausalLM.from_pretrained(ck, dtype=torch.float32, attn_implementation="eager").eval()
    quantize_(m, Int8DynamicActivationIntxWeightConfig(weight_dtype=getattr(torch, f"int{bits}"),
                                                       weight_granularity=PerGroup(group) if group else PerAxis(0)))
    parts = {}
    for name, mod in m.named_modules():
        w = getattr(mod, "weight", None)
        if isinstance(mod, torch.nn.Linear) and hasattr(w, "qdata"):
            parts[name + "/codes"] = w.qdata.numpy().copy()
            parts[name + "/scales"] = w.scale.numpy().copy()
            if bits == 4 and group:  # ExecuTorch stores these for XNNPACK as bfloat16
                w.scale.copy_(w.scale.to(torch.bfloat16).to(w.scale.dtype))
    cache[ck, bits, group] = (m, parts)
m, parts = cache[ck, bits, group]
with torch.no_grad():
    if what == "parts":
        np.savez(out, **parts)
    elif what == "forward":
        ids, mask, pos = (torch.tensor(x) for x in payload)
        np.savez(out, logits=m(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=False).logits.numpy())
    else:
        ids, mask, n, pad = payload
        g = m.generate(torch.tensor(ids), attention_mask=torch.tensor(mask), max_new_tokens=n, do_sample=False,
                       eos_token_id=None, pad_token_id=pad, output_logits=True, return_dict_in_generate=True)
        np.savez(out, tokens=g.sequences[:, len(ids[0]):].numpy(), logits=torch.stack(g.logits).float().numpy())
"""


def torchao(checkpoint, scheme, what, payload=None) -> dict:
    return worker().python_arrays(TORCHAO, [str(checkpoint), scheme[0], scheme[1], what, payload])


def export(checkpoint, out, config, *flags):
    cfg = out.parent / f"{out.name}-cfg.json"
    cfg.write_text(json.dumps(config))
    proc = run_hfx(["export", checkpoint, out, "--config", cfg, "--quiet", *flags])
    assert proc.returncode == 0, describe(proc)
    return out


@pytest.fixture(scope="module")
def q_exports(tmp_path_factory, checkpoints):
    root = tmp_path_factory.mktemp("executorch_quant")
    done = {}

    def get(name, scheme):
        if (name, scheme) not in done:
            done[name, scheme] = export(checkpoints(name), root / f"{name}-{_sid(scheme)}", BOUNDED, *_flags(scheme))
        return done[name, scheme]
    return get


def named_data(pte, tmp_path) -> tuple:
    """(the program as flatc decodes it, {named-data key: its bytes}, the file's bytes)."""
    program = flatc_json(pte, tmp_path)
    data = pte.read_bytes()
    base = struct.unpack_from("<Q", data, 24)[0]
    segments = program["segments"]
    named = {}
    for n in program.get("named_data", []):
        s = segments[n["segment_index"]]
        named[n["key"]] = data[base + s["offset"]:base + s["offset"] + s["size"]]
    return program, named, data


def _target(checkpoint, module: str) -> str:
    """The state-dict name of the weight a linear module reads (a tied head: the embeddings')."""
    cfg = json.loads((checkpoint / "config.json").read_text())
    if module == "lm_head" and cfg.get("tie_word_embeddings"):
        return "model.embed_tokens.weight"
    return module + ".weight"


# ExecuTorch's own lowering of torchao's quantized linear (XnnpackPartitioner) against the reference's
# eager linear, on inputs whose rows put values at rounding ties (symmetric ranges) and outliers
OWN_LOWERING = XNNPACK_QD8 + r"""
import torch
from torchao.quantization import quantize_
from torchao.quantization.granularity import PerAxis, PerGroup
from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
bits, group, pte = args
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(64, 96)).eval()
quantize_(m, Int8DynamicActivationIntxWeightConfig(weight_dtype=getattr(torch, f"int{bits}"),
                                                   weight_granularity=PerGroup(group) if group else PerAxis(0)))
if bits == 4 and group:
    m[0].weight.scale.copy_(m[0].weight.scale.to(torch.bfloat16).float())
x = torch.randn(3, 33, 64) * 3
x[0, :, 0:2], x[0, :, 8:12] = 40.0, -40.0  # a symmetric range: the minimum at a tie
x[1, :, 5] = 100.0
x[2, 3] = 0.0
_use(_intx._hfx_torchao_qd8)  # torchao's own ops are what the partitioner recognizes
try:
    prog = to_edge_transform_and_lower(torch.export.export(m, (x,)), partitioner=[XnnpackPartitioner()]).to_executorch()
finally:
    _use(_xnnpack_qd8)
open(pte, "wb").write(prog.buffer)
got = Runtime.get().load_program(pte).load_method("forward").execute([x])[0]
with torch.no_grad():
    result = float((got - m(x)).abs().max())
"""


@pytest.mark.parametrize("scheme", [(4, 32), (8, 0)], ids=_sid)
def test_reference_is_xnnpacks(tmp_path, scheme):
    """The reference's linear (torchao's weights, XNNPACK's input quantization) equals ExecuTorch's
    own XNNPACK lowering of torchao's quantized linear within 1e-5, outliers and ties included."""
    diff = worker().python(OWN_LOWERING, [scheme[0], scheme[1], str(tmp_path / "linear.pte")])
    assert diff <= 1e-4, diff  # outputs up to ~100: a code rounded the other way would move them by > 1e-2


@pytest.mark.parametrize("name", ["llama_default", "qwen3_tied"])
@pytest.mark.parametrize("scheme", SCHEMES, ids=_sid)
def test_codes_and_scales_equal_torchao(q_exports, checkpoints, tmp_path, name, scheme):
    """Every linear (the head too, a tied one reading the table) has its codes and scales as named
    data, equal bit for bit to torchao's quantize_ of the transformers model: int8 codes as they
    are, int4 ones offset by 8 in nibbles, low first; blockwise scales torchao's rounded to
    bfloat16, per-channel ones its float32. The float weights are stored nowhere."""
    out = q_exports(name, scheme)
    ck = checkpoints(name)
    want = torchao(ck, scheme, "parts")
    modules = sorted({k.split("/")[0] for k in want})
    assert len(modules) == 7 * models.VARIANTS[name].config["num_hidden_layers"] + 1, modules
    program, named, data = named_data(out / "model.pte", tmp_path)
    bits, group = scheme
    for module in modules:
        codes, scales = want[module + "/codes"], want[module + "/scales"]
        n, k = codes.shape
        key = f"{_target(ck, module)}.int{bits}_g{group or k}"
        got = np.frombuffer(named[key + ".codes"], np.uint8)
        if bits == 4:
            got = np.stack([got & 15, got >> 4], -1).reshape(n, k).astype(np.int16) - 8
        else:
            got = got.view(np.int8).reshape(n, k)
        assert np.array_equal(got, codes), f"{module}: {int(np.sum(got != codes))} of {codes.size} codes differ"
        raw = named[key + ".scales"]
        if bits == 4 and group:
            got_s = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32).reshape(n, k // group)
            import torch
            want_s = torch.from_numpy(scales).to(torch.bfloat16).float().numpy()
        else:
            got_s, want_s = np.frombuffer(raw, np.float32).reshape(n, 1), scales.reshape(n, 1)
        assert np.array_equal(got_s, want_s), f"{module}: scales differ"
    floats = [k for k in named if not k.endswith((".codes", ".scales"))]
    assert all(k.endswith("bias") for k in floats), floats  # no float weight as named data


@pytest.mark.parametrize("scheme", SCHEMES, ids=_sid)
def test_delegates_are_xnnpacks_quantized_linears(q_exports, tmp_path, scheme):
    """Each delegate: a Convert of the float32 input to int8 per token (qdint8), then a
    fully-connected node over the quantized filter, its scales named data, as ExecuTorch's
    partitioner writes torchao's linears; every payload decodes against runtime_schema.fbs."""
    out = q_exports("llama_default", scheme)
    program, named, data = named_data(out / "model.pte", tmp_path)
    base = struct.unpack_from("<Q", data, 24)[0]
    delegates = program["execution_plan"][0]["delegates"]
    assert len(delegates) == 7 * 2 + 1
    for i, d in enumerate(delegates):
        seg = program["segments"][d["processed"]["index"]]
        g = flatc_xnngraph(data[base + seg["offset"]:base + seg["offset"] + seg["size"]], tmp_path / f"d{i}")
        assert [x["xnode_union_type"] for x in g["xnodes"]] == ["XNNConvert", "XNNFullyConnected"]
        values = [v["xvalue_union"] for v in g["xvalues"]]
        assert values[1]["tensor_value"]["datatype"] == "xnn_datatype_qdint8"
        assert values[1]["quant_params_type"] == "PerTokenDynamicQuant"
        filt = values[2]
        assert filt["tensor_value"]["datatype"] == DATATYPES[scheme]
        q = filt["quant_params"]
        keys = [c["named_key"] for c in g["constant_data"]]
        assert keys[q["scale_buffer_idx"]].endswith(".scales") and keys[1].endswith(".codes")
        if scheme[0] == 4 and scheme[1]:
            assert filt["quant_params_type"] == "PerChannelGroupQuant" and q["group_size"] == scheme[1]
            assert q["num_scales"] * 2 == len(named[keys[q["scale_buffer_idx"]]])
        else:
            assert filt["quant_params_type"] == "PerChannelQuant"
            assert q["num_scales"] * 4 == len(named[keys[q["scale_buffer_idx"]]])


# The logits agree within 1e-4 except downstream of an input value that the two sides quantize to
# neighbouring codes: the float32 operations before a linear (hfx's portable kernels, torch's eager
# ones) may differ in the last bit, and a value within that bit of a rounding boundary of its row's
# int8 grid then takes the other code (one step of ~range / 255 in that linear's input). Such
# positions carry that step through the layers after it; the rest must be exact.
EXACT_SHARE, FLIP_BOUND = 0.6, 0.1


def assert_quantized_close(got, want, label):
    """got, want: [B, S, V]. Every element within FLIP_BOUND, and at least EXACT_SHARE of the
    (batch, position) rows within 1e-4 on every element."""
    assert got.shape == want.shape and np.isfinite(got).all(), (got.shape, want.shape)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64)).max(-1)
    exact = float((diff <= PARITY_ATOL).mean())
    print(f"{label}: max abs diff {diff.max():.3g}, {exact:.0%} of positions within {PARITY_ATOL:g}")
    assert diff.max() <= FLIP_BOUND, f"{label}: max abs diff {diff.max():.3g} > {FLIP_BOUND}"
    assert exact >= EXACT_SHARE, f"{label}: only {exact:.0%} of positions within {PARITY_ATOL:g}: {diff.round(5)}"


def _run(out, feed):
    meta = json.loads((out / "export.json").read_text())["components"]["model"]
    return worker().run(out / meta["file"], [feed[n] for n in meta["metadata"]["input_names"]])[0]


@pytest.mark.parametrize("name", ["llama_default", "qwen3_tied"])
@pytest.mark.parametrize("scheme", SCHEMES, ids=_sid)
def test_logits_equal_torchao(q_exports, checkpoints, name, scheme):
    """executorch.runtime's logits from hfx's program equal torchao's quantized model's eager ones
    (activations quantized per token as XNNPACK does at run time) within 1e-4 on every element of
    most positions, and within one input code's step at the others (assert_quantized_close),
    left-padded batches included."""
    out = q_exports(name, scheme)
    vocab = models.VARIANTS[name].config["vocab_size"]
    for case in CASES:
        feed = models.make_inputs(case, vocab)
        want = torchao(checkpoints(name), scheme, "forward",
                       [feed["input_ids"].tolist(), feed["attention_mask"].tolist(), feed["position_ids"].tolist()])
        assert_quantized_close(_run(out, feed), want["logits"], f"{name} {_sid(scheme)} {case.id}")


MODES = {"dyncache": ("--cache", "dynamic"), "static-mtd": ("--cache", "static", "--multi-token-decode")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("scheme", [(4, 32), (8, 0)], ids=_sid)
@pytest.mark.parametrize("lengths", [(7,), (10, 5, 1)], ids=lambda x: f"b{len(x)}")
def test_generation_equals_torchao(checkpoints, tmp_path, mode, scheme, lengths):
    """32 greedy tokens through examples/generate_executorch.py equal generate() of torchao's
    quantized model, every step's logits as assert_quantized_close says; batch 1 and 3
    left-padded; a growing cache and a static one written in place."""
    name = "llama_default"
    ck = checkpoints(name)
    out = export(ck, tmp_path / "gen", GEN_BOUNDED, "--for-generation", *MODES[mode], "--max-cache-len",
                 str(MAX_CACHE_LEN), *_flags(scheme))
    gen = json.loads((out / "generation_config.json").read_text()) if (out / "generation_config.json").exists() else {}
    gen.update(bos_token_id=1, eos_token_id=None)
    (out / "generation_config.json").write_text(json.dumps(gen))
    rows = prompts(lengths, models.VARIANTS[name].vocab_size)
    ids, mask = left_pad(rows, 0)
    want = torchao(ck, scheme, "generate", [ids.tolist(), mask.tolist(), NEW_TOKENS, 0])
    tokens, logits = worker().generate(out, rows, NEW_TOKENS)
    label = f"[executorch] {name} {_sid(scheme)} {mode} b{len(rows)}"
    assert [list(map(int, t)) for t in tokens] == want["tokens"].tolist(), f"{label}: {tokens} vs {want['tokens'].tolist()}"
    assert_quantized_close(logits.transpose(1, 0, 2), want["logits"].transpose(1, 0, 2), label)


@pytest.mark.parametrize("flags,config,message", [
    (["--quantize", "int4", "--asym"], {}, "symmetric weights (torchao's"),
    (["--quantize", "int8", "--group-size", "32"], {}, "8-bit weights per output channel"),
    (["--quantize", "int4", "--group-size", "48"], {}, "a multiple of 32 and divides the layer's inputs"),
    (["--quantize", "int4"], {"backend": "portable"}, "quantized weights are read by XNNPACK's quantized linears"),
    (["--quantize", "int4", "--quantize-embeddings", "int4"], {}, "quantized embedding tables are not written yet"),
    (["--quantize", "int8-dynamic"], {}, "has no dynamic int8 form"),
], ids=["asym", "int8-groups", "group-48", "portable", "tables", "int8-dynamic"])
def test_refusals_are_clear_and_leave_nothing(checkpoints, tmp_path, flags, config, message):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({**BOUNDED, **config}))
    proc = run_hfx(["export", checkpoints("llama_default"), tmp_path / "out", "--config", cfg, "--quiet", *flags])
    assert proc.returncode == 2, describe(proc)
    assert message in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()

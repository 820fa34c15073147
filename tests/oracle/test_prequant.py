"""Pre-quantized Hub checkpoints as input (docs/QUANTIZATION.md "Pre-quantized checkpoints"): `hfx export DIR OUT`
of a checkpoint whose config.json has a quantization_config, against transformers' own dequantizing loader
(`from_pretrained(dir, dtype=float32)`, which on a machine without a GPU dequantizes FP8 weights with its
Fp8Dequantize) on the same folder.

FP8 (quant_method "fp8", FineGrainedFP8: DeepSeek V3, Qwen3-FP8, ...). Each checkpoint is a tiny random transformers
model (fixed seed) whose linear weights transformers' own FP8 quantizer (Fp8Quantize) turned into float8_e4m3fn
codes and weight_scale_inv tiles — or, for what it does not write, the same rule by hand (float8_e5m2 codes, tiles
that do not divide the matrix, as DeepSeek's converter writes them):

  * every weight of the ONNX export equals transformers' dequantized parameter bit for bit, and the logits (batch 2,
    left-padded) are within 1e-4, for tiles of 128 × 128 (float32 scales), 64 × 32 (bfloat16 scales), E8M0 scales
    (scale_fmt "ue8m0"), e5m2 codes, per-expert MoE weights, and — where the reference is the float model holding
    the weights dequantized by the format's rule — partial last tiles (which transformers refuses) and fused
    [experts, rows, cols] weights (which transformers loads as their raw codes);
  * one checkpoint through OpenVINO, torch (.pt2) and ExecuTorch, and greedy generation in onnxruntime-genai equal
    to transformers' generate;
  * what hfx does not read (static activation scales, a scale grid that does not tile its weight, a scale without
    its weight, a weight without its scale, FP8 tensors without a quantization_config, another quant_method) exits
    2 naming it, writing nothing.

MXFP4 (quant_method "mxfp4": gpt-oss as released): a tiny gpt-oss whose experts are stored as X_blocks / X_scales
(OCP MX's rule), against Mxfp4Config(dequantize=True): the experts bit for bit, logits in all four formats,
onnxruntime-genai's greedy tokens.

compressed-tensors (llm-compressor's checkpoints): tiny Llamas compressed by compressed-tensors itself (int4 groups
symmetric and asymmetric, int3, int8 channels, naive int8, FP8 channels; float32, float16 and bfloat16 scales),
against CompressedTensorsConfig(run_compressed=False): every linear bit for bit, logits, one case in every format
and onnxruntime-genai; activation quantization, activation order, other statuses and formats refused by name.
"""
from __future__ import annotations

import json
import math
import types

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from conftest import (assert_export_logits, assert_export_refused, built_once, describe, eager_logits, padded_feed,
                      real_token_diff, run_forward, run_hfx)

ARCH = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM",
        "qwen3_moe": "Qwen3MoeForCausalLM"}
# case → (model_type, weight_block_size, options): "scales" the scales' dtype, "codes" the codes' (e5m2 by hand),
# "scale_fmt" transformers' (ue8m0: power-of-two scales stored as E8M0), "hidden", "intermediate" for partial tiles
# (⌈320 / 128⌉ = 3 rows of scales, which transformers cannot derive its tiles from), "fused" for the MoE's experts
# stored as the model holds them ([experts, rows, cols] weights and [experts, ⌈⌉, ⌈⌉] scales, which transformers
# loads as the raw codes); "rule": the reference is the float model holding the weights the format's rule makes
CASES = {
    "llama_128": ("llama", (128, 128), {}),
    "qwen3_64x32_bf16": ("qwen3", (64, 32), {"scales": torch.bfloat16}),
    "qwen2_ue8m0": ("qwen2", (32, 64), {"scale_fmt": "ue8m0"}),
    "llama_e5m2": ("llama", (64, 64), {"codes": torch.float8_e5m2}),
    "qwen3_moe_64": ("qwen3_moe", (64, 64), {}),
    "qwen3_moe_fused_64": ("qwen3_moe", (64, 64), {"fused": True, "rule": True}),
    "qwen3_moe_fp4_experts": ("qwen3_moe", (64, 64), {"fp4_experts": True}),
    "llama_partial_tiles": ("llama", (128, 128), {"hidden": 192, "intermediate": 320, "rule": True}),
}
FORMATS_CASE = "llama_128"


def _config(model_type, hidden, intermediate):
    from transformers import AutoConfig
    extra = {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 128, "decoder_sparse_step": 1,
             "norm_topk_prob": True} if model_type == "qwen3_moe" else {}
    cfg = AutoConfig.for_model(model_type, hidden_size=hidden, intermediate_size=intermediate, num_attention_heads=4,
                               num_key_value_heads=2, head_dim=64, num_hidden_layers=2, vocab_size=512,
                               max_position_embeddings=256, tie_word_embeddings=False, bos_token_id=1,
                               eos_token_id=2, **extra)
    cfg.architectures = [ARCH[model_type]]
    return cfg


def _quantize(key, w, block, opts):
    """{key: codes, key_scale_inv: scales} of a [rows, cols] weight: transformers' Fp8Quantize where it writes the
    case, else its rule (max |w| / 448 a tile, ⌈⌉ tiles, the last partial) by hand; DeepSeek V4's experts (option
    fp4_experts): FP4 codes two to an int8, a power-of-two scale per 32 columns (E8M0), OCP MX's rule."""
    if opts.get("fp4_experts") and ".experts." in key:
        blocks, scales = _mxfp4(w)
        blocks = blocks.reshape(*w.shape[:-1], -1).view(torch.int8)  # [rows, cols / 2]
        return {key: blocks, key + "_scale_inv": scales.view(torch.float8_e8m0fnu)}
    return _quantize_fp8(key, w, block, opts)


def _quantize_fp8(key, w, block, opts):
    """{key: codes, key_scale_inv: scales} of a [rows, cols] weight: transformers' Fp8Quantize where it writes the
    case, else its rule (max |w| / 448 a tile, ⌈⌉ tiles, the last partial) by hand."""
    from transformers import FineGrainedFP8Config
    from transformers.integrations.finegrained_fp8 import Fp8Quantize
    rows, cols = w.shape[-2:]
    if rows % block[0] == 0 and cols % block[1] == 0 and "codes" not in opts:
        config = FineGrainedFP8Config(weight_block_size=block, scale_fmt=opts.get("scale_fmt", "float"))
        out = Fp8Quantize(types.SimpleNamespace(quantization_config=config))._quantize_one(key, w)
        scale = out[key + "_scale_inv"]
        assert out[key].dtype == torch.float8_e4m3fn
        if "scales" in opts:
            out[key + "_scale_inv"] = scale.to(opts["scales"])
        return out
    codes = opts.get("codes", torch.float8_e4m3fn)
    gr, gc = math.ceil(rows / block[0]), math.ceil(cols / block[1])
    scale, q = torch.empty(gr, gc), torch.empty(rows, cols, dtype=codes)
    for i in range(gr):
        for j in range(gc):
            tile = (slice(i * block[0], (i + 1) * block[0]), slice(j * block[1], (j + 1) * block[1]))
            scale[i, j] = w[tile].abs().max() / torch.finfo(codes).max
            q[tile] = (w[tile] / scale[i, j]).to(codes)
    return {key: q, key + "_scale_inv": scale}


def _save(folder, cfg, tensors, q, edit):
    """The checkpoint folder: cfg with quantization_config q, the tensors; edit(tensors, q) first."""
    if edit:
        edit(tensors, q)
    folder.mkdir(parents=True, exist_ok=True)
    cfg.save_pretrained(folder)
    config = json.loads((folder / "config.json").read_text())
    config["quantization_config"] = q
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})


def _dequantize(codes, scale, block):
    """The format's rule (DeepSeek's weight_dequant): code · the scale of its ⌈⌉ tile, in float32 (FP4 codes: their
    values times 2^(e − 127))."""
    if codes.dtype == torch.int8:
        u8 = codes.view(torch.uint8)
        fp4 = torch.tensor(FP4)[torch.stack([u8 & 15, u8 >> 4], -1).long()].reshape(*u8.shape[:-1], -1)
        exp = scale.view(torch.uint8).to(torch.int32) - 127
        return torch.ldexp(fp4, exp.repeat_interleave(32, -1).to(torch.float32))
    s = scale.to(torch.float32).repeat_interleave(block[0], -2).repeat_interleave(block[1], -1)
    return codes.to(torch.float32) * s[..., :codes.shape[-2], :codes.shape[-1]]


def _write(case, folder, edit=None):
    """The checkpoint of `case` in `folder`; edit(tensors, quantization_config) changes it before it is saved.
    Returns the float model whose weights are the dequantized ones (the reference where transformers has none)."""
    from transformers import AutoModelForCausalLM
    model_type, block, opts = CASES[case]
    torch.manual_seed(0)
    cfg = _config(model_type, opts.get("hidden", 256), opts.get("intermediate", 384))
    model = AutoModelForCausalLM.from_config(cfg).eval()
    tensors, dequantized = {}, {}
    # the checkpoint's names: transformers' save_pretrained form (per-expert weights for the MoE)
    from transformers import Qwen3MoeForCausalLM
    state = model.state_dict()
    if isinstance(model, Qwen3MoeForCausalLM) and not opts.get("fused"):
        for name in [k for k in state if ".mlp.experts." in k]:
            fused = state.pop(name)
            prefix, what = name.rsplit(".", 1)
            for e in range(fused.shape[0]):
                if what == "gate_up_proj":
                    gate, up = fused[e].chunk(2, dim=0)
                    state[f"{prefix}.{e}.gate_proj.weight"], state[f"{prefix}.{e}.up_proj.weight"] = gate, up
                else:
                    state[f"{prefix}.{e}.down_proj.weight"] = fused[e]
    for key, w in state.items():
        w = w.contiguous()
        if w.ndim >= 2 and "embed" not in key and "lm_head" not in key and ".gate." not in key + ".":
            out = _quantize(key, w, block, opts)
            tensors.update(out)
            dequantized[key] = _dequantize(out[key], out[key + "_scale_inv"], block)
        else:
            tensors[key] = w
    q = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": list(block)}
    if "scale_fmt" in opts:
        q["scale_fmt"] = opts["scale_fmt"]
    _save(folder, cfg, tensors, q, edit)
    return dequantized


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("fp8")

    def make(case):
        return root / case, _write(case, root / case)
    return built_once(make)


@pytest.fixture(scope="module")
def reference(checkpoints):
    from transformers import AutoModelForCausalLM

    def make(case):
        folder, dequantized = checkpoints(case)
        model_type, _, opts = CASES[case]
        if opts.get("rule"):
            if case == "llama_partial_tiles":  # transformers refuses a grid that does not divide the matrix
                with pytest.raises(RuntimeError, match="conversion of the weights"):
                    AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
            model = AutoModelForCausalLM.from_config(_config(model_type, opts.get("hidden", 256),
                                                             opts.get("intermediate", 384))).eval()
            from safetensors.torch import load_file
            state = {k: v for k, v in load_file(folder / "model.safetensors").items() if k in model.state_dict()}
            state.update(dequantized)
            model.load_state_dict(state)
            return model
        return AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    return built_once(make)


def _onnx_weights(onnx_dir):
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(str(onnx_dir / "model.onnx"), load_external_data=True).graph
    return {i.name: numpy_helper.to_array(i) for i in graph.initializer}


@pytest.mark.parametrize("case", list(CASES))
def test_weights_exact_and_logits(case, checkpoints, reference, tmp_path):
    (folder, dequantized), model = checkpoints(case), reference(case)
    out = tmp_path / "onnx"
    proc = run_hfx(["export", folder, out, "--format", "onnx", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    inits, state = _onnx_weights(out), model.state_dict()
    checked = 0
    for name, want in dequantized.items():  # the dequantized weights (transformers' parameters where it has them)
        if name in state:
            assert np.array_equal(state[name].numpy().view(np.uint32), want.numpy().view(np.uint32)), name
        found = [k for k in inits if k == name or k.startswith(name + "/")]
        for k in found if ".experts." not in name else ():  # (experts: stacked into initializers of their own)
            got = inits[k].T if "/T" in k else inits[k]
            assert got.shape == tuple(want.shape), (k, got.shape)
            assert np.array_equal(got.view(np.uint32), want.numpy().view(np.uint32)), \
                f"{k}: max difference {np.abs(got - want.numpy()).max()}"
            checked += 1
    assert checked >= len([k for k in dequantized if ".experts." not in k]) > 0, checked
    feed = padded_feed(model.config.vocab_size)
    want = eager_logits(model, feed)
    assert real_token_diff(run_forward("onnx", out, feed)["logits"], want, feed) <= 1e-4
    # the scales matter: the codes alone (each scale 1) give other logits
    if case == FORMATS_CASE:
        unscaled = _want_unscaled(model, folder)
        assert np.abs(eager_logits(unscaled, feed) - want).max() > 1e-2


def _want_unscaled(model, folder):
    import copy
    from safetensors.torch import load_file
    tensors = load_file(folder / "model.safetensors")
    other = copy.deepcopy(model)
    state = other.state_dict()
    for k, v in tensors.items():
        if v.dtype == torch.float8_e4m3fn:
            state[k] = v.to(torch.float32)
    other.load_state_dict(state)
    return other


@pytest.mark.parametrize("fmt", ["openvino", "dynamo", "executorch"])
def test_formats(fmt, checkpoints, reference, tmp_path):
    assert_export_logits(checkpoints(FORMATS_CASE)[0], reference(FORMATS_CASE), fmt, tmp_path / fmt)


def _assert_genai_generates_as_transformers(folder, model, tmp_path, *flags):
    """onnxruntime-genai's 24 greedy tokens after a prompt from hfx's generation export (FLAGS added) equal
    transformers'."""
    import onnxruntime_genai as og
    from genutil import genai_greedy
    out = tmp_path / "genai"
    proc = run_hfx(["export", folder, out, "--format", "onnx", "--for-generation", "--multi-token-decode",
                    "--dynamic", "--quiet", *flags])
    assert proc.returncode == 0, describe(proc)
    prompt = [5, 6, 7, 8, 9, 10, 11]
    with torch.no_grad():
        want = model.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                              max_new_tokens=24, do_sample=False, eos_token_id=None)[0, len(prompt):].tolist()
    got = genai_greedy(og.Model(str(out)), prompt, 24)
    assert len(want) == 24 and got == want[:len(got)] and len(got) >= 23, (got, want)


@pytest.mark.parametrize("case", [FORMATS_CASE, "qwen3_moe_64"])
def test_onnxruntime_genai_generates_as_transformers(case, checkpoints, reference, tmp_path):
    _assert_genai_generates_as_transformers(checkpoints(case)[0], reference(case), tmp_path)


# ---- MXFP4 (quant_method "mxfp4": gpt-oss as released) -----------------------------------------------------------

FP4 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0)


def _mxfp4(w):
    """OCP MX's rule on [..., rows, cols]: per 32 columns a shared exponent floor(log2 max |w|) − 2 (E8M0, biased by
    127) and the nearest FP4 (E2M1) codes, two a byte, the first in the low nibble: (blocks, scales)."""
    groups = w.reshape(*w.shape[:-1], -1, 32)
    exp = torch.floor(torch.log2(groups.abs().amax(-1, keepdim=True).clamp(min=2.0 ** -126))) - 2
    codes = (groups[..., None] / torch.exp2(exp)[..., None] - torch.tensor(FP4)).abs().argmin(-1).to(torch.uint8)
    return (codes[..., 0::2] | codes[..., 1::2] << 4).contiguous(), (exp[..., 0] + 127).to(torch.uint8).contiguous()


def _write_mxfp4(folder, edit=None):
    """A tiny gpt-oss (sliding and full layers, 4 experts) whose experts are stored as released: "X_blocks" and
    "X_scales" of the transposed [experts, out, in] weights."""
    from transformers import AutoConfig, AutoModelForCausalLM
    torch.manual_seed(0)
    cfg = AutoConfig.for_model("gpt_oss", hidden_size=64, intermediate_size=64, num_attention_heads=4,
                               num_key_value_heads=2, head_dim=16, num_hidden_layers=2, vocab_size=256,
                               num_local_experts=4, num_experts_per_tok=2, sliding_window=4, swiglu_limit=7.0,
                               max_position_embeddings=256, layer_types=["sliding_attention", "full_attention"],
                               rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                               bos_token_id=1, eos_token_id=2)
    cfg.architectures = ["GptOssForCausalLM"]
    tensors = {}
    for key, w in AutoModelForCausalLM.from_config(cfg).state_dict().items():
        if key.endswith(("experts.gate_up_proj", "experts.down_proj")):
            tensors[key + "_blocks"], tensors[key + "_scales"] = _mxfp4(w.transpose(1, 2))
        else:
            tensors[key] = w.contiguous()
    q = {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                            "model.embed_tokens", "lm_head"]}
    _save(folder, cfg, tensors, q, edit)


@pytest.fixture(scope="module")
def mxfp4(tmp_path_factory):
    """(folder, transformers' dequantizing load: Mxfp4Config(dequantize=True), float32)."""
    from transformers import AutoModelForCausalLM, Mxfp4Config
    folder = tmp_path_factory.mktemp("mxfp4") / "gpt_oss"
    _write_mxfp4(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32,
                                                 quantization_config=Mxfp4Config(dequantize=True)).eval()
    return folder, model


@pytest.mark.parametrize("fmt", ["onnx", "openvino", "dynamo", "executorch"])
def test_mxfp4_experts(fmt, mxfp4, tmp_path):
    """The experts equal transformers' dequantized parameters bit for bit (ONNX's initializers), the logits within
    1e-4 in every format."""
    folder, model = mxfp4
    out = tmp_path / fmt
    proc = run_hfx(["export", folder, out, "--format", fmt] + (["--dynamic"] if fmt == "onnx" else []))
    assert proc.returncode == 0, describe(proc)
    if fmt == "onnx":
        inits, checked = _onnx_weights(out), 0
        for name, want in model.state_dict().items():
            if name.endswith(("experts.gate_up_proj", "experts.down_proj")):
                assert np.array_equal(inits[name].view(np.uint32), want.numpy().view(np.uint32)), name
                checked += 1
        assert checked == 4
    feed = padded_feed(model.config.vocab_size)
    got = run_forward(fmt, out, feed, want_names=["logits"])["logits"]
    assert real_token_diff(got, eager_logits(model, feed), feed) <= 1e-4


def test_mxfp4_onnxruntime_genai_generates_as_transformers(mxfp4, tmp_path):
    _assert_genai_generates_as_transformers(*mxfp4, tmp_path)


MXFP4_EDITS = {
    "mxfp4_scales_shape": (lambda t, q: t.update({"model.layers.0.mlp.experts.down_proj_scales":
                                                  torch.zeros(4, 64, 1, dtype=torch.uint8)}),
                           "model.layers.0.mlp.experts.down_proj_scales"),
    "mxfp4_no_scales": (lambda t, q: t.pop("model.layers.1.mlp.experts.gate_up_proj_scales"),
                        "model.layers.1.mlp.experts.gate_up_proj_blocks"),
}


# ---- compressed-tensors (llm-compressor's checkpoints) --------------------------------------------------------------

# case → the weights' QuantizationArgs, the format, the model's dtype (the scales' and so the dequantization's)
CT_CASES = {
    "ct_int4_sym_group64_bf16": (dict(num_bits=4, symmetric=True, strategy="group", group_size=64), "pack-quantized",
                                 torch.bfloat16),
    "ct_int4_asym_group32": (dict(num_bits=4, symmetric=False, strategy="group", group_size=32), "pack-quantized",
                             torch.float32),
    "ct_int3_asym_group64": (dict(num_bits=3, symmetric=False, strategy="group", group_size=64), "pack-quantized",
                             torch.float32),
    "ct_int8_channel_f16": (dict(num_bits=8, symmetric=True, strategy="channel"), "pack-quantized", torch.float16),
    "ct_int8_naive_tensor": (dict(num_bits=8, symmetric=True, strategy="tensor"), "naive-quantized", torch.float32),
    "ct_fp8_channel_bf16": (dict(num_bits=8, type="float", symmetric=True, strategy="channel"), "float-quantized",
                            torch.bfloat16),
}
CT_FORMATS_CASE = "ct_int4_asym_group32"


def _ranges(w, args):
    """A weight's minimum and maximum per scale, shaped as the module's scale (the strategy's tiles)."""
    if args.strategy == "group":
        g = w.reshape(w.shape[0], -1, args.group_size)
    elif args.strategy == "channel":
        g = w.reshape(w.shape[0], 1, -1)
    else:
        g = w.reshape(1, 1, -1)
    return g.amin(-1), g.amax(-1)


def _write_ct(case, folder, edit=None, config=None):
    """A tiny Llama (q/k/v/o and MLP linears quantized, the head not) compressed by compressed-tensors itself:
    apply_quantization_config, each linear's scales and zero points from its weights' ranges (calculate_qparams),
    ModelCompressor.compress_model, save_pretrained and update_config."""
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import (QuantizationArgs, QuantizationConfig, QuantizationScheme,
                                                 apply_quantization_config)
    from compressed_tensors.quantization.utils import calculate_qparams
    from transformers import AutoModelForCausalLM
    weights, fmt, dtype = CT_CASES[case]
    torch.manual_seed(0)
    cfg = config or _config("llama", 256, 384)
    model = AutoModelForCausalLM.from_config(cfg).eval().to(dtype)
    args = QuantizationArgs(**weights)
    apply_quantization_config(model, QuantizationConfig(
        config_groups={"group_0": QuantizationScheme(targets=["Linear"], weights=args)}, ignore=["lm_head"]))
    for module in model.modules():
        if hasattr(module, "weight_scale"):
            scale, zero = calculate_qparams(*_ranges(module.weight.data, args), args)
            module.weight_scale.data.copy_(scale.reshape(module.weight_scale.shape))
            if hasattr(module, "weight_zero_point"):
                module.weight_zero_point.data.copy_(zero.reshape(module.weight_zero_point.shape))
    compressor = ModelCompressor.from_pretrained_model(model, quantization_format=fmt)
    compressor.compress_model(model)
    model.save_pretrained(folder)
    compressor.update_config(folder)
    if edit:
        from safetensors.torch import load_file
        tensors, config = load_file(folder / "model.safetensors"), json.loads((folder / "config.json").read_text())
        edit(tensors, config["quantization_config"])
        (folder / "config.json").write_text(json.dumps(config, indent=2))
        save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})


@pytest.fixture(scope="module")
def ct(tmp_path_factory):
    """(folder, transformers' dequantizing load: CompressedTensorsConfig(run_compressed=False), float32)."""
    from transformers import AutoModelForCausalLM
    from transformers.utils.quantization_config import CompressedTensorsConfig
    root = tmp_path_factory.mktemp("ct")

    def make(case):
        _write_ct(case, root / case)
        model = AutoModelForCausalLM.from_pretrained(root / case, dtype=torch.float32,
                                                     quantization_config=CompressedTensorsConfig(run_compressed=False))
        return root / case, model.eval()
    return built_once(make)


@pytest.mark.parametrize("case", list(CT_CASES))
def test_compressed_tensors_weights_exact_and_logits(case, ct, tmp_path):
    """Every linear equals transformers' decompressed parameter bit for bit (rounded to the scales' dtype as
    compressed-tensors dequantizes), the logits within 1e-4."""
    folder, model = ct(case)
    out = tmp_path / "onnx"
    proc = run_hfx(["export", folder, out, "--format", "onnx", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    inits, checked = _onnx_weights(out), 0
    for name, want in model.state_dict().items():
        for k in [k for k in inits if (k == name or k.startswith(name + "/")) and "_proj" in name]:
            got = inits[k].T if "/T" in k else inits[k]
            assert np.array_equal(got.view(np.uint32), want.numpy().view(np.uint32)), \
                f"{k}: max difference {np.abs(got - want.numpy()).max()}"
            checked += 1
    assert checked >= 14, checked
    feed = padded_feed(model.config.vocab_size)
    assert real_token_diff(run_forward("onnx", out, feed)["logits"], eager_logits(model, feed), feed) <= 1e-4


@pytest.mark.parametrize("fmt", ["openvino", "dynamo", "executorch"])
def test_compressed_tensors_formats(fmt, ct, tmp_path):
    assert_export_logits(*ct(CT_FORMATS_CASE), fmt, tmp_path / fmt)


def test_compressed_tensors_onnxruntime_genai_generates_as_transformers(ct, tmp_path):
    _assert_genai_generates_as_transformers(*ct("ct_int4_sym_group64_bf16"), tmp_path)


def test_compressed_tensors_stored_onnxruntime_genai_generates_as_transformers(ct, tmp_path):
    """The stored int4 linears (MatMulNBits in float compute) generate transformers' tokens in onnxruntime-genai."""
    _assert_genai_generates_as_transformers(*ct(CT_FORMATS_CASE), tmp_path, "--quantize", "stored",
                                            "--accuracy-level", "0")


def _matmulnbits_weights(onnx_dir):
    """{weight name: the float32 weight its MatMulNBits dequantizes to, (codes − zero points) · scales}."""
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(str(onnx_dir / "model.onnx"), load_external_data=True).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    found = {}
    for node in [n for n in graph.node if n.op_type == "MatMulNBits"]:
        a = {x.name: x.i for x in node.attribute}
        bits, block, n, k = a["bits"], a["block_size"], a["N"], a["K"]
        b, scales = inits[node.input[1]], inits[node.input[2]].reshape(n, -1)
        unpack = (lambda x, m: np.stack([x & 0xF, x >> 4], -1).reshape(n, -1)[:, :m]) if bits == 4 else \
            (lambda x, m: x.reshape(n, -1)[:, :m])
        codes = unpack(b, k).reshape(n, -1, block).astype(np.float32)
        zp = unpack(inits[node.input[3]], scales.shape[1]).astype(np.float32) if len(node.input) > 3 and \
            node.input[3] else np.full(scales.shape, 2.0 ** (bits - 1), np.float32)
        found[node.input[1].split("_Q")[0]] = ((codes - zp[..., None]) * scales[..., None]).reshape(n, -1)
    return found


@pytest.mark.parametrize("case", ["ct_int4_asym_group32", "ct_int4_sym_group64_bf16"])
@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
def test_compressed_tensors_quantize_stored(case, fmt, ct, tmp_path):
    """--quantize stored: the linears' stored codes, zero points and scales as MatMulNBits (ONNX) and compressed
    weights (OpenVINO), without a float round trip. They dequantize to (q − z) · s in float32: transformers' parameters
    bit for bit where the scales are float32; where they are bfloat16, compressed-tensors rounds each product to
    bfloat16 and the stored weight is within half a bfloat16 step of it. Float compute (accuracy level 0; OpenVINO
    without dynamic quantization): logits within 1e-4 of transformers for float32 scales."""
    folder, model = ct(case)
    out = tmp_path / fmt
    extra = ["--accuracy-level", "0"] if fmt == "onnx" else []
    proc = run_hfx(["export", folder, out, "--format", fmt, "--dynamic", "--quantize", "stored", *extra])
    assert proc.returncode == 0, describe(proc)
    md = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]["quantization"]
    assert md["from"] == "compressed-tensors" and md["linears"] == 14, md
    params, exact = model.state_dict(), CT_CASES[case][2] == torch.float32
    feed = padded_feed(model.config.vocab_size)
    if fmt == "onnx":
        weights = _matmulnbits_weights(out)
        assert len(weights) == 14, sorted(weights)
        for name, w in weights.items():
            want = params[name].numpy()
            if exact:
                assert np.array_equal(w.view(np.uint32), want.view(np.uint32)), name
            else:  # bfloat16 keeps 8 significant bits: half a step is at most 2^-8 of the value
                assert np.all(np.abs(w - want) <= np.maximum(np.abs(w), np.abs(want)) * 2.0 ** -8), name
                assert not np.array_equal(w, want)  # (the rounding is there to see)
        got = run_forward("onnx", out, feed)["logits"]
    else:
        import openvino as ov
        ir = ov.Core().read_model(str(out / "model.xml"))
        codes = [op for op in ir.get_ops() if op.get_type_name() == "Constant" and "zero_point" not in
                 op.get_friendly_name() and str(op.get_output_element_type(0)) in ("<Type: 'int4_t'>",
                                                                                   "<Type: 'uint4_t'>")]
        assert len(codes) == 14
        compiled = ov.Core().compile_model(ir, "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                       "DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"})
        res = compiled({i.get_any_name(): feed[i.get_any_name()] for i in compiled.inputs})
        got = np.array(res[compiled.outputs[0]])
    assert real_token_diff(got, eager_logits(model, feed), feed) <= (1e-4 if exact else 1e-2)


@pytest.mark.parametrize("what", ["fp8", "executorch"])
def test_quantize_stored_refused(what, checkpoints, ct, tmp_path):
    """FP8 codes are no form a quantized linear holds as stored; ExecuTorch holds no stored blocks yet."""
    folder = checkpoints(FORMATS_CASE)[0] if what == "fp8" else ct(CT_FORMATS_CASE)[0]
    words = "no linear of" if what == "fp8" else "export_format 'executorch'"
    assert_export_refused(folder, tmp_path / "out", words, "--format", "onnx" if what == "fp8" else "executorch",
                          "--quantize", "stored")


def _second_group(tensors, q):
    q["config_groups"]["group_1"] = json.loads(json.dumps(q["config_groups"]["group_0"]))
    q["config_groups"]["group_1"]["weights"]["group_size"] = 128


CT_EDITS = {
    "ct_activations": (lambda t, q: q["config_groups"]["group_0"].update(
        input_activations={"num_bits": 8, "type": "int", "symmetric": True, "strategy": "token", "dynamic": True}),
                       "input_activations"),
    "ct_status": (lambda t, q: q.update(quantization_status="frozen"), "quantization_status 'frozen'"),
    "ct_actorder": (lambda t, q: q["config_groups"]["group_0"]["weights"].update(actorder="group"), "actorder"),
    "ct_groups": (_second_group, "groups that store weights differently"),
    "ct_no_zero_point": (lambda t, q: t.pop("model.layers.0.mlp.up_proj.weight_zero_point"),
                         "model.layers.0.mlp.up_proj' is quantized asymmetrically"),
    "ct_format": (lambda t, q: q["config_groups"]["group_0"].update(format="nvfp4-pack-quantized"),
                  "format 'nvfp4-pack-quantized'"),
}


def _drop(name):
    return lambda tensors, q: tensors.pop(name)


EDITS = {
    "static_activations": (lambda t, q: q.update(activation_scheme="static"), "activation_scheme 'static'"),
    "grid": (lambda t, q: t.update({"model.layers.0.mlp.up_proj.weight_scale_inv": torch.ones(3, 3)}),
             "model.layers.0.mlp.up_proj.weight_scale_inv"),
    "scale_without_weight": (lambda t, q: t.update({"model.layers.0.mlp.extra.weight_scale_inv": torch.ones(1, 1)}),
                             "model.layers.0.mlp.extra.weight"),
    "weight_without_scale": (_drop("model.layers.1.self_attn.o_proj.weight_scale_inv"),
                             "model.layers.1.self_attn.o_proj.weight"),
    "no_quantization_config": (None, "no quantization_config"),
    "other_method": (lambda t, q: q.update(quant_method="gptq"), "quant_method fp8, mxfp4, compressed-tensors only"),
}


@pytest.mark.parametrize("what", list(EDITS) + list(MXFP4_EDITS) + list(CT_EDITS))
def test_refused_by_name(what, tmp_path):
    edit, words = EDITS.get(what) or MXFP4_EDITS.get(what) or CT_EDITS[what]
    folder, out = tmp_path / "bad", tmp_path / "out"
    if what in CT_EDITS:
        _write_ct(CT_FORMATS_CASE, folder, edit)
    elif what in MXFP4_EDITS:
        _write_mxfp4(folder, edit)
    else:
        _write(FORMATS_CASE, folder, edit)
    if what == "no_quantization_config":
        config = json.loads((folder / "config.json").read_text())
        del config["quantization_config"]
        (folder / "config.json").write_text(json.dumps(config))
    assert_export_refused(folder, out, words, "--format", "onnx")

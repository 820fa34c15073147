"""Granite, OLMo-2, StarCoder2, Gemma, Gemma 2 and Gemma 3 text (models.py, after Qwen3): the decoder template's other families.

Their forward parity (ONNX Runtime and OpenVINO, every case of DEFAULT_CASES, left padding
included) is test_parity.py's and test_openvino.py's, since they are in models.VARIANTS_LIST; their
generation is in the matrices of test_generation.py and test_openvino.py. This file holds the
harness checks that make those parities mean something for the new features: each feature the
variants are built to exercise moves transformers' own logits by far more than the 1e-4 parity
tolerance when it is switched off (so a graph that ignored it would fail parity), and the new
variants really are collected by the parity suites. It also checks fp16 graphs of each new family,
and (QUIRKS) checkpoints whose config transformers reads differently from Llama's conventions:
a config key that is absent and defaults to something else in the family's config class, or a
value that transformers' modeling code ignores.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import models
from conftest import PARITY_ATOL, built_once

FAMILIES = {
    # variant: transformers architecture
    "granite": "GraniteForCausalLM",
    "olmo2": "Olmo2ForCausalLM",
    "starcoder2": "Starcoder2ForCausalLM",
    "starcoder2_nobias": "Starcoder2ForCausalLM",
    "gemma": "GemmaForCausalLM",
    "gemma_oldcfg": "GemmaForCausalLM",
    "gemma2": "Gemma2ForCausalLM",
    "gemma2_oldcfg": "Gemma2ForCausalLM",
    "gemma2_layer_types": "Gemma2ForCausalLM",
    "gemma3": "Gemma3ForCausalLM",
    "gemma3_final_softcap": "Gemma3ForCausalLM",
    "gemma3_linear": "Gemma3ForCausalLM",
    "gemma3_oldcfg_linear": "Gemma3ForCausalLM",
}

# left-padded, longer than every sliding window (4)
CASE = models.Case(2, 12, (0, 3))

_SLIDING, _FULL = "sliding_attention", "full_attention"

# (variant, what the feature is, config overrides that switch it off or change it)
FEATURES = [
    ("granite", "embedding_multiplier 3", {"embedding_multiplier": 1.0}),
    ("granite", "residual_multiplier 0.5", {"residual_multiplier": 1.0}),
    ("granite", "attention_multiplier 0.2 is the scale (not head_dim^-0.5)", {"attention_multiplier": 0.25}),
    ("granite", "logits_scaling 4", {"logits_scaling": 1.0}),
    ("olmo2", "rope_theta 500000", {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}),
    ("starcoder2", "sliding_window 4", {"sliding_window": None}),
    ("gemma2", "attn_logit_softcapping 8", {"attn_logit_softcapping": None}),
    ("gemma2", "final_logit_softcapping 5", {"final_logit_softcapping": None}),
    ("gemma2", "query_pre_attn_scalar 24 (not head_dim 16)", {"query_pre_attn_scalar": 16}),
    ("gemma2", "sliding_window 4", {"sliding_window": 64}),
    ("gemma2_layer_types", "explicit layer_types (not the default pattern)",
     {"layer_types": [_SLIDING, _FULL, _SLIDING]}),
    ("gemma3", "sliding_window 4", {"sliding_window": 64}),
    ("gemma3", "the full layer of the 3-layer pattern", {"layer_types": [_SLIDING] * 3}),
    ("gemma3", "query_pre_attn_scalar 12 (not head_dim 16)", {"query_pre_attn_scalar": 16}),
    ("gemma3", "local rope base 5000 (not the global 200000)",
     {"rope_parameters": {_FULL: {"rope_type": "default", "rope_theta": 200000.0},
                          _SLIDING: {"rope_type": "default", "rope_theta": 200000.0}}}),
    ("gemma3_final_softcap", "final_logit_softcapping 4", {"final_logit_softcapping": None}),
    ("gemma3_linear", "linear rope scaling on the global layers",
     {"rope_parameters": {_FULL: {"rope_type": "default", "rope_theta": 1000000.0},
                          _SLIDING: {"rope_type": "default", "rope_theta": 10000.0}}}),
    ("gemma3_linear", "no rope scaling on the local layers",
     {"rope_parameters": {_FULL: {"rope_type": "linear", "factor": 4.0, "rope_theta": 1000000.0},
                          _SLIDING: {"rope_type": "linear", "factor": 4.0, "rope_theta": 10000.0}}}),
]


def _logits(model_dir, inputs, **overrides) -> np.ndarray:
    model = models.load_reference_model(model_dir) if not overrides else \
        models.AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32,
                                                    attn_implementation="eager", **overrides).eval()
    for key, value in overrides.items():
        assert getattr(model.config, key) == value, f"override {key}={value!r} not applied: {getattr(model.config, key)!r}"
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(v) for k, v in inputs.items()}, use_cache=False)
    return out.logits.numpy()


def test_family_variants_join_the_parity_suites():
    """Every variant of these families is in VARIANTS_LIST with its architecture, so test_parity.py (ONNX, all
    its cases) and test_openvino.py (forward parity) run it."""
    import test_openvino
    import test_parity

    for name, arch in FAMILIES.items():
        assert name in models.VARIANTS, name
        variant = models.VARIANTS[name]
        assert variant.architecture == arch, (name, variant.architecture)
        assert arch in models.SUPPORTED_ARCHITECTURES, arch
        want = {f"{name}-{case.id}" for case in variant.cases}
        assert {c.id for c in variant.cases} >= {c.id for c in models.DEFAULT_CASES}, name
        for module in (test_parity, test_openvino):
            got = {p.id for p in module.PARITY_PARAMS if p.values[0] == name}
            assert got == want, f"{module.__name__}: {name} cases {sorted(got)} != {sorted(want)}"
        # at least one parity case is longer than every sliding window
        window = variant.config.get("sliding_window")
        if window:
            assert max(c.seq for c in variant.cases) > window, name


@pytest.mark.parametrize("name,feature,overrides",
                         [pytest.param(n, f, o, id=f"{n}-{f.split(' (')[0].replace(' ', '_')}") for n, f, o in FEATURES])
def test_feature_is_visible(checkpoints, name, feature, overrides):
    """Harness sanity: switching the feature off in transformers' own config moves the reference
    logits by >> the parity tolerance, so parity of the export proves the feature."""
    model_dir = checkpoints(name)
    inputs = models.make_inputs(CASE, models.VARIANTS[name].vocab_size)
    diff = float(np.abs(_logits(model_dir, inputs) - _logits(model_dir, inputs, **overrides)).max())
    print(f"{name}: {feature}: reference logits move by {diff:.3g}")
    assert diff > 100 * PARITY_ATOL, f"{name}: {feature} moves the reference logits by only {diff:.3g}"


def test_gemma_legacy_gelu_is_visible(checkpoints):
    """Harness sanity for gemma_oldcfg (hidden_act "gelu", which transformers' Gemma reads as the
    tanh approximation): the exact erf GELU would move the logits by more than the tolerance, so
    the twin check and gemma_oldcfg's parity prove the legacy name is read as tanh. (The two GELUs
    differ by < 3e-4 per activation, hence a smaller margin than the other features.)"""
    model_dir = checkpoints("gemma_oldcfg")
    inputs = models.make_inputs(CASE, models.VARIANTS["gemma_oldcfg"].vocab_size)
    import json

    assert json.loads((model_dir / "config.json").read_text())["hidden_act"] == "gelu"
    model = models.load_reference_model(model_dir)
    assert model.config.hidden_act == "gelu_pytorch_tanh", model.config.hidden_act
    with torch.no_grad():
        tanh = model(**{k: torch.from_numpy(v) for k, v in inputs.items()}, use_cache=False).logits.numpy()
        for layer in model.model.layers:
            layer.mlp.act_fn = torch.nn.GELU()  # exact (erf)
        exact = model(**{k: torch.from_numpy(v) for k, v in inputs.items()}, use_cache=False).logits.numpy()
    diff = float(np.abs(tanh - exact).max())
    print(f"gemma_oldcfg: exact vs tanh GELU: {diff:.3g}")
    assert diff > 3 * PARITY_ATOL, f"exact vs tanh GELU moves the reference logits by only {diff:.3g}"


@pytest.mark.parametrize("name,want", [
    ("gemma2_oldcfg", [_SLIDING, _FULL]),
    ("gemma3_oldcfg_linear", [_SLIDING, _SLIDING, _FULL]),
])
def test_old_format_layer_pattern(checkpoints, name, want):
    """Harness sanity: the old-format Gemma 2 / Gemma 3 checkpoints carry no layer_types, and
    transformers derives the expected pattern (Gemma 2: alternating from sliding; Gemma 3: from
    sliding_window_pattern 3)."""
    import json

    cfg = json.loads((checkpoints(name) / "config.json").read_text())
    assert "layer_types" not in cfg and "_sliding_window_pattern" not in cfg, sorted(cfg)
    if name.startswith("gemma3"):
        assert cfg["sliding_window_pattern"] == 3 and "rope_local_base_freq" in cfg and cfg["rope_scaling"], cfg
    assert models.load_reference_model(checkpoints(name)).config.layer_types == want


# ---- configs transformers reads differently from what hfx assumes ---------------------------------
#
# Checkpoints outside VARIANTS_LIST (each shows one divergence, so it is tested once, here): hfx's
# ONNX export must give transformers' logits for them like for any other checkpoint.

QUIRKS = {
    # Gemma 3's attention never passes attn_logit_softcapping to the attention function
    # (transformers 5.24 modeling_gemma3.py: Gemma3Attention stores self.attn_logit_softcapping but
    # calls attention_interface(..., scaling=..., sliding_window=...) without softcap=), so the
    # value is ignored; the final soft-cap is applied (gemma3_final_softcap).
    "gemma3_attn_softcap": (
        models.Variant("gemma3_attn_softcap", "gemma3", dict(models.GEMMA3, attn_logit_softcapping=6.0),
                       "gemma3 with attn_logit_softcapping 6 (ignored by transformers)",
                       embed_std=models.TIED_EMBED_STD, norm_offset=-0.5),
        {"attn_logit_softcapping": 6.0}),
    # A Gemma 2 config.json without the soft-cap keys: Gemma2Config's defaults are
    # attn_logit_softcapping 50, final_logit_softcapping 30 (not "none").
    "gemma2_default_softcaps": (
        models.Variant("gemma2_default_softcaps", "gemma2",
                       dict(models.GEMMA2, attn_logit_softcapping=50.0, final_logit_softcapping=30.0),
                       "gemma2, old format without attn_logit_softcapping / final_logit_softcapping keys",
                       embed_std=models.TIED_EMBED_STD, norm_offset=-0.5, config_format="old",
                       old_extra={"attn_logit_softcapping": None, "final_logit_softcapping": None}),
        {"attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0}),
    # An OLMo-2 config.json without rms_norm_eps: Olmo2Config's default is 1e-5 (not Llama's 1e-6).
    # Small embeddings: OLMo-2 has no pre-norm, so q_norm/k_norm see them directly and eps matters.
    "olmo2_default_eps": (
        models.Variant("olmo2_default_eps", "olmo2", dict(models.OLMO2, rms_norm_eps=1e-5),
                       "olmo2, old format without rms_norm_eps, embeddings std 0.003",
                       config_format="old", old_extra={"rms_norm_eps": None}, embed_std=0.003),
        {"rms_norm_eps": 1e-5}),
}

QUIRK_CASES = (models.Case(1, 7), models.Case(3, 12, (0, 3, 11)))


@pytest.fixture(scope="module")
def quirk_checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("quirk_checkpoints")
    def make(name):
        return models.save_checkpoint(QUIRKS[name][0], root / name)
    return built_once(make)


@pytest.mark.parametrize("name", list(QUIRKS))
def test_quirk_is_what_transformers_does(quirk_checkpoints, name):
    """Harness sanity: transformers loads the checkpoint with the values QUIRKS says, and those
    values matter (the reference logits move by >> the tolerance without them)."""
    import json

    model_dir = quirk_checkpoints(name)
    variant, loaded = QUIRKS[name]
    cfg = json.loads((model_dir / "config.json").read_text())
    model = models.load_reference_model(model_dir)
    for key, value in loaded.items():
        assert getattr(model.config, key) == value, (key, getattr(model.config, key))
    inputs = models.make_inputs(CASE, variant.vocab_size)
    base = _logits(model_dir, inputs)
    if name == "gemma3_attn_softcap":
        assert cfg["attn_logit_softcapping"] == 6.0, cfg
        # ignored: the same logits as with no attention soft-cap at all
        other = _logits(model_dir, inputs, attn_logit_softcapping=None)
        assert float(np.abs(base - other).max()) == 0.0, "transformers' Gemma 3 now applies attn_logit_softcapping"
        # what applying it (as Gemma 2 does) would give instead: far from transformers
        from transformers.models.gemma2 import modeling_gemma2

        capped = _softcapped_gemma3_logits(model_dir, inputs, 6.0, modeling_gemma2.eager_attention_forward)
        diff = float(np.abs(capped - base).max())
        print(f"{name}: applying the attention soft-cap would move the logits by {diff:.3g}")
        assert diff > 100 * PARITY_ATOL
    else:
        for key in loaded:
            assert key not in cfg, f"{key} is in {model_dir / 'config.json'}"
        other = {k: (None if "softcapping" in k else 1e-6) for k in loaded}
        diff = float(np.abs(base - _logits(model_dir, inputs, **other)).max())
        print(f"{name}: hfx's default ({other}) would move the logits by {diff:.3g}")
        assert diff > 100 * PARITY_ATOL


def _softcapped_gemma3_logits(model_dir, inputs, softcap, attention_fn) -> np.ndarray:
    """transformers' Gemma 3 with the attention scores soft-capped (Gemma 2's eager attention)."""
    from transformers.models.gemma3 import modeling_gemma3

    def capped(*args, **kwargs):
        kwargs["softcap"] = softcap
        return attention_fn(*args, **kwargs)

    saved = modeling_gemma3.eager_attention_forward
    modeling_gemma3.eager_attention_forward = capped
    try:
        return _logits(model_dir, inputs)
    finally:
        modeling_gemma3.eager_attention_forward = saved


@pytest.mark.parametrize("name", list(QUIRKS))
def test_quirk_parity(quirk_checkpoints, tmp_path, name):
    """hfx's ONNX export of the checkpoint gives transformers' logits (within 1e-4)."""
    from conftest import assert_logits_close, export, run_exported

    model_dir = quirk_checkpoints(name)
    variant = QUIRKS[name][0]
    export(model_dir, tmp_path / "onnx")
    for case in QUIRK_CASES:
        inputs = models.make_inputs(case, variant.vocab_size)
        assert_logits_close(run_exported(tmp_path / "onnx", inputs), models.reference_logits(model_dir, inputs),
                            f"{name} {case.id}")


# ---- fp16 graphs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["granite", "olmo2", "starcoder2", "gemma", "gemma2", "gemma3"])
def test_fp16_export_matches_transformers_fp16(checkpoints, tmp_path, name):
    """--dtype fp16 for each new family (Gemma: x*(1+w) norms in float32, soft-caps; StarCoder2:
    LayerNorm with bias) against transformers run in float16 on CPU, within test_dtype.py's
    fp16-sized bound, real (unpadded) positions."""
    import onnx

    from conftest import export, ort_session, run_ort
    from test_dtype import FP16_ATOL

    model_dir = checkpoints(name)
    variant = models.VARIANTS[name]
    out = tmp_path / "fp16"
    export(model_dir, out, "--dtype", "fp16")
    graph = onnx.load(str(out / "model.onnx"), load_external_data=False).graph
    assert graph.output[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
    session = ort_session(out / "model.onnx")
    ref = models.AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float16, attn_implementation="eager")
    for case in (models.Case(1, 7), models.Case(3, 12, (0, 4, 7))):
        inputs = models.make_inputs(case, variant.vocab_size)
        got = run_ort(session, inputs).astype(np.float32)
        with torch.no_grad():
            want = ref(**{k: torch.from_numpy(v) for k, v in inputs.items()}).logits.float().numpy()
        mask = inputs["attention_mask"].astype(bool)
        diff = float(np.abs(got - want)[mask].max())
        print(f"{name} fp16 {case.id}: max abs diff {diff:.3g}")
        assert diff <= FP16_ATOL, f"{name} fp16 {case.id}: max abs diff {diff:.3g} > {FP16_ATOL}"

"""The architectures and heads decoders_encoders_models.py lists: Phi-3 (fused qkv / gate_up, partial rotary, longrope), GPT-NeoX, GPT-2, Mixtral and
Qwen3-MoE (router top-k, per-expert and fused 3-D expert tensors), and the BERT-style encoders
(BERT, RoBERTa, XLM-RoBERTa; bare models and sequence-classification heads) against transformers.

The checkpoints are decoders_encoders_models.py's (tiny, explicit configs, fixed seeds, weights drawn large
enough that a wrong feature cannot hide under the tolerance; each one loaded back by transformers
to exactly the saved model). For every checkpoint:

  * forward parity through ONNX Runtime (`hfx export --format onnx --dynamic`, one export for
    every shape) and OpenVINO (`--format openvino --dynamic`, CPU, f32 inference precision): EVERY
    element of EVERY output within 1e-4 of transformers' eager float32 (padded positions
    included), over left-padded / gapped-position decoder batches and right-padded encoder
    batches with non-zero token_type_ids;
  * the full ONNX checker and the graph's inputs / outputs.

Decoders also generate: 32 greedy tokens (no EOS) through examples/generate_onnx.py (dynamic and
static cache) and examples/generate_openvino.py (stateful), batch 1 and a left-padded batch 3 with
prompts longer than every sliding window, token for token equal to transformers' generate()
(dynamic cache for the dynamic and stateful exports, static cache for the static one) and every
step's logits within 1e-4. The loops are the examples' own Export / generate, driven in-process
(the scripts' command lines are test_generation.py's and test_openvino.py's).

Harness checks make the parities mean something: twins (another layout or config spelling of the
same model) give the same reference, and each feature moves transformers' own outputs by far more
than the tolerance when it is switched off.
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import onnx
import pytest
import torch
import transformers

import models
import decoders_encoders_models as W
import decoder_lineages_models as L
from conftest import PARITY_ATOL, REPO, Exports, assert_logits_close, call_pt2, describe, load_pt2, run_hfx
from genutil import MAX_CACHE_LEN, NEW_TOKENS, GenExports, left_pad, positions, prompts
from genutil import References as GenReferences
from genutil import compare_generation as onnx_compare_generation
from ovutil import OVExports, core, load_loop_module
from ovutil import compare_generation as ov_compare_generation
from etutil import worker as et_worker

NO_EOS = {"bos_token_id": 1, "eos_token_id": None}
PAD = models.PAD_TOKEN
BATCH1 = (7,)
BATCH3 = (10, 5, 1)          # left padding 0, 5, 9; longer than every sliding window (4)
LONG3 = (20, 17, 3)          # Phi-3 longrope: already past original_max_position_embeddings 16

DEC_INPUTS = ["input_ids", "attention_mask", "position_ids"]
ENC_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


# ---- session fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def b_ckpts(tmp_path_factory) -> W.Checkpoints:
    return W.Checkpoints(tmp_path_factory.mktemp("decoders_encoders_checkpoints"))


@pytest.fixture(scope="session")
def b_refs(b_ckpts) -> W.References:
    return W.References(b_ckpts)


@pytest.fixture(scope="session")
def b_onnx(tmp_path_factory, b_ckpts) -> Exports:
    return Exports(tmp_path_factory.mktemp("de_onnx"), b_ckpts)


@pytest.fixture(scope="session")
def b_ov(tmp_path_factory, b_ckpts) -> OVExports:
    return OVExports(tmp_path_factory.mktemp("de_ov"), b_ckpts)


@pytest.fixture(scope="session")
def b_gen(tmp_path_factory, b_ckpts) -> GenExports:
    return GenExports(tmp_path_factory.mktemp("de_gen"), b_ckpts)


@pytest.fixture(scope="session")
def b_dyn(tmp_path_factory, b_ckpts) -> GenExports:
    return GenExports(tmp_path_factory.mktemp("de_dynamo_gen"), b_ckpts, fmt="dynamo")


@pytest.fixture(scope="session")
def b_et(tmp_path_factory, b_ckpts):
    """--format executorch generation exports: batch bounded by 4, every length by max_cache_len."""
    root = tmp_path_factory.mktemp("de_executorch_gen")
    cfg = root / "bounds.json"
    cfg.write_text(json.dumps({"export_format": "executorch", "dynamic_shapes": {"input_ids": {
        "0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": MAX_CACHE_LEN}}}}))
    exports = GenExports(root, b_ckpts, fmt="executorch")
    return lambda name, *flags: exports(name, *flags, "--config", str(cfg))


@pytest.fixture(scope="session")
def b_gen_refs(b_ckpts) -> GenReferences:
    return GenReferences(b_ckpts)


class _Loops:
    """The examples' decode loops, loaded once, and their Export objects (sessions / compiled
    models) once per export directory."""

    def __init__(self):
        spec = importlib.util.spec_from_file_location("generate_onnx", REPO / "examples" / "generate_onnx.py")
        self.onnx = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.onnx)
        self.ov = load_loop_module()
        spec = importlib.util.spec_from_file_location("generate_torch", REPO / "examples" / "generate_torch.py")
        self.torch = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.torch)
        self._exports: dict = {}

    def generate(self, backend: str, out_dir, rows, n: int = NEW_TOKENS):
        if backend == "executorch":  # the loop runs in the executorch venv's worker
            tokens, logits = et_worker().generate(out_dir, rows, n, [], PAD)
            return tokens, np.asarray(logits)
        mod = {"onnx": self.onnx, "openvino": self.ov, "dynamo": self.torch}[backend]
        key = (backend, str(out_dir))
        if key not in self._exports:
            self._exports[key] = mod.Export(out_dir)
        tokens, logits = mod.generate(self._exports[key], rows, n, [], PAD)
        return [list(map(int, t)) for t in tokens], np.asarray(logits)


@pytest.fixture(scope="session")
def loops() -> _Loops:
    return _Loops()


# ---- comparison --------------------------------------------------------------------------------------


def assert_outputs_close(got: dict, want: dict, label: str) -> None:
    """Every output, every element within PARITY_ATOL (2-D outputs compared as [B, 1, N])."""
    assert set(got) == set(want), f"{label}: outputs {sorted(got)}, transformers {sorted(want)}"
    for name in sorted(want):
        g, w = np.asarray(got[name]), want[name]
        if w.ndim == 2:
            g, w = g[:, None] if g.ndim == 2 else g, w[:, None]
        assert_logits_close(g, w, f"{label} {name}")


def _feed(inputs: dict) -> dict:
    return {k: np.ascontiguousarray(v, dtype=np.int64) for k, v in inputs.items()}


# ---- harness checks (transformers only) ----------------------------------------------------------


TWINS = [s.name for s in W.SPECS_LIST if s.twin]


@pytest.mark.parametrize("name", TWINS)
def test_twin_checkpoints_agree(b_ckpts, b_refs, name):
    """Harness sanity: a checkpoint in another layout (fused experts, legacy GPT-2 buffers, hub
    names) or config spelling (Phi-3 "su" / "yarn", GPT-NeoX rotary_pct / no rotary key) is the
    same model as its twin for transformers, on every case of the spec."""
    spec = W.SPECS[name]
    for case in spec.cases:
        inputs = W.inputs_for(spec, case)
        a, b = b_refs(name, case, inputs), b_refs(spec.twin, case, inputs)
        diff = max(float(np.abs(a[k] - b[k]).max()) for k in a)
        assert diff <= 1e-5, f"{name} vs {spec.twin} at {case.id}: {diff:.3g}"


def _phi3_rope(**kw):
    return dict(W.PHI3_LONGROPE, **kw)


_LONG, _SHORT = models.Case(2, 20, (3, 8)), models.Case(2, 20, (5, 8))
_GAPPED = models.Case(2, 10, gapped=True)
_PAD3 = models.Case(3, 12, (0, 3, 11))

# (spec, case, what the feature is, config overrides that switch it off or change it)
FEATURES = [
    ("phi3_longrope", _LONG, "long_factor past the original length", {"rope_parameters": _phi3_rope(long_factor=W.SHORT_FACTOR)}),
    ("phi3_longrope", _GAPPED, "long factors from max(position_ids), not the length",
     {"rope_parameters": _phi3_rope(long_factor=W.SHORT_FACTOR)}),
    ("phi3_longrope", _SHORT, "short_factor up to the original length", {"rope_parameters": _phi3_rope(short_factor=[1.0] * 4)}),
    ("phi3_longrope", _PAD3, "default attention_factor sqrt(1.5)", {"rope_parameters": _phi3_rope(attention_factor=1.0)}),
    ("phi3_longrope", _PAD3, "partial rotary (4 pass-through dims of 8)",
     {"rope_parameters": _phi3_rope(partial_rotary_factor=1.0, short_factor=W.SHORT_FACTOR * 2, long_factor=W.LONG_FACTOR * 2)}),
    ("phi3_factor", _PAD3, "explicit factor 2 (not 64/16)", {"rope_parameters": _phi3_rope()}),
    ("phi3_attn_factor", _PAD3, "explicit attention_factor 0.75", {"rope_parameters": _phi3_rope()}),
    ("phi3_swa", _PAD3, "sliding_window 4", {"sliding_window": None}),
    ("neox_parallel", _PAD3, "parallel residual", {"use_parallel_residual": False}),
    ("neox_parallel", _PAD3, "rotary 0.25 of the head",
     {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0}}),
    ("neox_sequential", _PAD3, "sequential residual", {"use_parallel_residual": True}),
    ("neox_sequential", _PAD3, "rotary 0.5 of the head",
     {"rope_parameters": {"rope_type": "default", "rope_theta": 20000.0, "partial_rotary_factor": 0.25}}),
    ("neox_sequential", _PAD3, "rope_theta 20000",
     {"rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5}}),
    ("gpt2_scaled", _PAD3, "scale_attn_by_inverse_layer_idx", {"scale_attn_by_inverse_layer_idx": False}),
    ("gpt2_noscale", _PAD3, "scale_attn_weights false", {"scale_attn_weights": True}),
    ("gpt2_noscale", _PAD3, "exact gelu (not gelu_new)", {"activation_function": "gelu_new"}),
    ("mixtral", _PAD3, "top-2 routing (not top-1)", {"num_experts_per_tok": 1}),
    ("mixtral", _PAD3, "sliding_window 4", {"sliding_window": None}),
    ("qwen3_moe", _PAD3, "norm_topk_prob false", {"norm_topk_prob": True}),
    ("qwen3_moe", _PAD3, "top-2 routing (not top-3)", {"num_experts_per_tok": 3}),
    ("qwen3_moe_norm_step2", _PAD3, "norm_topk_prob true", {"norm_topk_prob": False}),
    ("olmo_clip", _PAD3, "clip_qkv 0.6", {"clip_qkv": None}),
    ("olmo3", _PAD3, "sliding window 4 on layers 0-2", {"layer_types": ["full_attention"] * 4}),
    ("olmo3", _PAD3, "the sliding layers' own rope theta",
     {"rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 500000.0},
                          "full_attention": {"rope_type": "default", "rope_theta": 500000.0}}}),
    ("olmo3_yarn", _LONG, "YaRN on the full layer",
     {"rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                          "full_attention": {"rope_type": "default", "rope_theta": 500000.0}}}),
    ("olmo3_yarn", _PAD3, "attention biases", {"attention_bias": False}),
    ("smollm3", _PAD3, "layer 3 without rope", {"no_rope_layers": [1, 1, 1, 1]}),
    ("smollm3_swa", _PAD3, "no rope on layers 0 and 2", {"no_rope_layers": [1, 1, 1, 1]}),
    ("smollm3_swa", _PAD3, "sliding_window 4", {"layer_types": ["full_attention"] * 4}),
    ("phi_qk", _PAD3, "qk_layernorm", {"qk_layernorm": False}),
    ("stablelm_par", _PAD3, "use_qkv_bias", {"use_qkv_bias": False}),
    ("cohere", _PAD3, "logit_scale 0.25", {"logit_scale": 1.0}),
    ("exaone4", _PAD3, "sliding window 4 and no rope on full layers", {"sliding_window": None, "layer_types": ["full_attention"] * 4}),
    ("stablelm_qk", _PAD3, "qk_layernorm", {"qk_layernorm": False}),
    ("cohere_qk", _PAD3, "use_qk_norm", {"use_qk_norm": False}),
    ("deepseek_v3", _PAD3, "group-limited routing (2 of 4 groups)", {"n_group": 1, "topk_group": 1}),
    ("deepseek_v3", _PAD3, "routed_scaling_factor 2.5", {"routed_scaling_factor": 1.0}),
    ("deepseek_v3", _PAD3, "rope_interleave", {"rope_interleave": False}),
    ("deepseek_v3_yarn", _PAD3, "mscale_all_dim 1 (attention scale)",
     {"rope_parameters": dict(W.DEEPSEEK_YARN, mscale_all_dim=0.0)}),
    ("deepseek_v2", _PAD3, "group_limited_greedy", {"topk_method": "greedy"}),
    ("olmoe", _PAD3, "clip_qkv 0.6 after the q/k norms", {"clip_qkv": None}),
    ("olmoe_norm", _PAD3, "norm_topk_prob", {"norm_topk_prob": False}),
    ("gpt_oss", _PAD3, "swiglu_limit 0.6", {"swiglu_limit": 7.0}),
    ("gpt_oss", _PAD3, "swiglu_alpha 1.702", {"swiglu_alpha": 1.0}),
    ("gpt_oss", _PAD3, "sliding window 4", {"layer_types": ["full_attention"] * 4}),
    ("gpt_oss", _LONG, "YaRN factor 4", {"rope_parameters": {"rope_type": "default", "rope_theta": 150000.0}}),
    *L.FEATURES,
]


def _reference_with(model_dir, spec, inputs, overrides):
    """transformers' outputs with config overrides; a dotted key ("attn_config.softmax_scale") sets a field of a
    nested config (MPT's) before the model is built, as its modules read them then."""
    cls = models.causal_lm_class(model_dir)
    flat = {k: v for k, v in overrides.items() if "." not in k}
    kwargs = dict(flat)
    if len(flat) < len(overrides):
        config = transformers.AutoConfig.from_pretrained(str(model_dir), **flat)
        for key, value in overrides.items():
            if "." in key:
                outer, inner = key.split(".", 1)
                setattr(getattr(config, outer), inner, value)
        kwargs = {"config": config}
    model = cls.from_pretrained(str(model_dir), dtype=torch.float32,
                                attn_implementation=models.checkpoint_attention(model_dir), **kwargs).eval()
    for key, value in overrides.items():
        got = model.config
        for part in key.split("."):
            got = getattr(got, part)
        assert got == value or key == "rope_parameters", (key, got)
    if "rope_parameters" in overrides:
        got = {k: v for k, v in model.config.rope_parameters.items() if k != "type"}
        assert all(got[k] == v for k, v in overrides["rope_parameters"].items()), got
    return W.outputs(model, spec, inputs)


@pytest.mark.parametrize("name,case,feature,overrides",
                         [pytest.param(n, c, f, o, id=f"{n}-{f.split(' (')[0].replace(' ', '_')}") for n, c, f, o in FEATURES])
def test_feature_is_visible(b_ckpts, b_refs, name, case, feature, overrides):
    """Harness sanity: switching the feature off in transformers' own config moves the reference
    logits by >> the tolerance, so parity of the export proves the feature."""
    spec = W.SPECS[name]
    inputs = W.inputs_for(spec, case)
    base = b_refs(name, case, inputs)["logits"]
    other = _reference_with(b_ckpts(name), spec, inputs, overrides)["logits"]
    diff = float(np.abs(base - other).max())
    print(f"{name} {case.id}: {feature}: reference logits move by {diff:.3g}")
    # exact vs tanh GELU differ by < 3e-4 per activation: a smaller (still > 1e-4) margin there
    margin = 5 if "gelu" in feature else 100
    assert diff > margin * PARITY_ATOL, f"{name}: {feature} moves the reference logits by only {diff:.3g}"


def test_longrope_switch_is_per_call_max_position(b_refs):
    """Documents what the graph must reproduce: transformers picks the short or long factors for
    a whole forward call from max(position_ids) + 1 over the batch (not the sequence length, not
    per row): a 20-token batch whose longest row reaches position 14 is short, one reaching 16 is
    long for every row; one row alone (short) differs from itself in a long batch."""
    name, spec = "phi3_longrope", W.SPECS["phi3_longrope"]
    model = b_refs.model(name)

    def run(inputs):
        return W.outputs(model, spec, inputs)["logits"]

    short_batch = models.make_inputs(_SHORT, spec.vocab_size)  # max position 14
    assert short_batch["position_ids"].max() + 1 == 15
    long_batch = models.make_inputs(_LONG, spec.vocab_size)    # max position 16
    assert long_batch["position_ids"].max() + 1 == 17
    # row 1 of the long batch (12 real tokens, positions 0..11) alone is short
    alone = {k: v[1:2, 8:] for k, v in long_batch.items()}
    diff = float(np.abs(run(long_batch)[1:2, 8:] - run(alone)).max())
    assert diff > 100 * PARITY_ATOL, f"row alone (short) vs in a long batch: {diff:.3g}"
    # row 1 of the short batch alone: the same short factors
    alone = {k: v[1:2, 8:] for k, v in short_batch.items()}
    assert float(np.abs(run(short_batch)[1:2, 8:] - run(alone)).max()) <= 1e-5


_ENC_PAD3 = W.EncCase(3, 12, (12, 9, 1), types=True)


def _enc_inputs(name, case):
    spec = W.SPECS[name]
    return W.make_encoder_inputs(case, spec.vocab_size, spec.config["pad_token_id"])


@pytest.mark.parametrize("name", ["bert", "roberta_cls"])
def test_encoder_features_are_visible(b_refs, name):
    """Harness sanity for the encoders: token_type_ids, the attention mask, and the position ids
    (BERT 0..S-1; RoBERTa counted from pad_token_id + 1 over non-pad ids, so a pad id inside the
    text shifts the later positions) each move transformers' outputs by >> the tolerance."""
    spec = W.SPECS[name]
    model = b_refs.model(name)
    ref = lambda inputs: W.outputs(model, spec, inputs)  # noqa: E731
    inputs = _enc_inputs(name, _ENC_PAD3)
    base = ref(inputs)
    key = "logits" if spec.kind == "classifier" else "last_hidden_state"

    def moved(other):
        return float(np.abs(base[key] - ref(other)[key]).max())

    no_types = dict(inputs, token_type_ids=np.zeros_like(inputs["token_type_ids"]))
    assert moved(no_types) > 100 * PARITY_ATOL
    no_mask = dict(inputs, attention_mask=np.ones_like(inputs["attention_mask"]))
    assert moved(no_mask) > 100 * PARITY_ATOL
    case = W.EncCase(2, 11, (11, 8), pad_inside=True)
    inputs = _enc_inputs(name, case)
    base = ref(inputs)
    pad = spec.config["pad_token_id"]
    ids = torch.from_numpy(inputs["input_ids"])
    # BERT: 1..S instead of 0..S-1; RoBERTa: pad+1.. without skipping the pad id inside the text
    other_pos = np.broadcast_to(np.arange(case.seq) + pad + 1, ids.shape).copy()
    if name != "bert":
        from transformers.models.roberta.modeling_roberta import RobertaEmbeddings

        want = RobertaEmbeddings.create_position_ids_from_input_ids(ids, pad).numpy()
        assert not np.array_equal(want, other_pos), "harness: the pad id inside the text changes nothing"
    feed = {k: torch.from_numpy(v) for k, v in inputs.items()}
    with torch.no_grad():
        out = model(**feed, position_ids=torch.from_numpy(other_pos))
    other = out.logits if spec.kind == "classifier" else out.last_hidden_state
    diff = float(np.abs(base[key] - other.numpy()).max())
    assert diff > 100 * PARITY_ATOL, f"{name}: other position ids move the outputs by only {diff:.3g}"


def test_mpnet_relative_bias_is_visible(b_refs):
    """MPNet's relative position table zeroed, or the pad id inside the text, moves transformers' outputs by >> the
    tolerance (the bias and the RoBERTa positions are each proven by parity)."""
    spec = W.SPECS["mpnet"]
    model = b_refs.model("mpnet")
    case = W.EncCase(2, 11, (11, 8), pad_inside=True)
    inputs = _enc_inputs("mpnet", case)
    base = W.outputs(model, spec, inputs)["last_hidden_state"]
    feed = {k: torch.from_numpy(v) for k, v in inputs.items()}
    table = model.encoder.relative_attention_bias.weight
    saved = table.detach().clone()
    try:
        with torch.no_grad():
            table.zero_()
            got = model(**feed).last_hidden_state.numpy()
    finally:
        with torch.no_grad():
            table.copy_(saved)
    assert float(np.abs(base - got).max()) > 100 * PARITY_ATOL
    with torch.no_grad():
        plain = model(**feed, position_ids=torch.arange(case.seq).expand(2, -1) + 2).last_hidden_state.numpy()
    assert float(np.abs(base - plain).max()) > 100 * PARITY_ATOL


_ROPE_SAME = {"full_attention": {"rope_type": "default", "rope_theta": 160000.0},
              "sliding_attention": {"rope_type": "default", "rope_theta": 160000.0}}
# (spec, what the feature is, config overrides that switch it off)
ENC_FEATURES = [
    ("modernbert", "local layers' window |i - j| <= 2", {"local_attention": 64}),
    ("modernbert", "local layers' rope base 10000", {"rope_parameters": _ROPE_SAME}),
    ("modernbert_biased", "layer_types (global 0 and 2)", {"layer_types": ["full_attention"] * 4}),
    ("modernbert_cls_mean", "classifier_pooling mean", {"classifier_pooling": "cls"}),
    ("distilbert_relu", "relu activation", {"activation": "gelu"}),
    ("deberta_v3", "relative attention", {"relative_attention": False}),
    ("deberta_v3", "norm_rel_ebd layer_norm", {"norm_rel_ebd": "none"}),
    ("deberta_v2", "p2c term", {"pos_att_type": ["c2p"]}),
    ("deberta_v2", "c2p term", {"pos_att_type": ["p2c"]}),
]


@pytest.mark.parametrize("name,feature,overrides", ENC_FEATURES, ids=[f"{n}-{f.split(' ')[0]}" for n, f, _ in ENC_FEATURES])
def test_encoder_config_features_are_visible(b_ckpts, b_refs, name, feature, overrides):
    """Harness sanity for the later encoders: switching the feature off in transformers' own config
    moves its outputs by >> the tolerance, so parity of the export proves it."""
    spec = W.SPECS[name]
    case = W.EncCase(3, 12, (12, 9, 1))
    inputs = W.inputs_for(spec, case)
    base = b_refs(name, case, inputs)
    model_cls = type(b_refs.model(name))
    other = model_cls.from_pretrained(str(b_ckpts(name)), dtype=torch.float32, attn_implementation="eager",
                                      **overrides).eval()
    got = W.outputs(other, spec, inputs)
    diff = max(float(np.abs(base[k] - got[k]).max()) for k in base)
    assert diff > 100 * PARITY_ATOL, f"{name}: {feature} moves the reference by only {diff:.3g}"


# ---- forward parity: ONNX Runtime and OpenVINO -------------------------------------------------------

PARITY_PARAMS = [pytest.param(s.name, c, id=f"{s.name}-{c.id}") for s in W.SPECS_LIST for c in s.cases]
# the torch formats: every spec but the second variants L.TORCH_SAMPLED leaves to their lineage's first
TORCH_PARITY_PARAMS = [pytest.param(s.name, c, id=f"{s.name}-{c.id}") for s in W.SPECS_LIST for c in s.cases
                       if s.name not in L.TORCH_SAMPLED]


def test_torch_sampled_specs_have_a_representative():
    """Each spec whose torch-format parity is sampled away shares its architecture with an earlier spec that runs them."""
    for name in L.TORCH_SAMPLED:
        arch = W.SPECS[name].arch
        first = next(s.name for s in W.SPECS_LIST if s.arch == arch)
        assert first != name and first not in L.TORCH_SAMPLED, (name, first)


def _onnx_outputs(b_onnx, name, inputs) -> dict:
    exported = b_onnx(name)
    sess = b_onnx.session(exported)
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, _feed(inputs))))


@pytest.mark.parametrize("name,case", PARITY_PARAMS)
def test_onnx_parity(b_onnx, b_refs, name, case):
    spec = W.SPECS[name]
    inputs = W.inputs_for(spec, case)
    assert_outputs_close(_onnx_outputs(b_onnx, name, inputs), b_refs(name, case, inputs), f"{name} {case.id}")


# the seed's loader: each architecture's first spec, its case of a padded batch (else its last)
SEED_LOADER_PARAMS = [pytest.param(s.name, id=s.name) for i, s in enumerate(W.SPECS_LIST)
                      if all(t.arch != s.arch for t in W.SPECS_LIST[:i])]


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", SEED_LOADER_PARAMS)
def test_seed_loader_calls_every_architecture(b_onnx, b_ov, b_refs, name, fmt):
    """transformers.exporters' own ExportedModel.from_pretrained on hfx's plain ONNX and OpenVINO exports of every
    architecture, called with keywords as the model (its runners over the export.json specs; OpenVINO at f32, as its
    runner takes it): the model's output class, each output transformers' forward returns within 1e-4."""
    from transformers.exporters import ExportedModel
    spec = W.SPECS[name]
    case = next((c for c in spec.cases if c.batch > 1 and getattr(c, "pads", None)), spec.cases[-1])
    inputs = W.inputs_for(spec, case)
    out = b_onnx(name).out_dir if fmt == "onnx" else b_ov(name, "--dynamic")
    runner = {"config": {"INFERENCE_PRECISION_HINT": "f32"}} if fmt == "openvino" else {}
    got = ExportedModel.from_pretrained(out, **runner)(**{k: torch.from_numpy(np.asarray(v, np.int64))
                                                          for k, v in inputs.items()})
    want = b_refs(name, case, inputs)
    assert_outputs_close({k: np.asarray(getattr(got, k)) for k in want}, want,
                         f"{name} {case.id} {fmt} (the seed's loader)")


class _DynamoPrograms:
    """--format dynamo exports of the checkpoints of decoders_encoders_models.py, loaded once (or the CLI's refusal)."""

    def __init__(self):
        self._p: dict = {}

    def __call__(self, b_ckpts, tmp_path_factory, name):
        if name not in self._p:
            out = tmp_path_factory.mktemp("de_dynamo") / name
            proc = run_hfx(["export", b_ckpts(name), out, "--format", "dynamo", "--dynamic", "--quiet"])
            if proc.returncode:
                self._p[name] = proc
            else:
                outs = json.loads((out / "export.json").read_text())["components"]["model"]["metadata"]["output_names"]
                self._p[name] = (load_pt2(out / "model.pt2"), outs)
        return self._p[name]


_dynamo = _DynamoPrograms()


@pytest.mark.parametrize("name,case", TORCH_PARITY_PARAMS)
def test_dynamo_parity(b_ckpts, b_refs, tmp_path_factory, name, case):
    """torch.export.load of hfx's .pt2, `.module()` against transformers (every output within
    1e-4): Phi-3, GPT-NeoX, GPT-2, the mixtures of experts, the encoders and classifiers."""
    spec = W.SPECS[name]
    got = _dynamo(b_ckpts, tmp_path_factory, name)
    assert isinstance(got, tuple), describe(got)
    ep, names = got
    inputs = W.inputs_for(spec, case)
    outs = call_pt2(ep, _feed(inputs))
    assert_outputs_close({n: o.detach().numpy() for n, o in zip(names, outs)}, b_refs(name, case, inputs),
                         f"[dynamo] {name} {case.id}")


class _ExecutorchPrograms:
    """--format executorch exports of the checkpoints of decoders_encoders_models.py, batch and sequence bounded to fit
    every case (or the CLI's refusal)."""

    def __init__(self):
        self._p: dict = {}

    def __call__(self, b_ckpts, tmp_path_factory, name, backend):
        if (name, backend) not in self._p:
            out = tmp_path_factory.mktemp("de_executorch") / name
            cases = W.SPECS[name].cases
            cfg = out.parent / "cfg.json"
            cfg.write_text(json.dumps({"export_format": "executorch", "backend": backend, "dynamic_shapes": {"input_ids": {
                "0": {"name": "batch", "max": max(c.batch for c in cases)},
                "1": {"name": "sequence", "max": max(c.seq for c in cases)}}}}))
            proc = run_hfx(["export", b_ckpts(name), out, "--config", cfg, "--quiet"])
            self._p[name, backend] = proc if proc.returncode else out
        return self._p[name, backend]


_executorch = _ExecutorchPrograms()


@pytest.mark.parametrize("backend", ("portable", "xnnpack"))
@pytest.mark.parametrize("name,case", TORCH_PARITY_PARAMS)
def test_executorch_parity(b_ckpts, b_refs, tmp_path_factory, name, case, backend):
    """hfx's .pte in executorch.runtime (the portable kernels, or XNNPACK's linears) against
    transformers (every output within 1e-4), from one export whose batch and sequence vary up to
    the cases' largest."""
    from etutil import worker

    got = _executorch(b_ckpts, tmp_path_factory, name, backend)
    assert not hasattr(got, "returncode"), describe(got)
    meta = json.loads((got / "export.json").read_text())["components"]["model"]["metadata"]
    inputs = _feed(W.inputs_for(W.SPECS[name], case))
    outs = worker().run(got / "model.pte", [inputs[n] for n in meta["input_names"]])
    assert_outputs_close(dict(zip(meta["output_names"], outs)), b_refs(name, case, inputs),
                         f"[executorch {backend}] {name} {case.id}")


class _OVCompiled:
    def __init__(self):
        self._c: dict = {}

    def __call__(self, b_ov, name):
        if name not in self._c:
            from ovutil import compile_model

            self._c[name] = compile_model(b_ov(name, "--dynamic") / "model.xml")
        return self._c[name]


_ov_compiled = _OVCompiled()


@pytest.mark.parametrize("name,case", PARITY_PARAMS)
def test_openvino_parity(b_ov, b_refs, name, case):
    spec = W.SPECS[name]
    inputs = W.inputs_for(spec, case)
    compiled = _ov_compiled(b_ov, name)
    request = compiled.create_infer_request()
    request.infer(_feed(inputs))
    got = {o.get_any_name(): np.array(request.get_tensor(o.get_any_name()).data) for o in compiled.outputs}
    assert_outputs_close(got, b_refs(name, case, inputs), f"[openvino] {name} {case.id}")


def _dims(value_info) -> list:
    out = []
    for d in value_info.type.tensor_type.shape.dim:
        out.append(d.dim_param if d.HasField("dim_param") and d.dim_param else
                   d.dim_value if d.HasField("dim_value") else None)
    return out


def _want_outputs(spec) -> dict:
    """{name: trailing static dims} of the export."""
    if spec.kind == "causal":  # (a head pruned to output_vocab_size rows: that many logits)
        return {"logits": [spec.config.get("output_vocab_size") or spec.vocab_size]}
    if spec.kind == "classifier":
        return {"logits": [3]}
    if spec.kind == "dec_classifier":
        return {"logits": [len(spec.config.get("id2label") or {}) or spec.config.get("num_labels", 2)]}
    if spec.kind == "token_classifier":
        return {"logits": [3]}
    if spec.kind == "qa":
        return {"start_logits": [], "end_logits": []}
    if spec.kind == "masked_lm":
        return {"logits": [spec.vocab_size]}
    if spec.arch == "bert_nopool" or spec.arch.split("_")[0] in ("distilbert", "modernbert", "deberta"):  # no pooler
        return {"last_hidden_state": [spec.config.get("hidden_size") or spec.config["dim"]]}
    return {"last_hidden_state": [spec.config["hidden_size"]], "pooler_output": [spec.config["hidden_size"]]}


@pytest.mark.parametrize("name", [s.name for s in W.SPECS_LIST])
def test_onnx_checker_and_signature(b_onnx, name):
    """The full ONNX checker; int64 inputs [batch_size, sequence_length] (encoders: input_ids,
    attention_mask, token_type_ids); float32 outputs with symbolic batch (and sequence) axes."""
    spec = W.SPECS[name]
    exported = b_onnx(name)
    onnx.checker.check_model(str(exported.onnx_path), full_check=True)
    graph = onnx.load(str(exported.onnx_path), load_external_data=False).graph
    want_in = DEC_INPUTS if spec.decoder_inputs else ENC_INPUTS if spec.token_types else ENC_INPUTS[:2]
    assert [i.name for i in graph.input] == want_in, [i.name for i in graph.input]
    for i in graph.input:
        assert i.type.tensor_type.elem_type == onnx.TensorProto.INT64, i.name
        assert _dims(i) == ["batch_size", "sequence_length"], (i.name, _dims(i))
    want_out = _want_outputs(spec)
    assert [o.name for o in graph.output] == list(want_out), [o.name for o in graph.output]
    for o in graph.output:
        dims = _dims(o)
        assert o.type.tensor_type.elem_type == onnx.TensorProto.FLOAT, o.name
        tail = want_out[o.name]
        seq_axes = 1 if (spec.kind in ("causal", "token_classifier", "qa", "masked_lm")
                         or o.name == "last_hidden_state") else 0
        assert len(dims) == 1 + seq_axes + len(tail) and dims[1 + seq_axes:] == tail, (o.name, dims)
        assert all(isinstance(d, str) for d in dims[:1 + seq_axes]), (o.name, dims)
    man = json.loads((exported.out_dir / "export.json").read_text())
    assert man["components"]["model"]["metadata"]["architecture"] == spec.architecture, man["components"]


@pytest.mark.parametrize("name", [s.name for s in W.SPECS_LIST])
def test_openvino_signature(b_ov, name):
    spec = W.SPECS[name]
    model = core().read_model(str(b_ov(name, "--dynamic") / "model.xml"))
    want_in = DEC_INPUTS if spec.decoder_inputs else ENC_INPUTS if spec.token_types else ENC_INPUTS[:2]
    assert [i.get_any_name() for i in model.inputs] == want_in
    for port in model.inputs:
        assert port.get_element_type().get_type_name() == "i64" and port.get_partial_shape().is_dynamic
    assert [o.get_any_name() for o in model.outputs] == list(_want_outputs(spec))


def test_deepseek_correction_bias_is_visible(b_ckpts, b_refs):
    """Harness sanity: DeepSeek V3's e_score_correction_bias (a buffer, not a config switch) changes
    which experts transformers picks, by >> the tolerance in the logits."""
    spec = W.SPECS["deepseek_v3"]
    inputs = W.inputs_for(spec, _PAD3)
    base = b_refs("deepseek_v3", _PAD3, inputs)["logits"]
    model = W.load_reference(b_ckpts("deepseek_v3"), spec)
    with torch.no_grad():
        for layer in model.model.layers[1:]:
            layer.mlp.gate.e_score_correction_bias.zero_()
    diff = float(np.abs(base - W.outputs(model, spec, inputs)["logits"]).max())
    assert diff > 100 * PARITY_ATOL, f"the correction bias moves the logits by only {diff:.3g}"


@pytest.mark.parametrize("name,buffer", L.CORRECTION_BIASES, ids=[n for n, _ in L.CORRECTION_BIASES])
def test_correction_biases_are_visible(b_ckpts, b_refs, name, buffer):
    """Harness sanity: a buffer the checkpoint carries (a router's correction bias, a buffer or a frozen
    parameter with no config switch; Gemma 4's layer scalars) moves transformers' logits by >> the
    tolerance when zeroed."""
    spec = W.SPECS[name]
    inputs = W.inputs_for(spec, _PAD3)
    base = b_refs(name, _PAD3, inputs)["logits"]
    model = W.load_reference(b_ckpts(name), spec)
    zeroed = 0
    with torch.no_grad():
        for key, b in [*model.named_buffers(), *model.named_parameters()]:
            if key.endswith(buffer):
                b.zero_()
                zeroed += 1
    assert zeroed, f"{name}: no buffer named *{buffer}"
    diff = float(np.abs(base - W.outputs(model, spec, inputs)["logits"]).max())
    assert diff > 100 * PARITY_ATOL, f"{name}: zeroing *{buffer} moves the logits by only {diff:.3g}"


def test_gpt_oss_sinks_are_visible(b_ckpts, b_refs):
    """Harness sanity: the attention sinks (weights, not a config switch) move transformers' logits
    by >> the tolerance when they are pushed out of the softmax."""
    spec = W.SPECS["gpt_oss"]
    inputs = W.inputs_for(spec, _PAD3)
    base = b_refs("gpt_oss", _PAD3, inputs)["logits"]
    model = W.load_reference(b_ckpts("gpt_oss"), spec)
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.sinks.fill_(-1e4)
    diff = float(np.abs(base - W.outputs(model, spec, inputs)["logits"]).max())
    assert diff > 100 * PARITY_ATOL, f"sinks move the logits by only {diff:.3g}"


@pytest.mark.parametrize("name", L.GENAI_SPECS)
def test_genai_greedy_equals_transformers(b_ckpts, tmp_path, name):
    """onnxruntime-genai runs the multi-token export as it is (genai_config.json + the graph): its greedy
    tokens equal transformers' generate, token for token, both stopping at the checkpoint's EOS."""
    import onnxruntime_genai as og
    from genutil import genai_greedy

    out = tmp_path / "genai"
    proc = run_hfx(["export", b_ckpts(name), out, "--format", "onnx", "--for-generation", "--multi-token-decode",
                    "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    cfg = json.loads((out / "genai_config.json").read_text())
    model_type = json.loads((b_ckpts(name) / "config.json").read_text())["model_type"]
    assert cfg["model"]["type"] in (model_type, "decoder"), cfg["model"]["type"]
    ref = W.load_reference(b_ckpts(name), W.SPECS[name])
    model = og.Model(str(out))
    compared = 0
    for prompt in ([5, 6, 7, 8, 9, 10, 11], [12, 13, 14], [20, 21, 22, 23, 24]):
        got = genai_greedy(model, prompt, 24)
        with torch.no_grad():
            want = ref.generate(torch.tensor([prompt]), attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                                max_new_tokens=24, do_sample=False, pad_token_id=PAD)[0, len(prompt):].tolist()
        eos = ref.generation_config.eos_token_id
        if want and want[-1] in (eos if isinstance(eos, list) else [eos]):
            want = want[:-1]  # genai ends the sequence before the EOS it stopped at
        assert got == want, f"{name} prompt {prompt}: genai {got} != transformers {want}"
        compared += len(want)
    assert compared >= 16, f"{name}: only {compared} tokens before the EOS: the comparison says little"


# ---- encoders: no generation --------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", W.ENCODERS)
def test_encoder_for_generation_refused(b_ckpts, tmp_path, name, fmt):
    """`hfx export --for-generation` of an encoder: exit 2, a message naming the architecture and
    generation, nothing written."""
    out = tmp_path / "o"
    proc = run_hfx(["export", b_ckpts(name), out, "--format", fmt, "--for-generation", "--dynamic", "--quiet"])
    assert proc.returncode == 2, describe(proc)
    assert W.SPECS[name].architecture in proc.stderr and "generation" in proc.stderr, describe(proc)
    assert "Traceback" not in proc.stderr and proc.stdout.strip() == "", describe(proc)
    assert not out.exists() or not any(out.iterdir()), sorted(p.name for p in out.iterdir())


# ---- generation ------------------------------------------------------------------------------------------

GEN_SPECS = ("phi3_longrope", "phi3_swa", "neox_parallel", "neox_sequential", "gpt2_scaled", "mixtral",
             "qwen3_moe", "qwen3_moe_norm_step2", "olmo_clip", "smollm3", "smollm3_swa", "phi_qk", "stablelm_par",
             "glm", "glm4", "ernie4_5_bias", "exaone4", "cohere", "cohere2", "qwen2_moe", "qwen2_moe_swa", "granitemoe",
             "gpt_oss", "stablelm_qk", "cohere_qk", "deepseek_v3", "deepseek_v3_yarn", "deepseek_v2", "deepseek_v2_greedy",
             "olmoe", "olmoe_norm", "olmo3")  # olmo3_yarn's rotary: its parity here, YaRN generation gpt_oss's
GEN_SPECS += L.GEN_SPECS

GEN_MODES = {
    # mode: (backend, export flags, transformers' cache for the reference)
    "onnx-dyncache": ("onnx", ("--for-generation", "--cache", "dynamic", "--dynamic"), "dynamic"),
    "onnx-static": ("onnx", ("--for-generation", "--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN),
                             "--dynamic"), "static"),
    "ov-stateful": ("openvino", ("--for-generation", "--dynamic"), "dynamic"),
    "dynamo-dyncache": ("dynamo", ("--for-generation", "--cache", "dynamic", "--dynamic"), "dynamic"),
    "dynamo-static": ("dynamo", ("--for-generation", "--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN),
                                 "--dynamic"), "static"),
    # bounded dims (b_et's config): batch ≤ 4, lengths ≤ max_cache_len
    "et-dyncache": ("executorch", ("--for-generation", "--cache", "dynamic", "--max-cache-len", str(MAX_CACHE_LEN)),
                    "dynamic"),
    "et-static": ("executorch", ("--for-generation", "--cache", "static", "--max-cache-len", str(MAX_CACHE_LEN)),
                  "static"),
}
# one graph for prompt and steps (--multi-token-decode), run for L.GEN_SPECS_MULTI_TOKEN (the others: through
# onnxruntime-genai, test_genai_generation)
MULTI_TOKEN_MODES = {
    "onnx-mtd": ("onnx", ("--for-generation", "--multi-token-decode", "--dynamic"), "dynamic"),
    "onnx-static-mtd": ("onnx", ("--for-generation", "--multi-token-decode", "--cache", "static", "--max-cache-len",
                                 str(MAX_CACHE_LEN), "--dynamic"), "static"),
    "ov-mtd": ("openvino", ("--for-generation", "--multi-token-decode", "--dynamic"), "dynamic"),
}


def _gen_export(b_gen, b_ov, b_dyn, b_et, backend, name, flags):
    return {"onnx": b_gen, "openvino": b_ov, "dynamo": b_dyn, "executorch": b_et}[backend](name, *flags)



def _sampled_modes(name) -> tuple:
    """Every mode, or a sampled spec's two (L.GEN_SAMPLED): the k-th takes modes k and k + 3 (mod their count)."""
    modes = list(GEN_MODES)
    if name not in L.GEN_SAMPLED:
        return tuple(modes)
    k = L.GEN_SAMPLED.index(name)
    return modes[k % len(modes)], modes[(k + 3) % len(modes)]


GEN_MATRIX = [pytest.param(n, m, b, id=f"{n}-{m}-b{len(b)}") for n in GEN_SPECS for m in _sampled_modes(n)
              for b in (BATCH1, BATCH3) if n not in L.GEN_SPECS or b is BATCH3 or m == L.GEN_BATCH1_MODE]
GEN_MATRIX += [pytest.param(n, m, b, id=f"{n}-{m}-b{len(b)}") for n in L.GEN_SPECS_DYNAMIC for m in GEN_MODES
               if GEN_MODES[m][2] == "dynamic" for b in (BATCH1, BATCH3) if b is BATCH3 or m == L.GEN_BATCH1_MODE]
GEN_MATRIX += [pytest.param(n, m, BATCH3, id=f"{n}-{m}-b3") for n in L.GEN_SPECS_MULTI_TOKEN for m in MULTI_TOKEN_MODES]
# longrope with every prompt already past the original length (no switch during generation)
GEN_MATRIX += [pytest.param("phi3_longrope", m, LONG3, id=f"phi3_longrope-{m}-long3") for m in GEN_MODES]


def test_sampled_specs_have_plain_caches():
    """The sampled generation specs (L.GEN_SAMPLED) keep what a representative keeps: no sliding windows, sinks, ALiBi
    or learned positions; latent attention only where its representative (L.GEN_SAMPLED_LATENT) runs every mode."""
    covered = {m for n in L.GEN_SAMPLED for m in _sampled_modes(n)}
    assert covered == set(GEN_MODES), covered
    for name in L.GEN_SAMPLED:
        assert name in GEN_SPECS, name
        cfg = W.SPECS[name].config
        assert not cfg.get("sliding_window") and not any("sliding" in str(t) for t in cfg.get("layer_types") or ()), name
        assert not cfg.get("alibi") and "max_position_embeddings" in cfg, name
        model = W.build_model(W.SPECS[name])
        names = [n for n, _ in model.named_parameters()]
        assert not any(n.endswith("sinks") or "position_embeddings" in n or "wpe" in n for n in names), name
        if any("kv_a_proj_with_mqa" in n for n in names):
            rep = L.GEN_SAMPLED_LATENT[name]
            assert rep in GEN_SPECS and rep not in L.GEN_SAMPLED and ("index_topk" in cfg) == ("index_topk" in W.SPECS[rep].config), name


def _reference_generation(b_gen_refs, name, rows, cache):
    kwargs = {} if cache == "dynamic" or name in L.DYNAMIC_REFERENCE else {"cache_implementation": "static"}
    return b_gen_refs.generate(name, rows, NO_EOS, **kwargs)


@pytest.mark.parametrize("name", GEN_SPECS)
def test_reference_generation_is_consistent(b_gen_refs, name):
    """Harness sanity: transformers' dynamic- and static-cache generate() agree (tokens equal,
    logits within 1e-5), and a left-padded row generates what it generates alone."""
    vocab = W.SPECS[name].vocab_size
    rows = prompts(BATCH3, vocab)
    tokens, logits = _reference_generation(b_gen_refs, name, rows, "dynamic")
    if name in L.DYNAMIC_REFERENCE:  # (why its static modes' reference is the dynamic generate)
        with pytest.raises(Exception):
            b_gen_refs.generate(name, rows, NO_EOS, cache_implementation="static")
        return
    st_tokens, st_logits = _reference_generation(b_gen_refs, name, rows, "static")
    assert tokens.shape == (3, NEW_TOKENS)
    assert st_tokens.tolist() == tokens.tolist(), f"{name}: static-cache generate differs"
    assert np.abs(st_logits - logits).max() < (PARITY_ATOL if name in L.STATIC_REFERENCE_ROUNDING else 1e-5)
    if name == "phi3_longrope" or name in L.PADDING_DEPENDENT:
        return  # the longrope switch depends on the padded batch (see test_phi3_generation_recomputes_at_switch)
    for r, row in enumerate(rows):
        alone, alone_logits = b_gen_refs.generate(name, [row], NO_EOS)
        assert alone[0].tolist() == tokens[r].tolist(), f"{name}: row {r} alone generates other tokens"
        # float reassociation only (a padding mistake moves logits by O(1)): 2e-5 seen on SmolLM3's 4 layers
        assert np.abs(alone_logits[:, 0] - logits[:, r]).max() < 5e-5


def _plain_cached_loop(model, rows, feed_tokens=None):
    """Greedy decoding with transformers' forward and a DynamicCache, as a decode loop runs a graph:
    prefill, then one token per call at position + 1 (feed_tokens: force these tokens instead of the
    argmax). Returns (tokens [B, n], logits [n, B, vocab])."""
    from transformers import DynamicCache

    ids, mask = left_pad(rows, PAD)
    cache = DynamicCache(config=model.config)
    pos = positions(mask)
    tokens, logits = [], []
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                    position_ids=torch.from_numpy(pos), cache=cache, use_cache=True)
        cur = pos[:, -1:]
        for step in range(NEW_TOKENS):
            step_logits = out.logits[:, -1].numpy()
            logits.append(step_logits)
            tok = step_logits.argmax(-1) if feed_tokens is None else feed_tokens[:, step]
            tokens.append(tok)
            if step == NEW_TOKENS - 1:
                break
            mask = np.concatenate([mask, np.ones((len(rows), 1), np.int64)], axis=1)
            cur = cur + 1
            out = model(input_ids=torch.from_numpy(np.asarray(tok, np.int64)[:, None]),
                        attention_mask=torch.from_numpy(mask), position_ids=torch.from_numpy(cur),
                        cache=cache, use_cache=True)
    return np.stack(tokens, axis=1), np.stack(logits)


def test_phi3_generation_recomputes_at_switch(b_gen_refs):
    """Documents transformers' Phi-3 generate(): Phi3ForCausalLM.prepare_inputs_for_generation drops
    the cache once input_ids reaches original_max_position_embeddings + 1 = 17 tokens (padding
    included) while the cache holds <= 16, so that step recomputes the whole sequence with the long
    factors. A plain cached loop (keys rotated with the short factors kept) gives other logits from
    that step on; with prompts already past the threshold nothing is recomputed. The decode loops
    must match generate() (test_greedy_generation)."""
    name = "phi3_longrope"
    model = b_gen_refs.model(name)
    vocab = W.SPECS[name].vocab_size
    for lengths, crosses in ((BATCH1, True), (BATCH3, True), (LONG3, False)):
        rows = prompts(lengths, vocab)
        tokens, logits = b_gen_refs.generate(name, rows, NO_EOS)
        _, plain = _plain_cached_loop(model, rows, feed_tokens=tokens)
        per_step = np.abs(plain - logits).max(axis=(1, 2))
        switch = 16 + 1 - max(lengths)  # the step whose input makes input_ids 17 tokens long
        print(f"{lengths}: plain cached loop vs generate(), per step: {np.round(per_step, 4).tolist()}")
        if crosses:
            assert per_step[:switch].max() <= 1e-5 and per_step[switch] > 100 * PARITY_ATOL, per_step
        else:
            assert per_step.max() <= 1e-5, per_step


@pytest.mark.parametrize("mode", list(GEN_MODES))
def test_phi3_graphs_match_cached_forward_across_switch(b_gen, b_ov, b_dyn, b_et, b_gen_refs, loops, mode, tmp_path):
    """Diagnostic for the longrope switch: the exported graphs reproduce transformers' forward
    call by call across the threshold (prefill short; decode steps past position 16 long, against
    the cached short-factor keys): with the loop's re-encoding at the switch turned off (the
    export's `recompute_cache_at_length` removed), hfx's generation equals a plain cached greedy
    loop over transformers' forward, token for token, logits within 1e-4. (generate() also
    re-encodes at the switch: test_greedy_generation covers that, with the metadata in place.)"""
    import shutil

    name = "phi3_longrope"
    backend, flags, _ = GEN_MODES[mode]
    exported = _gen_export(b_gen, b_ov, b_dyn, b_et, backend, name, flags)
    out = tmp_path / "no-recompute"
    shutil.copytree(exported, out)
    man = json.loads((out / "export.json").read_text())
    for comp in man["components"].values():
        assert comp["metadata"].pop("recompute_cache_at_length") == 17, comp["metadata"]
    (out / "export.json").write_text(json.dumps(man))
    rows = prompts(BATCH3, W.SPECS[name].vocab_size)
    want_tokens, want_logits = _plain_cached_loop(b_gen_refs.model(name), rows)
    tokens, logits = loops.generate(backend, out, rows)
    compare = ov_compare_generation if backend == "openvino" else onnx_compare_generation
    compare(tokens, logits, want_tokens, want_logits, f"{name} {mode} b3 vs a plain cached loop")


@pytest.mark.parametrize("name,mode,lengths", GEN_MATRIX)
def test_greedy_generation(b_gen, b_ov, b_dyn, b_et, b_gen_refs, loops, name, mode, lengths):
    """32 new tokens equal generate()'s, every step's logits within 1e-4. (phi3_longrope with the
    b1 / b3 prompts crosses original_max_position_embeddings during generation, where generate()
    recomputes the cache with the long factors: see test_phi3_generation_recomputes_at_switch.)"""
    backend, flags, cache = {**GEN_MODES, **MULTI_TOKEN_MODES}[mode]
    out = _gen_export(b_gen, b_ov, b_dyn, b_et, backend, name, flags)
    rows = prompts(lengths, W.SPECS[name].vocab_size)
    want_tokens, want_logits = _reference_generation(b_gen_refs, name, rows, cache)
    tokens, logits = loops.generate(backend, out, rows)
    assert all(len(t) == NEW_TOKENS for t in tokens), f"without EOS every row gets {NEW_TOKENS}: {tokens}"
    compare = ov_compare_generation if backend == "openvino" else onnx_compare_generation
    compare(tokens, logits, want_tokens, want_logits, f"{name} {mode} b{len(rows)}")


@pytest.mark.parametrize("name", GEN_SPECS)
def test_generation_export_structure(b_gen, b_ckpts, name):
    """export.json of the dynamic-cache export: prefill + decode, each layer's cache geometry (kv
    heads, key and value widths as transformers' own cache holds them; sliding window as its config
    says); both graphs pass the full ONNX checker."""
    spec = W.SPECS[name]
    out = b_gen(name, *GEN_MODES["onnx-dyncache"][1])
    man = json.loads((out / "export.json").read_text())
    assert set(man["components"]) == {"prefill", "decode"}, man["components"].keys()
    model = W.load_reference(b_ckpts(name), spec)
    cfg = model.config
    # what transformers' own cache holds per layer: [B, heads, S, key_dim] keys, [.., value_dim] values
    # (multi-head latent attention caches one latent "head" of kv_lora_rank and the rotary key part)
    with torch.no_grad():
        cache = model(input_ids=torch.tensor([[3, 4, 5]]), use_cache=True).past_key_values
    # (a layer that reads an earlier layer's keys and values keeps none: transformers' DummyLayer, hfx's {})
    held = [(lay.keys.shape[1], lay.keys.shape[3], lay.values.shape[3]) if getattr(lay, "keys", None) is not None
            else None for lay in cache.layers]
    types = getattr(cfg, "layer_types", None)  # per layer where the config has them (SmolLM3)
    windows = [getattr(cfg, "sliding_window", None) if not types or t == "sliding_attention" else None
               for t in types or [None] * cfg.num_hidden_layers]
    if spec.arch == "deepseek_v4":  # every layer windowed; hfx's values the compressor's raw projections (kv and gate, one
        windows = [cfg.sliding_window] * cfg.num_hidden_layers  # series or, sparse, two), beside the keys transformers
        series = {"sliding_attention": 0, "heavily_compressed_attention": 1, "compressed_sparse_attention": 2}  # keeps
        held = [(h[0], h[1], 2 * series[t] * h[1] or h[1]) for h, t in zip(held, types)]
    for cname, comp in man["components"].items():
        md = comp["metadata"]
        assert md["architecture"] == spec.architecture, md
        layers = md["cache"]["layers"]
        assert len(layers) == cfg.num_hidden_layers, layers
        for i, layer in enumerate(layers):
            if held[i] is None:
                assert layer == {}, f"{cname} layer {i}: {layer}"
                continue
            heads, key_dim, value_dim = held[i]
            if getattr(cfg, "new_decoder_architecture", False):  # Falcon's cache holds each key/value group's keys
                heads = cfg.num_kv_heads                          # repeated per query head; hfx's, once
            assert (layer["heads"], layer["key_dim"], layer["value_dim"], layer["sliding_window"]) == \
                (heads, key_dim, value_dim, windows[i]), f"{cname} layer {i}: {layer}"
        onnx.checker.check_model(str(out / comp["file"]), full_check=True)


# ---- a config transformers reads differently ------------------------------------------------------------


@pytest.fixture(scope="module")
def phi3_nested_original(b_ckpts, tmp_path_factory):
    """phi3_longrope's weights with a config.json whose original_max_position_embeddings is ONLY in
    rope_parameters (16), not at the top level. Phi3Config has a top-level
    original_max_position_embeddings field (default 4096), and standardize_rope_params copies the
    top-level value over the nested one for rope type longrope (transformers 5.24
    modeling_rope_utils.py: "we give priority to self.original_max_position_embeddings"): transformers
    runs this checkpoint with original 4096, i.e. factor 64/4096 < 1, attention_factor 1, and the
    short factors at every length."""
    import shutil

    src = b_ckpts("phi3_longrope")
    dst = tmp_path_factory.mktemp("phi3_nested_original") / "ck"
    shutil.copytree(src, dst)
    cfg = json.loads((dst / "config.json").read_text())
    assert cfg.pop("original_max_position_embeddings") == 16
    assert cfg["rope_parameters"]["original_max_position_embeddings"] == 16
    (dst / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    return dst


QUIRK_CASES = (models.Case(3, 12, (0, 3, 11)), models.Case(2, 20, (3, 8)))


def test_phi3_nested_original_is_what_transformers_does(phi3_nested_original, b_refs):
    """Harness sanity: transformers loads original_max_position_embeddings 4096 (the top-level
    default) for that config, and it matters: the logits differ from phi3_longrope's (original 16)."""
    spec = W.SPECS["phi3_longrope"]
    model = W.load_reference(phi3_nested_original, spec)
    assert model.config.original_max_position_embeddings == 4096
    assert model.config.rope_parameters["original_max_position_embeddings"] == 4096
    for case in QUIRK_CASES:
        inputs = models.make_inputs(case, spec.vocab_size)
        diff = float(np.abs(W.outputs(model, spec, inputs)["logits"] - b_refs("phi3_longrope", case, inputs)["logits"]).max())
        print(f"{case.id}: original 4096 vs 16 moves the logits by {diff:.3g}")
        assert diff > 100 * PARITY_ATOL


@pytest.mark.parametrize("case", QUIRK_CASES, ids=[c.id for c in QUIRK_CASES])
def test_phi3_nested_original_parity(phi3_nested_original, tmp_path, case):
    """hfx's ONNX export of that checkpoint gives transformers' logits."""
    from conftest import export, run_exported

    spec = W.SPECS["phi3_longrope"]
    export(phi3_nested_original, tmp_path / "onnx")
    model = W.load_reference(phi3_nested_original, spec)
    inputs = models.make_inputs(case, spec.vocab_size)
    assert_logits_close(run_exported(tmp_path / "onnx", inputs), W.outputs(model, spec, inputs)["logits"],
                        f"phi3 nested-only original_max_position_embeddings {case.id}")


# ---- mixture of experts: both forms ------------------------------------------------------------------

MOE_FORMS = [(name, form, backend) for name in ("mixtral", "mixtral_fused", "qwen3_moe", "qwen3_moe_fused", "gpt_oss",
                                               "deepseek_v3", "deepseek_v2", "olmoe", *L.MOE_FORMS)
             for form in ("all", "gathered") for backend in ("onnx", "openvino")]


@pytest.mark.parametrize("name,form,backend", MOE_FORMS)
def test_moe_forms_match_transformers(b_ckpts, b_refs, tmp_path, name, form, backend):
    """`moe_experts`: every expert weighted by the dense top-k mask ("all", the default for graphs
    that take many tokens per call) and each token's k experts gathered by index ("gathered", the
    default for single-token decode graphs) both equal transformers on every element."""
    from conftest import run_hfx, describe

    spec = W.SPECS[name]
    cfg = tmp_path / "export.json"
    cfg.write_text(json.dumps({"export_format": backend, "dynamic": True, "moe_experts": form}))
    out = tmp_path / "out"
    proc = run_hfx(["export", b_ckpts(name), out, "--config", cfg, "--quiet"])
    assert proc.returncode == 0, describe(proc)
    for case in spec.cases[:2]:
        inputs = W.inputs_for(spec, case)
        if backend == "onnx":
            from conftest import ort_session

            sess = ort_session(out / "model.onnx")
            names = [o.name for o in sess.get_outputs()]
            got = dict(zip(names, sess.run(names, _feed(inputs))))
        else:
            from ovutil import compile_model

            compiled = compile_model(out / "model.xml")
            request = compiled.create_infer_request()
            request.infer(_feed(inputs))
            got = {o.get_any_name(): np.array(request.get_tensor(o.get_any_name()).data) for o in compiled.outputs}
        assert_outputs_close(got, b_refs(name, case, inputs), f"{name} moe_experts={form} [{backend}] {case.id}")


def test_moe_experts_config_is_checked(b_ckpts, tmp_path):
    from conftest import run_hfx, describe

    cfg = tmp_path / "export.json"
    cfg.write_text(json.dumps({"export_format": "onnx", "moe_experts": "some"}))
    proc = run_hfx(["export", b_ckpts("mixtral"), tmp_path / "out", "--config", cfg])
    assert proc.returncode == 2 and "moe_experts" in proc.stderr, describe(proc)


# ---- family-specific config fields, malformed ---------------------------------------------------------------------------

FAMILY_BAD_CONFIGS = [
    ("smollm3", {"no_rope_layers": [1, 0]}, "no_rope_layers"),            # not one flag per layer
    ("smollm3", {"no_rope_layers": [1, 1, "no", 1]}, "no_rope_layers[2]"),
    ("smollm3", {"no_rope_layers": None, "no_rope_layer_interval": 0}, "no_rope_layer_interval"),
    ("smollm3", {"layer_types": ["sliding_attention"] * 4, "sliding_window": None}, "layer_types[0]"),
    ("olmo_clip", {"clip_qkv": -1.0}, "clip_qkv"),
    ("olmo3", {"layer_types": ["sliding_attention", "full_attention", "windowed", "full_attention"]}, "layer_types[2]"),
    ("olmo3", {"rope_parameters": {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                   "full_attention": {"rope_type": "dynamic_ntk", "factor": 2.0, "rope_theta": 1e4}}},
     "dynamic_ntk"),
    ("stablelm_qk", {"qk_layernorm": "yes"}, "qk_layernorm"),
    ("cohere", {"logit_scale": "big"}, "logit_scale"),
    # a pre-quantized checkpoint of a method hfx does not read (its MXFP4 release is: test_prequant.py)
    ("gpt_oss", {"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 32}}, "awq"),
    ("glm", {"quantization_config": {"quant_method": "gptq", "bits": 4}}, "gptq"),
    ("gpt_oss", {"swiglu_limit": "high"}, "swiglu_limit"),
    *L.BAD_CONFIGS,
]


@pytest.mark.parametrize("name,edit,field", FAMILY_BAD_CONFIGS, ids=[f"{n}-{f}" for n, _, f in FAMILY_BAD_CONFIGS])
def test_family_bad_config(b_ckpts, tmp_path, name, edit, field):
    """A malformed family-specific field is refused with exit code 2, the field named, nothing written."""
    import shutil

    ck = tmp_path / "ck"
    shutil.copytree(b_ckpts(name), ck)
    cfg = json.loads((ck / "config.json").read_text())
    cfg.update(edit)
    (ck / "config.json").write_text(json.dumps(cfg))
    proc = run_hfx(["export", ck, tmp_path / "out", "--format", "onnx", "--dynamic"])
    assert proc.returncode == 2 and field in proc.stderr and "config.json" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


def test_expert_table_out_of_range_refused(b_ckpts, tmp_path):
    """A token id -> experts table (DeepSeek V4's tid2eid) with an entry that names no expert is refused, the tensor and
    the element named, exit 2, nothing written (an exported gather would read out of its experts)."""
    import shutil

    from safetensors.torch import load_file, save_file

    ck = tmp_path / "ck"
    shutil.copytree(b_ckpts("deepseek_v4"), ck)
    tensors = load_file(str(ck / "model.safetensors"))
    tensors["model.layers.0.ffn.gate.tid2eid"][5, 1] = 8  # (8 experts: 0..7)
    save_file(tensors, str(ck / "model.safetensors"), metadata={"format": "pt"})
    out = tmp_path / "out"
    proc = run_hfx(["export", ck, out, "--format", "onnx"])
    assert proc.returncode == 2 and "tid2eid' element 11 is 8, not an index in [0, 8)" in proc.stderr, describe(proc)
    assert not out.exists()


@pytest.mark.parametrize("name,cache", (("deepseek_v32", "the indexer's key cache"), ("deepseek_v4", "the compressors' caches")))
def test_indexer_seed_refused(b_ckpts, tmp_path, name, cache):
    """io "seed" has no names for DeepSeek V3.2's indexer key cache, or V4's compressors' caches, yet: refused by name,
    exit 2, nothing written."""
    out = tmp_path / "out"
    proc = run_hfx(["export", b_ckpts(name), out, "--format", "onnx", "--dynamic", "--for-generation", "--io", "seed"])
    assert proc.returncode == 2 and f"io \"seed\" has no names for {cache}" in proc.stderr, describe(proc)
    assert not out.exists()


# ---- multi-head latent attention in the Python system's I/O profile -----------------------------------


@pytest.fixture(scope="session")
def b_seed_exports(tmp_path_factory, b_ckpts):
    from seedutil import seed_exporter

    return seed_exporter(tmp_path_factory, b_ckpts, "onnx")


@pytest.mark.parametrize("mode", ["dynamic", "static"])
def test_mla_seed_io_equals_the_seeds(b_ckpts, b_seed_exports, tmp_path, mode):
    """DeepSeek V3 in the seed's profile: hfx's generation graphs take and return what
    transformers.exporters' own export of the same model does (names, dtypes, ranks, in order): its
    cache holds the kv latent and the rotary key part, as transformers' cache does."""
    from seedutil import hfx_seed_export
    from test_seed_io import _io

    seed = b_seed_exports("deepseek_v3", mode)
    ours = hfx_seed_export(b_ckpts("deepseek_v3"), tmp_path / "hfx", "onnx", mode)
    for g in ("prefill.onnx", "decode.onnx"):
        assert _io(ours / g) == _io(seed / g), g


def test_deberta_buckets_of_a_real_config(tmp_path):
    """DeBERTa-v3's own bucket settings (256 log buckets up to 512): one row of 600 tokens reaches
    every distance up to 599, so every entry of hfx's index tables (transformers' float32
    make_log_bucket_position, computed at export) meets transformers' within 1e-4 in ONNX Runtime."""
    import onnxruntime as ort
    from transformers import DebertaV2Config, DebertaV2Model

    cfg = DebertaV2Config(vocab_size=96, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=48, max_position_embeddings=512, type_vocab_size=0,
                          position_biased_input=False, relative_attention=True, position_buckets=256,
                          max_relative_positions=512, pos_att_type=["p2c", "c2p"], share_att_key=True,
                          norm_rel_ebd="layer_norm")
    torch.manual_seed(0)
    model = DebertaV2Model(cfg).eval()
    with torch.no_grad():  # rows of the relative table far apart, so a bucket off by one shows
        model.encoder.rel_embeddings.weight.normal_(0.0, 2.0)
    model.save_pretrained(tmp_path / "ck")
    proc = run_hfx(["export", tmp_path / "ck", tmp_path / "out", "--format", "onnx", "--dynamic", "--quiet"])
    assert proc.returncode == 0, describe(proc)
    ids = np.random.default_rng(0).integers(3, 96, (1, 600)).astype(np.int64)
    mask = np.ones_like(ids)
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).last_hidden_state.numpy()
    sess = ort.InferenceSession(str(tmp_path / "out" / "model.onnx"), providers=["CPUExecutionProvider"])
    got = sess.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask})[0]
    assert float(np.abs(got - want).max()) <= PARITY_ATOL


# ---- config keys an architecture's transformers class never reads ---------------------------------------

# keys the decoder template reads for some architecture, each with a value that would change the graph
STRAY_KEYS = {"num_key_value_heads": 1, "head_dim": 8, "attention_bias": True, "mlp_bias": True, "use_bias": False,
              "sliding_window": 2, "partial_rotary_factor": 0.5, "use_parallel_residual": True, "qkv_bias": True,
              "use_qkv_bias": True, "qk_layernorm": True, "use_qk_norm": True, "logit_scale": 9.0, "clip_qkv": 0.01,
              "rope_scaling": {"type": "linear", "factor": 4.0}}
ONE_PER_ARCH = list({W.SPECS[n].arch: n for n in reversed(W.DECODERS)}.values())


@pytest.mark.parametrize("name", ONE_PER_ARCH)
def test_stray_config_keys_change_nothing(b_ckpts, tmp_path, name):
    """A config.json key the architecture's own transformers class never reads (a GPT-2 config with a
    stray num_key_value_heads) changes nothing in hfx either: for each such key, hfx's logits equal
    transformers' on the edited folder (keys transformers does read are left to the other tests)."""
    import shutil

    import onnxruntime as ort

    spec = W.SPECS[name]
    src = b_ckpts(name)
    cfg = json.loads((src / "config.json").read_text())
    case = _PAD3
    inputs = W.inputs_for(spec, case)
    base = W.outputs(W.load_reference(src, spec), spec, inputs)["logits"]
    checked = []
    for key, value in STRAY_KEYS.items():
        if key in cfg:
            continue
        ck = tmp_path / key
        shutil.copytree(src, ck)
        (ck / "config.json").write_text(json.dumps(dict(cfg, **{key: value})))
        try:
            want = W.outputs(W.load_reference(ck, spec), spec, inputs)["logits"]
        except Exception:  # noqa: BLE001 — transformers reads the key and cannot build with it
            continue
        if float(np.abs(want - base).max()) > PARITY_ATOL:
            continue  # transformers reads it
        proc = run_hfx(["export", ck, tmp_path / f"{key}-out", "--format", "onnx", "--dynamic", "--quiet"])
        assert proc.returncode == 0, f"{key}: " + describe(proc)
        sess = ort.InferenceSession(str(tmp_path / f"{key}-out" / "model.onnx"), providers=["CPUExecutionProvider"])
        got = sess.run(["logits"], _feed(inputs))[0]
        assert float(np.abs(got - want).max()) <= PARITY_ATOL, f"{name}: the stray key {key} changed hfx's logits"
        checked.append(key)
    assert checked, f"{name}: no stray key left to check"

"""Gemma's audio encoders on their own (src/arch/usm.c over audio_usm.c) against transformers: Gemma3nAudioEncoder
(last_hidden_state and the output's mask) and Gemma4AudioModel (Gemma 4's, whose composite model test_audio_lm.py runs).

Checkpoints are tiny (hidden 32, 16 mel bins) built by transformers from explicit configs with a fixed seed; the inputs
are sine sweeps of 0.9 and 0.6 seconds at 16 kHz through each lineage's own feature extractor (Gemma3nAudioFeatureExtractor,
Gemma4AudioFeatureExtractor: log-mel frames and their mask), batch 2, the second row padded. Every element within 1e-4
of transformers at every frame (padded ones included) and the output masks equal, in ONNX Runtime and OpenVINO for
every variant, torch (.pt2) and ExecuTorch (XNNPACK, portable) for some; the config fields that change the graph each
in a variant and shown to move transformers' outputs; bad configs refused by name."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

import initutil
from mmutil import sine_sweeps
from conftest import PARITY_ATOL, assert_config_refused, assert_logits_close, built_once, cached_exports, run_forward

MELS = 16
GEMMA3N = dict(hidden_size=32, conf_num_hidden_layers=2, conf_num_attention_heads=4, input_feat_size=MELS,
               sscp_conv_channel_size=[8, 6], conf_attention_chunk_size=4, conf_attention_context_left=5,
               conf_attention_context_right=2, conf_reduction_factor=2, conf_conv_kernel_size=3)


@dataclasses.dataclass(frozen=True)
class Variant:
    cls: str      # the transformers class (its config: the class's config_class)
    config: dict


VARIANTS = {
    # Gemma 3n's defaults in small: 3×3 stride-2 subsampling, chunks of 4 frames seeing 4 back and 2 ahead, every
    # second frame kept at the end
    "gemma3n": Variant("Gemma3nAudioEncoder", GEMMA3N),
    # other kernels and strides (a time stride of 1, a 5-frame kernel), no look-ahead, no reduction, tight clipping, a
    # small logit cap, another residual weight, three layers, a 5-wide light convolution
    "gemma3n_b": Variant("Gemma3nAudioEncoder", {**GEMMA3N, "sscp_conv_kernel_size": [[5, 3], [3, 5]],
                                                 "sscp_conv_stride_size": [[2, 2], [1, 2]],
                                                 "conf_attention_context_right": 0, "conf_reduction_factor": 1,
                                                 "gradient_clipping": 0.8, "conf_attention_logit_cap": 2.0,
                                                 "conf_residual_weight": 0.3, "conf_num_hidden_layers": 3,
                                                 "conf_conv_kernel_size": 5}),
    # Gemma 4's (E2B's form, small), as test_audio_lm.py's composite model holds it
    "gemma4": Variant("Gemma4AudioModel", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                               subsampling_conv_channels=[MELS, 8], conv_kernel_size=5,
                                               attention_chunk_size=4, attention_context_left=5,
                                               attention_context_right=2, output_proj_dims=24)),
}
TORCH_SAMPLED = ["gemma3n", "gemma4"]
ET_SAMPLED = ["gemma3n"]


def build(v: Variant):
    import transformers
    cls = getattr(transformers, v.cls)
    return cls(cls.config_class(**v.config))


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("usm")

    def make(name):
        torch.manual_seed(0)
        model = build(VARIANTS[name]).eval()
        initutil.init_weights(model, 1, lambda n: None)
        model.save_pretrained(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("usm-exports"), ckpt)


def inputs(name):
    """The forward's inputs from the lineage's feature extractor: Gemma 3n's audio_mel and audio_mel_mask (true on
    padded frames, as Gemma3nModel hands them over), Gemma 4's input_features and attention_mask (1 on real frames)."""
    import transformers
    v = VARIANTS[name]
    if v.cls == "Gemma3nAudioEncoder":
        out = transformers.Gemma3nAudioFeatureExtractor(feature_size=MELS)(sine_sweeps(), sampling_rate=16000,
                                                                            return_tensors="np")
        feed = {"audio_mel": out.input_features.astype(np.float32), "audio_mel_mask": ~out.input_features_mask.astype(bool)}
        assert feed["audio_mel_mask"][1].any() and not feed["audio_mel_mask"][0].any()  # the second row is padded
        return feed
    out = transformers.Gemma4AudioFeatureExtractor(feature_size=MELS)(sine_sweeps(), sampling_rate=16000, return_tensors="np")
    feed = {"input_features": out.input_features.astype(np.float32),
            "attention_mask": out.input_features_mask.astype(np.int64)}
    assert feed["attention_mask"][1].min() == 0
    return feed


def reference(ckpt, name, feed, config=None):
    """transformers' outputs: last_hidden_state and the output's mask (as hfx names it, output_mask)."""
    import transformers
    cls = getattr(transformers, VARIANTS[name].cls)
    model = cls.from_pretrained(str(ckpt(name)), **({"config": config} if config else {})).eval()
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(x) for k, x in feed.items()})
    mask = out.audio_mel_mask if hasattr(out, "audio_mel_mask") else out.attention_mask
    return {"last_hidden_state": out.last_hidden_state.numpy(), "output_mask": mask.numpy()}


def executorch_flags(feed):
    axes = {"0": {"name": "batch_size", "min": 1, "max": 4}, "1": {"name": "sequence_length", "min": 8, "max": 400}}
    return ("--config-json", json.dumps({"export_format": "executorch", "backend": "{backend}",
                                         "dynamic_shapes": {k: axes for k in feed}}))


RUNS = ([(n, "onnx", "") for n in VARIANTS] + [(n, "openvino", "") for n in VARIANTS] +
        [(n, "dynamo", "") for n in TORCH_SAMPLED] +
        [(n, "executorch", b) for n in ET_SAMPLED for b in ("xnnpack", "portable")])


@pytest.mark.parametrize("name,fmt,backend", RUNS, ids=[f"{n}-{f}{'-' + b if b else ''}" for n, f, b in RUNS])
def test_parity(name, fmt, backend, ckpt, export_dir):
    """Every element of last_hidden_state within 1e-4 of transformers at every frame; the output mask equal."""
    feed = inputs(name)
    if fmt == "executorch":
        flag, config = executorch_flags(feed)
        out = export_dir(name, flag, config.replace("{backend}", backend))
    else:
        out = export_dir(name, "--format", fmt, "--dynamic")
    want = reference(ckpt, name, feed)
    got = run_forward(fmt, out, feed, list(want))
    assert list(got) == list(want)
    assert_logits_close(got["last_hidden_state"], want["last_hidden_state"], f"{name} {fmt} {backend}")
    assert got["output_mask"].dtype == want["output_mask"].dtype
    assert np.array_equal(got["output_mask"], want["output_mask"]), f"{name} {fmt}: the output masks differ"


# (variant, field, config overrides under which transformers' outputs move: the graph must read each).
# conf_attention_chunk_size is not among them: each query sees the same keys (left − 1 back, right ahead) whatever the
# chunks, so it tiles the work without changing a value (transformers' outputs are equal under 3 and 4).
FIELDS = [
    ("gemma3n", "conf_attention_context_left", {"conf_attention_context_left": 3}),
    ("gemma3n", "conf_attention_context_right", {"conf_attention_context_right": 0}),
    ("gemma3n", "conf_attention_logit_cap", {"conf_attention_logit_cap": 1.0}),
    ("gemma3n", "gradient_clipping", {"gradient_clipping": 0.5}),
    ("gemma3n", "conf_residual_weight", {"conf_residual_weight": 0.9}),
    ("gemma3n", "sscp_conv_group_norm_eps", {"sscp_conv_group_norm_eps": 0.5}),
    ("gemma3n", "rms_norm_eps", {"rms_norm_eps": 0.5}),
]


@pytest.mark.parametrize("name,field,overrides", FIELDS, ids=[f[1] for f in FIELDS])
def test_fields_move_transformers(name, field, overrides, ckpt):
    import transformers
    feed = inputs(name)
    base = reference(ckpt, name, feed)["last_hidden_state"]
    config = transformers.AutoConfig.from_pretrained(str(ckpt(name)))
    for k, v in overrides.items():
        setattr(config, k, v)
    got = reference(ckpt, name, feed, config)["last_hidden_state"]
    assert got.shape == base.shape
    assert np.abs(got - base).max() > 100 * PARITY_ATOL, f"{name}: {field} does not move the outputs"


def test_mask_moves_transformers(ckpt):
    """Unmasked, the padded row's real frames move (the keys past its end hidden, the light convolution's input
    zeroed): the graph must read the mask."""
    feed = inputs("gemma3n")
    base = reference(ckpt, "gemma3n", feed)["last_hidden_state"]
    unmasked = reference(ckpt, "gemma3n", {**feed, "audio_mel_mask": np.zeros_like(feed["audio_mel_mask"])})
    real = int((~reference(ckpt, "gemma3n", feed)["output_mask"][1]).sum())
    assert np.abs(base[1, :real] - unmasked["last_hidden_state"][1, :real]).max() > 100 * PARITY_ATOL


@pytest.mark.parametrize("name,edit,words", [
    ("gemma3n", {"hidden_size": 30}, "conf_num_attention_heads"),
    ("gemma3n", {"sscp_conv_kernel_size": [3, 3, 3]}, "sscp_conv_kernel_size"),
    ("gemma3n", {"sscp_conv_stride_size": [[2, 0], [2, 2]]}, "sscp_conv_stride_size"),
    ("gemma3n", {"input_feat_size": 1, "sscp_conv_kernel_size": [[3, 5], [3, 3]]}, "input_feat_size"),
    ("gemma3n", {"sscp_conv_group_norm_eps": 0.0}, "sscp_conv_group_norm_eps"),
    ("gemma4", {"subsampling_conv_channels": [14, 8]}, "subsampling_conv_channels"),
    ("gemma4", {"hidden_act": "swishy"}, "hidden_act 'swishy'"),
])
def test_refused(name, edit, words, ckpt, tmp_path):
    assert_config_refused(ckpt(name), tmp_path, edit, words, "--dynamic")

"""Parakeet (FastConformer; src/arch/parakeet.c) against transformers: ParakeetForCTC (logits per subsampled frame) and
the bare ParakeetEncoder (last_hidden_state).

Checkpoints are tiny (hidden 32, 8 subsampling channels, 16 or 24 mel bins) built by transformers from explicit
configs with a fixed seed; the inputs are sine sweeps of 0.9 and 0.6 seconds at 16 kHz through each checkpoint's
own ParakeetFeatureExtractor (log-mel features [B, T, mels], normalized per utterance, with attention_mask), batch
2, the second row padded. Every element within 1e-4 of transformers at every frame (padded ones included) in ONNX
Runtime and OpenVINO for every variant, torch (.pt2) and ExecuTorch (XNNPACK, portable) for some; the config fields
that change the graph each in a variant and shown to move transformers' outputs (the subsampling's depth, kernel and
stride, scale_input, attention_bias, convolution_bias, conv_kernel_size, hidden_act, the mask); bad configs refused by
name."""

from __future__ import annotations

import dataclasses
import json
import numpy as np
import pytest
import torch

import initutil
from mmutil import sine_sweeps
from conftest import PARITY_ATOL, REPO, assert_config_refused, assert_logits_close, built_once, cached_exports, run_forward

ENCODER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
               subsampling_conv_channels=8, num_mel_bins=16, conv_kernel_size=5, subsampling_factor=4)


@dataclasses.dataclass(frozen=True)
class Variant:
    cls: str     # the transformers class
    encoder: dict
    vocab: int = 24


VARIANTS = {
    # two strided convolutions (a convolution, then a depthwise + pointwise pair), scaled input, biases everywhere
    "parakeet_ctc": Variant("ParakeetForCTC", ENCODER),
    # three (factor 8), no input scale, no linear or convolution biases, GELU, a kernel-3 depthwise convolution
    "parakeet_ctc_8x": Variant("ParakeetForCTC", {**ENCODER, "subsampling_factor": 8, "scale_input": False,
                                                  "attention_bias": False, "convolution_bias": False,
                                                  "hidden_act": "gelu", "conv_kernel_size": 3}),
    # the bare encoder: 24 mel bins, a 5×5 subsampling kernel (padding 2), three layers
    "parakeet_encoder": Variant("ParakeetEncoder", {**ENCODER, "num_mel_bins": 24, "subsampling_conv_kernel_size": 5,
                                                    "num_hidden_layers": 3}),
}
TORCH_SAMPLED = ["parakeet_ctc", "parakeet_encoder"]
ET_SAMPLED = ["parakeet_ctc"]


def build(v: Variant):
    import transformers
    if v.cls == "ParakeetEncoder":
        return transformers.ParakeetEncoder(transformers.ParakeetEncoderConfig(**v.encoder))
    return transformers.ParakeetForCTC(transformers.ParakeetCTCConfig(vocab_size=v.vocab, pad_token_id=v.vocab - 1,
                                                                      encoder_config=v.encoder))


def init_weights(model: torch.nn.Module, seed: int) -> None:
    """initutil's weights (not transformers' 0.02 init, under which a missing bias or a wrong scale would hide below
    the tolerance), the positional biases u and v at 0.3, and the BatchNorms' statistics away from 0 and 1."""
    initutil.init_weights(model, seed, lambda n: 0.3 if n.endswith(("bias_u", "bias_v")) else None)
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(0.2 * torch.randn(b.shape, generator=g))
            elif name.endswith("running_var"):
                b.copy_(0.5 + torch.rand(b.shape, generator=g))


def tokenizer(vocab: int):
    """A ParakeetTokenizer over `vocab` ids: a letter each, the last the pad token (CTC's blank)."""
    from tokenizers import Tokenizer, models
    from transformers import ParakeetTokenizer
    words = {chr(ord("a") + i): i for i in range(vocab - 1)}
    words["<pad>"] = vocab - 1
    return ParakeetTokenizer(tokenizer_object=Tokenizer(models.WordLevel(words, unk_token="<pad>")), pad_token="<pad>")


def processor(name):
    from transformers import ParakeetFeatureExtractor
    return ParakeetFeatureExtractor(feature_size=VARIANTS[name].encoder["num_mel_bins"])


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("parakeet")

    def make(name):
        torch.manual_seed(0)
        model = build(VARIANTS[name]).eval()
        init_weights(model, seed=1)
        model.save_pretrained(root / name)
        processor(name).save_pretrained(root / name)
        if VARIANTS[name].cls.endswith("CTC"):
            tokenizer(VARIANTS[name].vocab).save_pretrained(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("parakeet-exports"), ckpt)


def inputs(name):
    """input_features [2, T, mels] and attention_mask [2, T] from the checkpoint's feature extractor."""
    out = processor(name)(sine_sweeps(), sampling_rate=16000, return_tensors="np")
    feed = {"input_features": out.input_features.astype(np.float32), "attention_mask": out.attention_mask.astype(np.int64)}
    assert feed["attention_mask"][1].min() == 0  # the second row is padded
    return feed


def reference(ckpt, name, feed, **overrides):
    import transformers
    v = VARIANTS[name]
    model = getattr(transformers, v.cls).from_pretrained(str(ckpt(name)), attn_implementation="eager", **overrides)
    with torch.no_grad():
        out = model.eval()(**{k: torch.from_numpy(x) for k, x in feed.items()})
    return {"logits": out.logits.numpy()} if v.cls.endswith("CTC") else {"last_hidden_state": out.last_hidden_state.numpy()}


RUNS = ([(n, "onnx", "") for n in VARIANTS] + [(n, "openvino", "") for n in VARIANTS] +
        [(n, "dynamo", "") for n in TORCH_SAMPLED] +
        [(n, "executorch", b) for n in ET_SAMPLED for b in ("xnnpack", "portable")])


@pytest.mark.parametrize("name,fmt,backend", RUNS, ids=[f"{n}-{f}{'-' + b if b else ''}" for n, f, b in RUNS])
def test_parity(name, fmt, backend, ckpt, export_dir, tmp_path):
    """Every output at every frame within 1e-4 of transformers; the graph's inputs are the feature extractor's."""
    feed = inputs(name)
    if fmt == "executorch":
        axes = {"0": {"name": "batch_size", "min": 1, "max": 4}, "1": {"name": "sequence_length", "min": 1, "max": 400}}
        out = export_dir(name, "--config-json", json.dumps({"export_format": "executorch", "backend": backend,
                                                            "dynamic_shapes": {k: axes for k in feed}}))
    else:
        out = export_dir(name, "--format", fmt, "--dynamic")
    want = reference(ckpt, name, feed)
    got = run_forward(fmt, out, feed, list(want))
    assert list(got) == list(want)
    for k in want:
        assert_logits_close(got[k], want[k], f"{name} {fmt} {backend} {k}")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_seed_loader(name, ckpt, export_dir):
    """transformers.exporters' own ExportedModel.from_pretrained on hfx's ONNX export, called as the model (the
    feature extractor's inputs by keyword): its output class, its outputs transformers' within 1e-4."""
    from transformers.exporters import ExportedModel
    feed = inputs(name)
    out = export_dir(name, "--format", "onnx", "--dynamic")
    got = ExportedModel.from_pretrained(out)(**{k: torch.from_numpy(x) for k, x in feed.items()})
    want = reference(ckpt, name, feed)
    for k in want:
        assert_logits_close(np.asarray(getattr(got, k)), want[k], f"{name} {k} (the seed's loader)")


def test_fixed_shape(ckpt, export_dir):
    """Without --dynamic: the sample's batch and frame count (2 × 91 log-mel frames make 23 after subsampling by 4)."""
    import onnxruntime as ort
    feed = inputs("parakeet_ctc")
    frames = feed["input_features"].shape[1]
    out = export_dir("parakeet_ctc", "--format", "onnx", "--batch-size", "2", "--sequence-length", str(frames))
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    want = reference(ckpt, "parakeet_ctc", feed)["logits"]
    assert sess.get_outputs()[0].shape == list(want.shape)
    assert_logits_close(sess.run(None, feed)[0], want, "parakeet fixed shape")


# (variant, the field, config overrides (of the encoder's config) under which transformers' outputs move)
FIELDS = [
    ("parakeet_ctc", "scale_input", {"scale_input": False}),
    ("parakeet_ctc", "attention_bias", {"attention_bias": False}),
    ("parakeet_ctc", "convolution_bias", {"convolution_bias": False}),
    ("parakeet_ctc", "hidden_act", {"hidden_act": "gelu"}),
]


@pytest.mark.parametrize("name,field,overrides", FIELDS, ids=[f[1] for f in FIELDS])
def test_fields_are_visible(name, field, overrides, ckpt):
    import transformers
    feed = inputs(name)
    base = reference(ckpt, name, feed)["logits"]
    config = transformers.AutoConfig.from_pretrained(str(ckpt(name)))
    for k, v in overrides.items():
        setattr(config.encoder_config, k, v)
    model = transformers.ParakeetForCTC.from_pretrained(str(ckpt(name)), config=config, attn_implementation="eager")
    with torch.no_grad():
        got = model.eval()(**{k: torch.from_numpy(x) for k, x in feed.items()}).logits.numpy()
    assert np.abs(got - base).max() > 100 * PARITY_ATOL, f"{name}: {field} does not move the logits"


def test_mask_is_visible(ckpt):
    """Without attention_mask transformers masks nothing: the padded row's logits move (the subsampling's zeroed steps,
    the attention's masked queries and keys, the convolution module's zeroed frames)."""
    feed = inputs("parakeet_ctc")
    base = reference(ckpt, "parakeet_ctc", feed)["logits"]
    unmasked = reference(ckpt, "parakeet_ctc", {"input_features": feed["input_features"]})["logits"]
    assert np.abs(base[1] - unmasked[1]).max() > 100 * PARITY_ATOL


@pytest.mark.parametrize("edit,words", [
    ({"hidden_size": 30}, "num_attention_heads"),
    ({"conv_kernel_size": 4}, "conv_kernel_size"),
    ({"hidden_act": "swiglu"}, "hidden_act"),
])
def test_bad_configs(edit, words, ckpt, tmp_path):
    assert_config_refused(ckpt("parakeet_encoder"), tmp_path, edit, words, "--dynamic")


def test_missing_encoder_config_refused(ckpt, tmp_path):
    assert_config_refused(ckpt("parakeet_ctc"), tmp_path, {"encoder_config": None}, "encoder_config", "--dynamic")


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
def test_transcribe_example(fmt, ckpt, export_dir, tmp_path):
    """examples/transcribe_ctc.py on WAV files: its text is transformers' (ParakeetForCTC.generate, whose padded frames
    are blank, then the tokenizer's batch_decode) on the same samples."""
    import subprocess
    import sys

    import transformers
    from mmutil import write_wav
    out = export_dir("parakeet_ctc", "--format", fmt, "--dynamic")
    files = [write_wav(tmp_path / f"s{i}.wav", x) for i, x in enumerate(sine_sweeps())]
    example = REPO / "examples" / "transcribe_ctc.py"
    proc = subprocess.run([sys.executable, str(example), str(out), *map(str, files)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    read = [np.frombuffer(f.read_bytes()[44:], dtype="<i2").astype(np.float32) / 32768.0 for f in files]
    feed = processor("parakeet_ctc")(read, sampling_rate=16000, return_tensors="pt")
    model = transformers.ParakeetForCTC.from_pretrained(str(ckpt("parakeet_ctc")), attn_implementation="eager").eval()
    want = transformers.AutoTokenizer.from_pretrained(str(ckpt("parakeet_ctc"))).batch_decode(model.generate(**feed))
    assert proc.stdout.splitlines() == want and any(want), (proc.stdout, want)

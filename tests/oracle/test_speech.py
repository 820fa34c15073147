"""Speech encoders over the raw waveform (src/arch/speech.c) against transformers: Wav2Vec2, HuBERT, UniSpeech,
UniSpeech-SAT, WavLM, Wav2Vec2-Conformer and Data2VecAudio as CTC models (logits per frame), bare encoders (last_hidden_state and the normed
conv features) and utterance classifiers.

Checkpoints are tiny (hidden 32, conv channels 16) over the real feature encoder's kernels and strides (a frame
every 320 samples, 400 samples' receptive field); the inputs are sine sweeps of 1.0 and 0.55 seconds at 16 kHz
through each model's own feature extractor (Wav2Vec2FeatureExtractor: normalized per utterance, zero-padded, with
attention_mask where the model is layer-normed), batch 2. Every output within 1e-4 of transformers at every frame
in ONNX Runtime, OpenVINO, torch (.pt2) and ExecuTorch; the config fields that change the graph each in a variant
(group- or layer-normed feature encoders, post- or pre-norm layers, conv biases, an odd or even positional kernel,
HuBERT's optional projection norm and positional BatchNorm, WavLM's gated relative position bias, the conformer's
relative, rotary or no positions and depthwise kernels, Data2VecAudio's positional stack, the Hub's older
weight-norm names); bad configs refused by name. examples/transcribe_ctc.py decodes the CTC logits greedily with
the model's tokenizer."""

from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest
import torch

from conftest import PARITY_ATOL, assert_config_refused, assert_logits_close, built_once, cached_exports, describe, run_forward, run_hfx
from initutil import init_weights
from mmutil import write_wav

BASE = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
            conv_dim=(16,) * 7, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4, vocab_size=24,
            num_labels=3, classifier_proj_size=20, hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
            feat_proj_dropout=0.0, final_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0)
# large-lv60's: LayerNorm after every convolution (its processor returns attention_mask), pre-norm layers,
# biased convolutions; an odd positional kernel
STABLE = dict(feat_extract_norm="layer", do_stable_layer_norm=True, conv_bias=True, num_conv_pos_embeddings=15)


@dataclasses.dataclass(frozen=True)
class Variant:
    cls: str
    config_class: str
    config: dict
    legacy_names: bool = False  # the weight norm saved as weight_g / weight_v (the Hub's older checkpoints)


VARIANTS = {
    "wav2vec2_ctc": Variant("Wav2Vec2ForCTC", "Wav2Vec2Config", BASE),
    "wav2vec2_ctc_stable": Variant("Wav2Vec2ForCTC", "Wav2Vec2Config", {**BASE, **STABLE, "hidden_act": "gelu_new"}),
    "wav2vec2_ctc_legacy": Variant("Wav2Vec2ForCTC", "Wav2Vec2Config", BASE, legacy_names=True),
    "wav2vec2_model": Variant("Wav2Vec2Model", "Wav2Vec2Config", BASE),
    "wav2vec2_classifier": Variant("Wav2Vec2ForSequenceClassification", "Wav2Vec2Config", {**BASE, **STABLE}),
    # hubert-base's: no LayerNorm before the projection; hubert-large's: layer-normed, pre-norm
    "hubert_ctc": Variant("HubertForCTC", "HubertConfig", {**BASE, "feat_proj_layer_norm": False}),
    "hubert_model": Variant("HubertModel", "HubertConfig", {**BASE, **STABLE}),
    # a BatchNorm before the positional convolution
    "hubert_classifier": Variant("HubertForSequenceClassification", "HubertConfig",
                                 {**BASE, "conv_pos_batch_norm": True}),
    "unispeech_ctc": Variant("UniSpeechForCTC", "UniSpeechConfig", BASE),
    "unispeech_model": Variant("UniSpeechModel", "UniSpeechConfig", {**BASE, **STABLE}),
    "unispeech_sat_ctc": Variant("UniSpeechSatForCTC", "UniSpeechSatConfig", {**BASE, **STABLE}),
    "unispeech_sat_classifier": Variant("UniSpeechSatForSequenceClassification", "UniSpeechSatConfig", BASE),
    # a relative position bias over the frames, gated per layer, query and head (max_bucket_distance below the
    # longer input's 49 frames: saturated buckets too); wavlm-large's layer-normed, pre-norm layers
    "wavlm_ctc": Variant("WavLMForCTC", "WavLMConfig", {**BASE, "num_buckets": 24, "max_bucket_distance": 20}),
    "wavlm_model": Variant("WavLMModel", "WavLMConfig", {**BASE, **STABLE, "num_buckets": 32, "max_bucket_distance": 40}),
    "wavlm_classifier": Variant("WavLMForSequenceClassification", "WavLMConfig", BASE),
    # conformer layers (half feed-forwards, the convolution module's GLU, depthwise convolution and BatchNorm):
    # Transformer-XL's relative positions (its default), rotary, none; swish; the encoder's LayerNorm after them
    "w2v_conformer_ctc": Variant("Wav2Vec2ConformerForCTC", "Wav2Vec2ConformerConfig",
                                 {**BASE, "conv_depthwise_kernel_size": 7}),
    "w2v_conformer_rotary": Variant("Wav2Vec2ConformerForCTC", "Wav2Vec2ConformerConfig",
                                    {**BASE, **STABLE, "position_embeddings_type": "rotary",
                                     "rotary_embedding_base": 500, "conv_depthwise_kernel_size": 5}),
    "w2v_conformer_model": Variant("Wav2Vec2ConformerModel", "Wav2Vec2ConformerConfig",
                                   {**BASE, "position_embeddings_type": None, "hidden_act": "gelu",
                                    "conv_depthwise_kernel_size": 3}),
    "w2v_conformer_classifier": Variant("Wav2Vec2ConformerForSequenceClassification", "Wav2Vec2ConformerConfig",
                                        {**BASE, **STABLE, "conv_depthwise_kernel_size": 5}),
    # a stack of positional convolutions (each LayerNormed), layer-normed conv features, post-norm layers
    "data2vec_audio_ctc": Variant("Data2VecAudioForCTC", "Data2VecAudioConfig",
                                  {**BASE, "num_conv_pos_embeddings": 3, "conv_pos_kernel_size": 5}),
    "data2vec_audio_model": Variant("Data2VecAudioModel", "Data2VecAudioConfig",
                                    {**BASE, "num_conv_pos_embeddings": 2, "conv_pos_kernel_size": 4}),
    "data2vec_audio_classifier": Variant("Data2VecAudioForSequenceClassification", "Data2VecAudioConfig",
                                         {**BASE, "num_conv_pos_embeddings": 2, "conv_pos_kernel_size": 3}),
}
TORCH_SAMPLED = ["wav2vec2_ctc", "wav2vec2_classifier", "hubert_model", "hubert_classifier", "wavlm_model",
                 "w2v_conformer_ctc", "w2v_conformer_rotary", "data2vec_audio_ctc"]
ET_SAMPLED = ["wav2vec2_ctc", "wav2vec2_ctc_stable", "wavlm_ctc", "w2v_conformer_ctc", "data2vec_audio_model"]


def masked(name):
    """The processor returns attention_mask where the feature encoder is layer-normed (Data2VecAudio's always is)."""
    v = VARIANTS[name]
    return v.config.get("feat_extract_norm") == "layer" or v.cls.startswith("Data2VecAudio")


def processor(name):
    import transformers
    return transformers.Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0,
                                                 do_normalize=True, return_attention_mask=masked(name))


def model_class(v: Variant):
    import transformers
    return getattr(transformers, v.cls)


VOCAB = ["<pad>", "<s>", "</s>", "<unk>", "|", *"etaoinshrdlucmfwypgb"[:BASE["vocab_size"] - 5]]


def tokenizer(path):
    """A CTC tokenizer of the model's vocabulary (Wav2Vec2CTCTokenizer: the pad token is the blank, "|" the word
    delimiter), saved beside the weights."""
    import transformers
    (path / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(VOCAB)}))
    transformers.Wav2Vec2CTCTokenizer(str(path / "vocab.json")).save_pretrained(path)


def _legacy(path):
    """Rename the weight norm's parametrizations to the names older checkpoints carry."""
    from safetensors.torch import load_file, save_file
    f = path / "model.safetensors"
    tensors = load_file(str(f))
    renamed = {k.replace("parametrizations.weight.original0", "weight_g")
                .replace("parametrizations.weight.original1", "weight_v"): t for k, t in tensors.items()}
    assert renamed.keys() != tensors.keys()
    save_file(renamed, str(f), metadata={"format": "pt"})


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    import transformers
    root = tmp_path_factory.mktemp("speech")

    def make(name):
        v = VARIANTS[name]
        torch.manual_seed(0)
        config = getattr(transformers, v.config_class)(**v.config, attn_implementation="eager")
        model = model_class(v)(config).eval()
        init_weights(model, 1, lambda n: None)
        g = torch.Generator().manual_seed(2)
        with torch.no_grad():  # HuBERT's BatchNorm statistics away from the identity
            for n, b in model.named_buffers():
                if n.endswith("running_mean"):
                    b.copy_(0.3 * torch.randn(b.shape, generator=g))
                elif n.endswith("running_var"):
                    b.copy_(0.5 + torch.rand(b.shape, generator=g))
        model.save_pretrained(root / name)
        processor(name).save_pretrained(root / name)
        if v.cls.endswith("ForCTC"):
            tokenizer(root / name)
        if v.legacy_names:
            _legacy(root / name)
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("speech-exports"), ckpt)


def sweep(seconds, f0, f1, rate=16000):
    """A sine sweep from f0 to f1 Hz, with a little noise."""
    t = np.arange(int(seconds * rate)) / rate
    phase = 2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * seconds))
    return (0.6 * np.sin(phase) + 0.01 * np.random.default_rng(int(f0)).standard_normal(t.shape)).astype(np.float32)


def inputs(name):
    """input_values [2, 16000] (and attention_mask) from the model's feature extractor: 1.0 and 0.55 seconds."""
    audio = [sweep(1.0, 200, 3000), sweep(0.55, 800, 300)]
    out = processor(name)(audio, sampling_rate=16000, padding=True, return_tensors="np")
    feed = {"input_values": out.input_values.astype(np.float32)}
    if masked(name):
        feed["attention_mask"] = out.attention_mask.astype(np.int64)
    assert feed["input_values"].shape == (2, 16000)
    return feed


def reference(ckpt, name, feed):
    v = VARIANTS[name]
    model = model_class(v).from_pretrained(str(ckpt(name)), attn_implementation="eager").eval()
    with torch.no_grad():
        out = model(**{k: torch.from_numpy(x) for k, x in feed.items()})
    if v.cls.endswith("Model"):
        ref = {"last_hidden_state": out.last_hidden_state.numpy()}
        if getattr(out, "extract_features", None) is not None:
            ref["extract_features"] = out.extract_features.numpy()
        return ref
    return {"logits": out.logits.numpy()}


def compare(got: dict, want: dict, label: str):
    assert list(got) == list(want), f"{label}: outputs {list(got)}, transformers {list(want)}"
    for k in want:
        assert_logits_close(got[k], want[k], f"{label} {k}")


# every variant in ONNX Runtime and OpenVINO; some in torch (.pt2) and ExecuTorch (XNNPACK, portable)
RUNS = ([(n, "onnx", ()) for n in VARIANTS] + [(n, "openvino", ()) for n in VARIANTS] +
        [(n, "dynamo", ()) for n in TORCH_SAMPLED] +
        [(n, "executorch", (b,)) for n in ET_SAMPLED for b in ("xnnpack", "portable")])


@pytest.mark.parametrize("name,fmt,backend", RUNS, ids=[f"{n}-{f}{'-' + b[0] if b else ''}" for n, f, b in RUNS])
def test_parity(name, fmt, backend, ckpt, export_dir, tmp_path):
    """Every output at every frame within 1e-4 of transformers; the graph's inputs are the processor's."""
    feed = inputs(name)
    if fmt == "executorch":
        cfg = tmp_path / "et.json"
        shapes = {k: {"0": {"name": "batch_size", "min": 1, "max": 4},
                      "1": {"name": "sequence_length", "min": 400, "max": 32000}} for k in feed}
        cfg.write_text(json.dumps({"export_format": "executorch", "backend": backend[0], "dynamic_shapes": shapes}))
        out = export_dir(name, "--config", str(cfg))
    else:
        out = export_dir(name, "--format", fmt, "--dynamic")
    want = reference(ckpt, name, feed)
    compare(run_forward(fmt, out, feed, list(want)), want, f"{name} {fmt} {backend}")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_seed_loader(name, ckpt, export_dir):
    """transformers.exporters' own ExportedModel.from_pretrained on hfx's ONNX export, called as the model (the
    processor's inputs by keyword): the model's output class, its outputs transformers' within 1e-4."""
    from transformers.exporters import ExportedModel
    feed = inputs(name)
    out = export_dir(name, "--format", "onnx", "--dynamic")
    got = ExportedModel.from_pretrained(out)(**{k: torch.from_numpy(x) for k, x in feed.items()})
    want = reference(ckpt, name, feed)
    compare({k: np.asarray(getattr(got, k)) for k in want}, want, f"{name} (the seed's loader)")


def test_fixed_shape(ckpt, export_dir):
    """Without --dynamic the batch and sample count are the sample's: a 2 × 16000 sample makes 49 frames."""
    import onnxruntime as ort
    out = export_dir("wav2vec2_ctc", "--format", "onnx", "--batch-size", "2", "--sequence-length", "16000")
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert sess.get_inputs()[0].shape == [2, 16000] and sess.get_outputs()[0].shape == [2, 49, 24]
    feed = inputs("wav2vec2_ctc")
    compare({"logits": sess.run(None, feed)[0]}, reference(ckpt, "wav2vec2_ctc", feed), "fixed shape")


@pytest.mark.parametrize("name", ["wav2vec2_ctc", "data2vec_audio_model"])
def test_seed_io_names(name, ckpt, export_dir, tmp_path):
    """The Python system's own ONNX export of the same checkpoint (transformers.exporters' OnnxExporter, given the
    processor's inputs) has hfx's inputs and outputs, by name and in order."""
    import warnings

    import onnx
    from transformers.exporters import OnnxExporter
    from transformers.exporters.configs import OnnxConfig
    feed = inputs(name)
    model = model_class(VARIANTS[name]).from_pretrained(str(ckpt(name)), attn_implementation="eager").eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        OnnxExporter().export(model, {k: torch.from_numpy(x) for k, x in feed.items()},
                              OnnxConfig(dynamic=True)).save_pretrained(str(tmp_path / "seed"))
    seed = onnx.load(str(tmp_path / "seed" / "model.onnx"), load_external_data=False).graph
    ours = onnx.load(str(export_dir(name, "--format", "onnx", "--dynamic") / "model.onnx"),
                     load_external_data=False).graph
    assert [i.name for i in ours.input] == [i.name for i in seed.input] == list(feed)
    assert [o.name for o in ours.output] == [o.name for o in seed.output]


def test_short_sample_refused(ckpt, tmp_path):
    """A fixed sample shorter than one frame's 400 samples is refused by name, nothing written."""
    proc = run_hfx(["export", ckpt("wav2vec2_ctc"), tmp_path / "out", "--format", "onnx"])  # the default 2 × 16
    assert proc.returncode == 2 and "input_values" in proc.stderr and "400" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


# (variant, what the feature is, config overrides that switch it off in transformers)
FEATURES = [
    ("wav2vec2_ctc_stable", "pre-norm layers", {"do_stable_layer_norm": False}),
    ("w2v_conformer_ctc", "relative positions", {"position_embeddings_type": None}),
    ("w2v_conformer_rotary", "rotary positions", {"position_embeddings_type": None}),
]


@pytest.mark.parametrize("name,feature,overrides", FEATURES, ids=[f[0] for f in FEATURES])
def test_features_are_visible(ckpt, name, feature, overrides):
    """Switching the feature off in transformers' own config moves its outputs by >> the tolerance, so parity of
    the export proves it; and the padded row's frames move without its attention_mask."""
    v = VARIANTS[name]
    feed = inputs(name)
    base = reference(ckpt, name, feed)
    other = model_class(v).from_pretrained(str(ckpt(name)), attn_implementation="eager", **overrides).eval()
    with torch.no_grad():
        got = other(**{k: torch.from_numpy(x) for k, x in feed.items()}).logits.numpy()
    assert np.abs(got - base["logits"]).max() > 100 * PARITY_ATOL, f"{name}: {feature} does not move the logits"


def test_batch_norm_is_visible(ckpt):
    """HuBERT's positional BatchNorm made the identity moves the classifier's logits."""
    feed = inputs("hubert_classifier")
    base = reference(ckpt, "hubert_classifier", feed)["logits"]
    model = model_class(VARIANTS["hubert_classifier"]).from_pretrained(str(ckpt("hubert_classifier"))).eval()
    bn = model.hubert.encoder.pos_conv_embed.batch_norm
    with torch.no_grad():
        bn.running_mean.zero_(), bn.running_var.fill_(1.0), bn.weight.fill_(1.0), bn.bias.zero_()
        got = model(torch.from_numpy(feed["input_values"])).logits.numpy()
    assert np.abs(got - base).max() > 100 * PARITY_ATOL


def test_relative_bias_is_visible(ckpt):
    """WavLM's relative position bias zeroed (its bucket table) moves the CTC logits."""
    feed = inputs("wavlm_ctc")
    base = reference(ckpt, "wavlm_ctc", feed)["logits"]
    model = model_class(VARIANTS["wavlm_ctc"]).from_pretrained(str(ckpt("wavlm_ctc")), attn_implementation="eager").eval()
    with torch.no_grad():
        model.wavlm.encoder.layers[0].attention.rel_attn_embed.weight.zero_()
        got = model(torch.from_numpy(feed["input_values"])).logits.numpy()
    assert np.abs(got - base).max() > 100 * PARITY_ATOL


def test_mask_is_visible(ckpt):
    feed = inputs("wav2vec2_ctc_stable")
    base = reference(ckpt, "wav2vec2_ctc_stable", feed)["logits"]
    unmasked = reference(ckpt, "wav2vec2_ctc_stable", {"input_values": feed["input_values"]})["logits"]
    assert np.abs(base[1] - unmasked[1]).max() > 100 * PARITY_ATOL


@pytest.mark.parametrize("edit,words", [
    ({"feat_extract_norm": "batch"}, "feat_extract_norm"),
    ({"conv_kernel": [10, 3]}, "conv_kernel"),
    ({"conv_stride": [5, 2, 2, 2, 2, 2, 0]}, "conv_stride[6]"),
    ({"hidden_size": 30}, "num_attention_heads"),
    ({"num_conv_pos_embedding_groups": 5}, "num_conv_pos_embedding_groups"),
    ({"add_adapter": True}, "add_adapter"),
    ({"adapter_attn_dim": 16}, "adapter_attn_dim"),
    ({"hidden_act": "swiglu"}, "hidden_act"),
    # a receptive field past any input (2^16-wide kernels and strides, seven times): refused, not overflowed
    ({"conv_kernel": [65536] * 7, "conv_stride": [65536] * 7}, "feature encoder"),
])
def test_bad_configs(ckpt, tmp_path, edit, words):
    assert_config_refused(ckpt("wav2vec2_ctc"), tmp_path, edit, words, "--dynamic")


def test_weighted_layer_sum_refused(ckpt, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(ckpt("wav2vec2_classifier"), bad)
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps({**cfg, "use_weighted_layer_sum": True}))
    proc = run_hfx(["export", bad, tmp_path / "out", "--format", "onnx", "--dynamic"])
    assert proc.returncode == 2 and "use_weighted_layer_sum" in proc.stderr, describe(proc)


@pytest.mark.parametrize("name,fmt", [("wav2vec2_ctc", "onnx"), ("data2vec_audio_ctc", "openvino"),
                                      ("hubert_ctc", "onnx")])
def test_transcribe_example(name, fmt, ckpt, export_dir, tmp_path):
    """examples/transcribe_ctc.py on WAV files: the logits within 1e-4 of transformers' and its greedy CTC text
    transformers' own (argmax, then the processor's batch_decode)."""
    import subprocess
    import sys
    from pathlib import Path

    import transformers
    out = export_dir(name, "--format", fmt, "--dynamic")
    audio = [sweep(1.0, 200, 3000), sweep(0.55, 800, 300)]
    files = []
    for i, a in enumerate(audio):
        files.append(tmp_path / f"a{i}.wav")
        write_wav(files[-1], a)
    example = Path(__file__).resolve().parents[2] / "examples" / "transcribe_ctc.py"
    proc = subprocess.run([sys.executable, str(example), str(out), *map(str, files), "--print-logits",
                           str(tmp_path / "l.npz")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    read = [np.frombuffer(open(f, "rb").read()[44:], dtype="<i2").astype(np.float32) / 32768.0 for f in files]
    proc_in = processor(name)(read, sampling_rate=16000, padding=True, return_tensors="pt")
    model = model_class(VARIANTS[name]).from_pretrained(str(ckpt(name)), attn_implementation="eager").eval()
    with torch.no_grad():
        logits = model(**proc_in).logits
    assert_logits_close(np.load(tmp_path / "l.npz")["logits"], logits.numpy(), f"{name} example")
    want = transformers.Wav2Vec2CTCTokenizer.from_pretrained(str(ckpt(name))).batch_decode(logits.argmax(-1))
    assert proc.stdout.splitlines() == want and any(want), (proc.stdout, want)


def test_transcribe_example_bad_audio(ckpt, export_dir, tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    out = export_dir("wav2vec2_ctc", "--format", "onnx", "--dynamic")
    (tmp_path / "bad.wav").write_bytes(b"RIFF....WAVE")
    example = Path(__file__).resolve().parents[2] / "examples" / "transcribe_ctc.py"
    proc = subprocess.run([sys.executable, str(example), str(out), str(tmp_path / "bad.wav")], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 2 and "bad.wav" in proc.stderr, proc.stderr

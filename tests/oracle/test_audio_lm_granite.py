"""Granite Speech (src/arch/audio_granite.c, the audio family of src/arch/vlm.c) against transformers, exported for
generation as audio_encoder (input_features [N, T, input_dim] → audio_features: the CTC conformer with Shaw's block
attention and the mid-stack CTC self-conditioning, then the Q-Former over windows of frames), embed_tokens (the audio
token embedded as token 0, as its forward does) and Granite's decode over inputs_embeds (its embedding multiplier on
the merged embeddings).

Its feature extractor (GraniteSpeechFeatureExtractor) needs torchaudio, which has no wheel for the venv's torch: the
features here are what it hands the model — [N, T, input_dim] stacked log-mel frames, the batch padded to the longest
clip, and input_features_mask over the projected tokens (⌈frames / window⌉ · window / downsample_rate of each clip) —
made at random, and the example's extractor is replaced by one that returns them (examples/generate_vlm.py's Granite
path runs unchanged after it).
  * audio_features within 1e-4 of transformers' get_audio_features, two clips of 13 and 7 frames in one call (the
    context blocks and the projector's windows both padded), ONNX Runtime and OpenVINO;
  * greedy generation of 32 tokens from a clip and a prompt by examples/generate_vlm.py equal to transformers'
    generate() token for token, each step's logits within 1e-4: ONNX (multi-token decode), OpenVINO stateful, .pt2
    and ExecuTorch for the first variant, ONNX for the second, ONNX (prefill + decode) and .pt2 for the LoRA form; a
    left-padded batch of 2;
  * each config field the graph reads shown to move transformers' features, and bad configs refused by name."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
import torch

from conftest import REPO, assert_config_refused, assert_logits_close, built_once, cached_exports
from genutil import compare_generation, left_pad
from initutil import init_weights, inject_lora
from mmutil import eager_models, expand_tokens, run_component, write_wav

sys.path.insert(0, str(REPO / "examples"))
import generate_vlm  # noqa: E402

AUDIO_TOKEN = 98
VOCAB = 100
NEW_TOKENS = 32
INPUT_DIM = 16
FRAMES = (13, 7)  # the clips' frames: the first padded to 3 blocks of 6 and 4 windows of 4, the second shorter
ENCODER = dict(input_dim=INPUT_DIM, num_layers=2, hidden_dim=32, feedforward_mult=2, num_heads=4, output_dim=11,
               context_size=6, max_pos_emb=8, conv_kernel_size=5, conv_expansion_factor=2)
PROJECTOR = dict(model_type="blip_2_qformer", hidden_size=24, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=40, encoder_hidden_size=32, cross_attention_frequency=1)
TEXT = dict(model_type="granite", vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, embedding_multiplier=2.0, residual_multiplier=0.5,
            attention_multiplier=0.3, logits_scaling=2.0, bos_token_id=1, eos_token_id=2, pad_token_id=0)
TOP = dict(audio_token_index=AUDIO_TOKEN, has_lora_adapter=False, window_size=4, downsample_rate=2,
           tie_word_embeddings=False)
VARIANTS = {
    "granite_speech": (ENCODER, PROJECTOR, TOP),
    # the released form: a LoRA adapter on the language model's q_proj and v_proj beside the checkpoint (peft's files),
    # which transformers turns on for audio prompts
    "granite_speech_lora": (ENCODER, PROJECTOR, {**TOP, "has_lora_adapter": True}),
    # three layers (the CTC head after the first), an even convolution, its inner width the hidden, a block and a
    # distance table of 5; three Q-Former layers reading the window every other one, gelu_new; windows of 6, 3 queries
    "granite_speech_variant": ({**ENCODER, "num_layers": 3, "conv_kernel_size": 4, "conv_expansion_factor": 1,
                                "feedforward_mult": 3, "context_size": 5, "max_pos_emb": 5},
                               {**PROJECTOR, "num_hidden_layers": 3, "cross_attention_frequency": 2,
                                "hidden_act": "gelu_new"},
                               {**TOP, "window_size": 6, "downsample_rate": 2}),
}
# what GraniteSpeechFeatureExtractor saves (it cannot be built here: torchaudio)
EXTRACTOR = {"feature_extractor_type": "GraniteSpeechFeatureExtractor", "sampling_rate": 16000,
             "melspec_kwargs": {"sample_rate": 16000, "n_fft": 512, "win_length": 400, "hop_length": 160,
                                "n_mels": 80}, "projector_window_size": 4, "projector_downsample_rate": 2}


def _config(name, encoder=None, projector=None, top=None):
    import transformers
    e, p, t = VARIANTS[name]
    return transformers.GraniteSpeechConfig(encoder_config={**e, **(encoder or {})},
                                            projector_config={**p, **(projector or {})}, text_config=TEXT,
                                            **{**t, **(top or {})})


def _model(config):
    import transformers
    torch.manual_seed(0)
    model = transformers.GraniteSpeechForConditionalGeneration(config).eval()
    init_weights(model, 2, lambda n: 1.0 if "embed_tokens" in n or n.endswith("projector.query") else
                 0.3 if "rel_pos_emb" in n else None)
    with torch.no_grad():  # BatchNorm's running statistics, as training leaves them
        for n, b in model.named_buffers():
            if n.endswith("running_mean"):
                b.copy_(0.1 * torch.randn(b.shape))
            if n.endswith("running_var"):
                b.copy_(0.5 + torch.rand(b.shape))
    return model


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    root = tmp_path_factory.mktemp("granite_speech")

    def make(name):
        model = _model(_config(name))
        model.save_pretrained(root / name)
        if name.endswith("_lora"):
            inject_lora(model, root / name, seed=11, target_modules=["q_proj", "v_proj"])
        window, rate = VARIANTS[name][2]["window_size"], VARIANTS[name][2]["downsample_rate"]
        (root / name / "preprocessor_config.json").write_text(json.dumps(
            {**EXTRACTOR, "projector_window_size": window, "projector_downsample_rate": rate}))
        return root / name
    return built_once(make)


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("granite-exports"), ckpt, prefix=("--for-generation", "--quiet"))


@pytest.fixture(scope="module")
def reference(ckpt):
    """The checkpoint in transformers; the LoRA variant's built again with its adapter injected by peft (transformers
    5.24's own adapter loading wants a newer peft than the index holds)."""
    import transformers
    eager = eager_models(ckpt, lambda name: transformers.GraniteSpeechForConditionalGeneration)
    def make(name):
        if not name.endswith("_lora"):
            return eager(name)
        return inject_lora(_model(_config(name)), seed=11, target_modules=["q_proj", "v_proj"]).eval()
    return built_once(make)


def features(name, n):
    """What the extractor gives for n clips: input_features [n, T, input_dim] (the batch padded to its longest clip)
    and input_features_mask [n, tokens] (each clip's projected tokens first)."""
    top = VARIANTS[name][2]
    window, queries = top["window_size"], top["window_size"] // top["downsample_rate"]
    frames = FRAMES[:n]
    x = np.random.default_rng(7).standard_normal((n, max(frames), INPUT_DIM)).astype(np.float32)
    counts = [-(-f // window) * queries for f in frames]
    mask = np.arange(max(counts))[None, :] < np.array(counts)[:, None]
    return x, mask


class StubExtractor:
    """The example's feature extractor, giving `features`' arrays for the clips it is handed."""
    sampling_rate = 16000
    model_input_names = ["input_features", "input_features_mask"]

    def __init__(self, x, mask):
        self.x, self.mask = x, mask

    def __call__(self, audios, **kwargs):
        assert len(audios) == len(self.x)
        return {"input_features": self.x, "input_features_mask": self.mask}


def wavs(tmp_path, n):
    return [write_wav(tmp_path / f"clip{i}.wav", np.zeros(1600 * (i + 1))) for i in range(n)]


def run_example(out, name, rows, mode, tmp_path, monkeypatch):
    """examples/generate_vlm.py from WAV files whose features the stub extractor gives: here, or (ExecuTorch) in the
    executorch virtualenv's worker with the same stub."""
    x, mask = features(name, len(rows))
    paths = wavs(tmp_path, len(rows))
    if not mode.startswith("executorch"):
        import transformers
        monkeypatch.setattr(transformers.AutoFeatureExtractor, "from_pretrained",
                            classmethod(lambda cls, *a, **k: StubExtractor(x, mask)))
        return generate_vlm.generate(out, [], rows, NEW_TOKENS, audio=paths)
    import etutil
    data = tmp_path / "features.npz"
    np.savez(data, x=x, mask=mask)
    code = (STUB + "import sys\nsys.path.insert(0, args[0])\nimport generate_vlm\ntry:\n"
            "    tokens, logits = generate_vlm.generate(Path(args[1]), [], args[2], args[3], audio=args[4])\n"
            "finally:\n    transformers.AutoFeatureExtractor.from_pretrained = _original\n"
            "np.savez(args[5], tokens=np.asarray(tokens), logits=logits)\n")
    result = tmp_path / "result.npz"
    etutil.worker().python(code, [str(REPO / "examples"), str(out), rows, NEW_TOKENS, [str(p) for p in paths],
                                  str(result), str(data)])
    with np.load(result) as z:
        return z["tokens"], z["logits"]


# (the stub in the executorch venv's worker: its features from the npz the test wrote)
STUB = """
from pathlib import Path
import numpy as np, transformers
_data = np.load(args[6])
class _Stub:
    sampling_rate = 16000
    model_input_names = ["input_features", "input_features_mask"]
    def __call__(self, audios, **kwargs):
        return {"input_features": _data["x"], "input_features_mask": _data["mask"]}
_original = transformers.AutoFeatureExtractor.from_pretrained
transformers.AutoFeatureExtractor.from_pretrained = classmethod(lambda cls, *a, **k: _Stub())
"""


def want_generation(model, name, rows):
    x, mask = features(name, len(rows))
    rows = expand_tokens(rows, AUDIO_TOKEN, [int(m.sum()) for m in mask])
    ids, attention = left_pad(rows, 0)
    with torch.no_grad():
        out = model.generate(torch.from_numpy(ids), attention_mask=torch.from_numpy(attention),
                             input_features=torch.from_numpy(x), input_features_mask=torch.from_numpy(mask),
                             max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True,
                             return_dict_in_generate=True)
    return out.sequences[:, ids.shape[1]:].numpy(), torch.stack(out.logits).numpy()


def prompts(n):
    return [[1, 7, AUDIO_TOKEN, 33, 90, 4], [1, AUDIO_TOKEN, 12, 5]][:n]


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_audio_features(name, fmt, export_dir, reference, tmp_path):
    out = export_dir(name, "--format", fmt, "--dynamic")
    x, _ = features(name, 2)
    with torch.no_grad():
        want = reference(name).get_audio_features(torch.from_numpy(x)).pooler_output.numpy()
    got = run_component(out, fmt, "audio_encoder", {"input_features": x}, "audio_features")
    assert_logits_close(got, want, f"{name} {fmt} audio_features")


MODES = {
    "onnx-mtd": ("--format", "onnx", "--dynamic", "--multi-token-decode"),
    "onnx-prefill": ("--format", "onnx", "--dynamic"),
    "openvino": ("--format", "openvino", "--dynamic"),
    "dynamo": ("--format", "dynamo", "--dynamic", "--multi-token-decode"),
    "executorch": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 96}},
        "input_features": {"1": {"name": "audio_frames", "max": 64}}}}),
        "--multi-token-decode", "--max-cache-len", "96"),
}
# the new parts are the encoder's (its features in both runtimes) and the embeddings' handling; Granite's decoder runs
# every layout in the decoder tests: the first variant in four, the second and the LoRA form (prefill + decode and .pt2)
# in fewer
GENERATION_CASES = [("granite_speech", m) for m in MODES if m != "onnx-prefill"] + [("granite_speech_variant",
                                                                                       "onnx-mtd")]
GENERATION_CASES += [("granite_speech_lora", m) for m in ("onnx-prefill", "dynamo")]


@pytest.mark.parametrize("name,mode", GENERATION_CASES)
def test_generation(name, mode, export_dir, reference, tmp_path, monkeypatch):
    out = export_dir(name, *MODES[mode])
    want_tokens, want_logits = want_generation(reference(name), name, prompts(1))
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    tokens, logits = run_example(out, name, prompts(1), mode, tmp_path, monkeypatch)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} {mode}")


@pytest.mark.parametrize("mode", ["onnx-mtd", "openvino"])
def test_generation_batch_of_two(mode, export_dir, reference, tmp_path, monkeypatch):
    """Two prompts of different lengths, left-padded, a clip each (the second shorter: the batch's padded frames are
    its encoder's input, and only its own tokens go into its prompt)."""
    out = export_dir("granite_speech", *MODES[mode])
    want_tokens, want_logits = want_generation(reference("granite_speech"), "granite_speech", prompts(2))
    tokens, logits = run_example(out, "granite_speech", prompts(2), mode, tmp_path, monkeypatch)
    compare_generation(tokens, logits, want_tokens, want_logits, f"granite_speech {mode} batch 2")


# each field the encoder and projector read, changed from the first variant: transformers' features move
FIELDS = [("encoder", {"context_size": 4}), ("encoder", {"max_pos_emb": 7}), ("encoder", {"conv_kernel_size": 3}),
          ("encoder", {"conv_expansion_factor": 1}), ("encoder", {"feedforward_mult": 3}),
          ("encoder", {"num_layers": 3}),
          ("encoder", {"output_dim": 5}), ("projector", {"cross_attention_frequency": 2}),
          ("projector", {"hidden_act": "relu"}), ("projector", {"layer_norm_eps": 0.5}),
          ("top", {"window_size": 6}), ("top", {"downsample_rate": 4})]


@pytest.mark.parametrize("where,edit", FIELDS, ids=[f"{w}-{next(iter(e))}" for w, e in FIELDS])
def test_fields_move_transformers(where, edit):
    x, _ = features("granite_speech", 2)
    with torch.no_grad():
        a = _model(_config("granite_speech")).get_audio_features(torch.from_numpy(x)).pooler_output
        b = _model(_config("granite_speech", **{where: edit})).get_audio_features(torch.from_numpy(x)).pooler_output
    assert a.shape != b.shape or (a - b).abs().max() > 1e-3, f"{edit} does not move the audio features"


def test_lora_matters(reference):
    """The adapter moves transformers' logits: a graph without it would fail the LoRA variant's generation."""
    x, mask = features("granite_speech_lora", 1)
    ids = torch.tensor([[1, 7] + [AUDIO_TOKEN] * int(mask.sum()) + [33, 90]])
    model = reference("granite_speech_lora")
    kwargs = dict(input_ids=ids, input_features=torch.from_numpy(x), input_features_mask=torch.from_numpy(mask))
    with torch.no_grad():
        with_lora = model(**kwargs).logits
        without = _model(_config("granite_speech_lora"))(**kwargs).logits  # the same weights, no adapter
    assert (with_lora - without).abs().max() > 1e-2


@pytest.mark.parametrize("edit,words", [
    ({"has_lora_adapter": True}, "has_lora_adapter is true, but the folder has no LoRA adapter"),
    ({"audio_token_index": 500}, "audio_token_index"),
    ({"window_size": 5}, "not a multiple of downsample_rate"),
    ({"encoder_config": {**ENCODER, "context_size": 9}}, "context_size 9 exceeds max_pos_emb 8"),
    ({"encoder_config": {**ENCODER, "dim_head": 4}}, "dim_head 4"),
    ({"projector_config": {**PROJECTOR, "encoder_hidden_size": 16}}, "encoder_hidden_size 16"),
    ({"projector_config": {**PROJECTOR, "model_type": "bert"}}, "blip_2_qformer"),
])
def test_bad_configs(edit, words, ckpt, tmp_path):
    assert_config_refused(ckpt("granite_speech"), tmp_path, edit, words, "--for-generation")

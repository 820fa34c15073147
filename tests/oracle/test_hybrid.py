"""Hybrid models whose layers mix tokens by attention or by a recurrent state (docs/GENERATION.md,
"Convolution and recurrent state"): LFM2 (Lfm2ForCausalLM), attention layers and gated short
convolutions chosen by layer_types, against transformers' eager torch path.

  * logits of a batch of 3 left-padded prompts longer than the convolution's kernel within 1e-4
    of transformers (padding included), ONNX Runtime and OpenVINO;
  * greedy generation of 32 tokens from those prompts equal to transformers' generate() token for
    token, each step's logits within 1e-4, through the examples' loops: ONNX (multi-token decode;
    prefill + decode), OpenVINO (stateful; stateless), torch.export (.pt2) and ExecuTorch — the
    convolution state past.{i}.conv [batch, hidden, kernel − 1] next to the attention layers' cache;
  * config variants: the layer pattern by layer_types or by full_attn_idxs (attention first and
    last), conv_L_cache 3 and 4, conv_bias, block_ffn_dim_multiplier;
  * what is not written yet (a static cache, io "seed") refused by name with exit code 2."""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest
import torch

from conftest import REPO, assert_logits_close, cached_exports, describe, run_hfx
from genutil import compare_generation

sys.path.insert(0, str(REPO / "examples"))
import decode_loop  # noqa: E402

VOCAB = 160
NEW_TOKENS = 32
PROMPTS = [[5, 6, 7, 8, 9, 10, 11, 3], [12, 13, 14, 15], [1, 20, 30, 40, 50, 60]]


@dataclasses.dataclass(frozen=True)
class Variant:
    config: dict
    full_attn_idxs: tuple | None = None  # written in place of layer_types (the Hub's older configs)


BASE = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=4, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=256, block_multiple_of=16, pad_token_id=0,
            bos_token_id=1, eos_token_id=2)

VARIANTS = {
    # one attention layer among short convolutions of 3 taps; the MLP ⅔ · 64 rounded up to 48
    "lfm2": Variant({**BASE, "layer_types": ["conv", "full_attention", "conv", "conv"], "conv_L_cache": 3}),
    # attention first and last (full_attn_idxs), 4 taps with biases, a wider MLP (× 1.5, rounded)
    "lfm2_bias": Variant({**BASE, "layer_types": ["full_attention", "conv", "conv", "full_attention"],
                          "conv_L_cache": 4, "conv_bias": True, "block_ffn_dim_multiplier": 1.5},
                         full_attn_idxs=(0, 3)),
}


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    import transformers
    root = tmp_path_factory.mktemp("hybrid")
    made = {}

    def get(name):
        if name not in made:
            v = VARIANTS[name]
            torch.manual_seed(0)
            model = transformers.Lfm2ForCausalLM(transformers.Lfm2Config(**v.config)).eval()
            g = torch.Generator().manual_seed(1)
            with torch.no_grad():  # norms around 1, tables and linears large enough to matter
                for n, p in model.named_parameters():
                    if "norm" in n:
                        p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
                    elif "embed" in n:
                        p.copy_(torch.randn(p.shape, generator=g))
                    else:
                        p.copy_(torch.randn(p.shape, generator=g) / p[0].numel() ** 0.5)
            model.save_pretrained(root / name)
            if v.full_attn_idxs is not None:
                cfg = json.loads((root / name / "config.json").read_text())
                cfg.pop("layer_types")
                cfg["full_attn_idxs"] = list(v.full_attn_idxs)
                (root / name / "config.json").write_text(json.dumps(cfg))
            made[name] = root / name
        return made[name]
    return get


@pytest.fixture(scope="module")
def export_dir(ckpt, tmp_path_factory):
    return cached_exports(tmp_path_factory.mktemp("hybrid-exports"), ckpt, prefix=("--quiet",))


@pytest.fixture(scope="module")
def reference(ckpt):
    import transformers
    models = {}

    def get(name):
        if name not in models:
            models[name] = transformers.AutoModelForCausalLM.from_pretrained(str(ckpt(name)),
                                                                            attn_implementation="eager").eval()
        return models[name]
    return get


def padded():
    length = max(map(len, PROMPTS))
    ids, mask = decode_loop.left_pad(PROMPTS, 0, length)
    return ids, mask, np.clip(np.cumsum(mask, axis=1) - 1, 0, None)


def test_full_attn_idxs_written(ckpt):
    """The variant that names its attention layers by full_attn_idxs has no layer_types, and
    transformers reads the same pattern from it."""
    import transformers
    cfg = json.loads((ckpt("lfm2_bias") / "config.json").read_text())
    assert "layer_types" not in cfg and cfg["full_attn_idxs"] == [0, 3]
    assert transformers.AutoConfig.from_pretrained(str(ckpt("lfm2_bias"))).layer_types == \
        VARIANTS["lfm2_bias"].config["layer_types"]


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("name", list(VARIANTS))
def test_logits(name, fmt, export_dir, reference):
    out = export_dir(name, "--format", fmt, "--dynamic")
    ids, mask, pos = padded()
    with torch.no_grad():
        want = reference(name)(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                               position_ids=torch.from_numpy(pos)).logits.numpy()
    feed = {"input_ids": ids, "attention_mask": mask, "position_ids": pos}
    if fmt == "onnx":
        import onnxruntime as ort
        got = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"]).run(["logits"], feed)[0]
    else:
        import openvino as ov
        compiled = ov.Core().compile_model(str(out / "model.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        got = np.array(compiled(feed)["logits"])
    assert_logits_close(got, want, f"{name} {fmt}")


MODES = {
    "onnx-mtd": ("--format", "onnx", "--dynamic", "--multi-token-decode"),
    "onnx-prefill": ("--format", "onnx", "--dynamic"),
    "openvino": ("--format", "openvino", "--dynamic"),
    "openvino-stateless": ("--config-json", json.dumps({"export_format": "openvino", "dynamic": True,
                                                        "stateful": False})),
    "dynamo": ("--format", "dynamo", "--dynamic", "--multi-token-decode"),
    "executorch": ("--config-json", json.dumps({"export_format": "executorch", "dynamic_shapes": {
        "input_ids": {"0": {"name": "batch", "min": 1, "max": 4}, "1": {"name": "sequence", "min": 1, "max": 64}}}}),
        "--multi-token-decode", "--max-cache-len", "64"),
}
RUNTIMES = {"onnx": "generate_onnx", "openvino": "generate_openvino", "dynamo": "generate_torch",
            "executorch": "generate_executorch"}

CASES = [("lfm2", m) for m in MODES] + [("lfm2_bias", "onnx-mtd"), ("lfm2_bias", "openvino")]


def want_generation(reference, name):
    ids, mask, _ = padded()
    with torch.no_grad():
        out = reference(name).generate(torch.from_numpy(ids), attention_mask=torch.from_numpy(mask),
                                       max_new_tokens=NEW_TOKENS, do_sample=False, output_logits=True,
                                       return_dict_in_generate=True)
    return out.sequences[:, ids.shape[1]:].numpy(), torch.stack(out.logits).numpy()


def run_loop(out, mode, tmp_path):
    """The examples' greedy loop on the export: in this process, or (ExecuTorch) in its venv."""
    fmt = decode_loop.read_manifest(out)["export_format"]
    if fmt != "executorch":
        runtime = __import__(RUNTIMES[fmt])
        eos, pad = decode_loop.read_generation_config(out)
        return runtime.generate(runtime.Export(out), PROMPTS, NEW_TOKENS, eos, pad)
    import subprocess
    import etutil
    logits_file = tmp_path / "logits.npz"
    proc = subprocess.run([str(etutil.PYTHON), str(REPO / "examples" / "generate_executorch.py"), str(out),
                           "--input-ids", ";".join(",".join(map(str, p)) for p in PROMPTS),
                           "--max-new-tokens", str(NEW_TOKENS), "--print-logits", str(logits_file)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    with np.load(logits_file) as npz:
        return npz["tokens"], npz["logits"]


@pytest.mark.parametrize("name,mode", CASES)
def test_generation(name, mode, export_dir, reference, tmp_path):
    out = export_dir(name, "--for-generation", *MODES[mode])
    want_tokens, want_logits = want_generation(reference, name)
    assert len(set(want_tokens[0].tolist())) > 2, "the reference must not be a constant run of tokens"
    tokens, logits = run_loop(out, mode, tmp_path)
    compare_generation(tokens, logits, want_tokens, want_logits, f"{name} {mode}")


def test_state_inputs(export_dir):
    """The convolution layers' state is past.{i}.conv [batch, hidden, kernel − 1] in, present.{i}.conv
    out (onnxruntime-genai's names); the attention layer's cache is past_key_values.{i}.*; the
    metadata describes both, and no genai_config.json is claimed for it."""
    import onnx
    out = export_dir("lfm2", "--for-generation", *MODES["onnx-mtd"])
    graph = onnx.load(str(out / "decode.onnx"), load_external_data=False).graph
    dims = {i.name: [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim] for i in graph.input}
    for layer in (0, 2, 3):
        assert dims[f"past.{layer}.conv"][1:] == [32, 2], dims
    assert "past_key_values.1.key" in dims and "past.1.conv" not in dims
    assert {o.name for o in graph.output} >= {"present.0.conv", "present.1.key", "present.3.conv"}
    layers = json.loads((out / "export.json").read_text())["components"]["decode"]["metadata"]["cache"]["layers"]
    assert layers[0] == {"conv": [32, 2]} and layers[1]["heads"] == 2
    assert not (out / "genai_config.json").exists()


@pytest.mark.parametrize("flags,message", [
    (("--format", "onnx", "--for-generation", "--cache", "static", "--max-cache-len", "64"), "a static one"),
    (("--for-generation", "--config-json", json.dumps({"export_format": "onnx", "dynamic": True, "io": "seed"})),
     "io \"seed\""),
])
def test_refused(flags, message, ckpt, tmp_path):
    """What is not written yet: refused by name, exit 2, nothing written."""
    out = tmp_path / "out"
    flags = list(flags)
    if "--config-json" in flags:
        i = flags.index("--config-json")
        cfg = tmp_path / "cfg.json"
        cfg.write_text(flags[i + 1])
        flags[i:i + 2] = ["--config", str(cfg)]
    proc = run_hfx(["export", ckpt("lfm2"), out, *flags])
    assert proc.returncode == 2 and message in proc.stderr and "convolution" in proc.stderr, describe(proc)
    assert not out.exists()


@pytest.mark.parametrize("edit,message", [
    (lambda c: c.update(layer_types=["conv", "full_attention"]), "layer_types' must be a list of num_hidden_layers"),
    (lambda c: c.update(layer_types=["conv", 7, "conv", "conv"]), "layer_types[1] = '(not a string)'"),
    (lambda c: c.update(layer_types=["conv", "sliding_attention", "conv", "conv"]),
     "layer_types[1] = 'sliding_attention'"),
    (lambda c: c.update(conv_L_cache=1), "conv_L_cache"),
    (lambda c: (c.pop("layer_types"), c.update(full_attn_idxs="all")), "full_attn_idxs"),
])
def test_bad_config(edit, message, ckpt, tmp_path):
    """A config that names other layer kinds, or malformed ones: a clear error, exit 2, no output."""
    import shutil
    src = tmp_path / "ckpt"
    shutil.copytree(ckpt("lfm2"), src)
    cfg = json.loads((src / "config.json").read_text())
    edit(cfg)
    (src / "config.json").write_text(json.dumps(cfg))
    out = tmp_path / "out"
    proc = run_hfx(["export", src, out, "--format", "onnx", "--for-generation", "--dynamic"])
    assert proc.returncode == 2 and message in proc.stderr, describe(proc)
    assert not out.exists()

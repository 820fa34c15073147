"""A PEFT LoRA adapter saved beside a checkpoint (adapter_config.json and adapter_model.safetensors, as peft writes
them; src/hf/checkpoint.c's hfx_checkpoint_add_lora, src/arch/weights.c's hfx_weight_lora): every linear it targets
adds scale · B·A·x, as peft computes it. The reference is transformers' model with the same adapter injected by peft
(transformers 5.24's own adapter loading wants a newer peft than the index holds); Granite Speech's released form is
tested in test_audio_lm_granite.py.
  * a Llama with an adapter on q_proj, v_proj and down_proj: the plain forward in ONNX Runtime and OpenVINO within 1e-4
    of the adapted model (padded rows included), use_rslora's √r scale too, and the adapter shown to move the logits;
    with int8 weights near the adapted model and far from the base one;
  * adapters hfx does not apply refused by name (DoRA, per-module ranks, a bias, modules saved whole, a missing
    weights file), nothing written; an adapter on a module hfx's graph has no linear for is refused as unused
    tensors rather than dropped."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from conftest import assert_logits_close, describe, run_forward, run_hfx
from initutil import inject_lora

CONFIG = dict(vocab_size=120, hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=64, tie_word_embeddings=False)


def _model():
    import transformers
    torch.manual_seed(0)
    config = transformers.LlamaConfig(**CONFIG)
    return transformers.LlamaForCausalLM._from_config(config, attn_implementation="eager").eval()


def _checkpoint(tmp_path, **lora):
    ckpt = tmp_path / "ckpt"
    _model().save_pretrained(ckpt)
    return ckpt, inject_lora(_model(), ckpt, **{"target_modules": ["q_proj", "v_proj", "down_proj"], **lora})


def _inputs():
    ids = np.array([[5, 17, 33, 40, 8, 9], [0, 0, 7, 3, 12, 90]], np.int64)
    mask = (np.arange(6)[None, :] >= np.array([[0], [2]])).astype(np.int64)
    return ids, mask


@pytest.mark.parametrize("fmt", ["onnx", "openvino"])
@pytest.mark.parametrize("lora", [{}, {"use_rslora": True, "lora_alpha": 3}], ids=["alpha-over-r", "rslora"])
def test_forward(fmt, lora, tmp_path):
    ckpt, model = _checkpoint(tmp_path, **lora)
    out = tmp_path / "out"
    proc = run_hfx(["export", ckpt, out, "--format", fmt, "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    ids, mask = _inputs()
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits.numpy()
        plain = _model()(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits.numpy()
    assert np.abs(want - plain).max() > 1e-2, "the adapter must move the logits"
    positions = np.broadcast_to(np.arange(ids.shape[1]), ids.shape).astype(np.int64)  # (transformers' default)
    got = run_forward(fmt, out, {"input_ids": ids, "attention_mask": mask, "position_ids": positions})["logits"]
    assert_logits_close(got, want, f"LoRA {fmt} {lora}")


def test_quantized(tmp_path):
    """The adapter survives int8 weights (its A and B quantized like any linear): the logits stay near the adapted
    model's (int8's error here is under 0.01) and far from the base model's (0.6 away), which a dropped adapter gives."""
    ckpt, model = _checkpoint(tmp_path)
    out = tmp_path / "out"
    proc = run_hfx(["export", ckpt, out, "--format", "onnx", "--dynamic", "--quantize", "int8"])
    assert proc.returncode == 0, describe(proc)
    ids, mask = _inputs()
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits.numpy()
        plain = _model()(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits.numpy()
    positions = np.broadcast_to(np.arange(ids.shape[1]), ids.shape).astype(np.int64)
    got = run_forward("onnx", out, {"input_ids": ids, "attention_mask": mask, "position_ids": positions})["logits"]
    assert np.abs(got - want).max() < 0.05 and np.abs(got - plain).max() > 0.3


@pytest.mark.parametrize("edit,words", [
    ({"use_dora": True}, "use_dora"),
    ({"rank_pattern": {"q_proj": 8}}, "rank_pattern"),
    ({"bias": "all"}, "bias 'all'"),
    ({"modules_to_save": ["lm_head"]}, "modules_to_save"),
    ({"peft_type": "IA3"}, "peft_type 'IA3'"),
    ({"r": 0}, "'r' must be a positive integer"),
])
def test_refused(edit, words, tmp_path):
    ckpt, _ = _checkpoint(tmp_path)
    cfg = json.loads((ckpt / "adapter_config.json").read_text())
    (ckpt / "adapter_config.json").write_text(json.dumps({**cfg, **edit}))
    proc = run_hfx(["export", ckpt, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2 and words in proc.stderr and "adapter_config.json" in proc.stderr, describe(proc)
    assert not (tmp_path / "out").exists()


def test_missing_weights_refused(tmp_path):
    ckpt, _ = _checkpoint(tmp_path)
    (ckpt / "adapter_model.safetensors").unlink()
    proc = run_hfx(["export", ckpt, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2 and "adapter_model.safetensors: not found" in proc.stderr, describe(proc)


def test_untargetable_module_refused(tmp_path):
    """An adapter on the embedding table (peft adds it as lora_embedding_A/B) has no linear in hfx's graph: refused
    as tensors the export would drop."""
    ckpt, _ = _checkpoint(tmp_path, target_modules=["embed_tokens", "q_proj"])
    proc = run_hfx(["export", ckpt, tmp_path / "out", "--format", "onnx"])
    assert proc.returncode == 2 and "lora.base_model.model.model.embed_tokens" in proc.stderr, describe(proc)

"""A PEFT LoRA adapter saved beside a checkpoint (adapter_config.json and adapter_model.safetensors, as peft writes
them; src/hf/checkpoint.c's hfx_checkpoint_add_lora, src/arch/weights.c's hfx_weight_lora): every linear it targets
adds scale · B·A·x, as peft computes it. The reference is transformers' model with the same adapter injected by peft
(transformers 5.24's own adapter loading wants a newer peft than the index holds); Granite Speech's released form is
tested in test_audio_lm_granite.py.
  * a Llama with an adapter on q_proj, v_proj and down_proj: the plain forward in ONNX Runtime and OpenVINO within 1e-4
    of the adapted model (padded rows included), use_rslora's √r scale too, and the adapter shown to move the logits;
    with int8 weights near the adapted model and far from the base one;
  * a BERT encoder and Whisper (both stacks) with adapters on their attention and MLP linears, ONNX Runtime;
  * a Phi-3 with an adapter on its fused qkv_proj and gate_up_proj (each part its columns of the update), ONNX Runtime;
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
    _assert_adapted(fmt, out, model, _model(), f"LoRA {fmt} {lora}")


def _assert_adapted(fmt, out, model, base, label):
    """The export's logits over _inputs() within 1e-4 of the adapted model's, which the adapter moved off the base's."""
    ids, mask = _inputs()
    with torch.no_grad():
        want = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits.numpy()
        plain = base(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits.numpy()
    assert np.abs(want - plain).max() > 1e-2, "the adapter must move the logits"
    positions = np.broadcast_to(np.arange(ids.shape[1]), ids.shape).astype(np.int64)  # (transformers' default)
    got = run_forward(fmt, out, {"input_ids": ids, "attention_mask": mask, "position_ids": positions})["logits"]
    assert_logits_close(got, want, label)


def _other(kind):
    """An encoder (BertModel) or an encoder-decoder (WhisperForConditionalGeneration), tiny, eager attention."""
    import transformers
    torch.manual_seed(0)
    if kind == "wav2vec2":
        config = transformers.Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                             intermediate_size=48, conv_dim=(8, 8), conv_stride=(5, 2),
                                             conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                             num_conv_pos_embedding_groups=4, vocab_size=20)
        return transformers.Wav2Vec2Model._from_config(config, attn_implementation="eager").eval()
    if kind == "bert":
        config = transformers.BertConfig(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                         intermediate_size=48, max_position_embeddings=64)
        return transformers.BertModel._from_config(config, attn_implementation="eager").eval()
    config = transformers.WhisperConfig(vocab_size=120, d_model=32, encoder_layers=2, decoder_layers=2,
                                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48,
                                        decoder_ffn_dim=48, num_mel_bins=8, max_source_positions=50,
                                        max_target_positions=64, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                        decoder_start_token_id=1)
    return transformers.WhisperForConditionalGeneration._from_config(config, attn_implementation="eager").eval()


# the linears each family's builder reads through its own helper: BERT's attention (query, value), Whisper's q_proj and
# v_proj in both stacks and the encoder's fc1, wav2vec 2.0's q_proj and v_proj (the speech towers' linears)
OTHER_TARGETS = {"bert": ["query", "value"], "whisper": ["q_proj", "v_proj", "fc1"], "wav2vec2": ["q_proj", "v_proj"]}


@pytest.mark.parametrize("kind", list(OTHER_TARGETS))
def test_other_families(kind, tmp_path):
    """An adapter on an encoder's, an encoder-decoder's or a speech tower's linears (the classic LoRA fine-tune of
    Whisper): the plain
    forward in ONNX Runtime within 1e-4 of the adapted model, the adapter shown to move its outputs."""
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    _other(kind).save_pretrained(ckpt)
    model = inject_lora(_other(kind), ckpt, target_modules=OTHER_TARGETS[kind])
    proc = run_hfx(["export", ckpt, out, "--format", "onnx", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    if kind == "bert":
        ids, mask = _inputs()
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        kwargs, key = {k: torch.from_numpy(v) for k, v in feed.items()}, "last_hidden_state"
    elif kind == "wav2vec2":
        feed = {"input_values": np.random.default_rng(1).standard_normal((2, 4000)).astype(np.float32)}
        kwargs, key = {k: torch.from_numpy(v) for k, v in feed.items()}, "last_hidden_state"
    else:
        x = np.random.default_rng(1).standard_normal((2, 8, 100)).astype(np.float32)
        feed = {"input_features": x, "decoder_input_ids": np.array([[1, 5, 9], [1, 7, 3]], np.int64)}
        kwargs, key = {k: torch.from_numpy(v) for k, v in feed.items()}, "logits"
    with torch.no_grad():
        want = getattr(model(**kwargs), key).numpy()
        plain = getattr(_other(kind)(**kwargs), key).numpy()
    assert np.abs(want - plain).max() > 1e-2, "the adapter must move the outputs"
    got = run_forward("onnx", out, feed)[key]
    assert_logits_close(got, want, f"LoRA {kind}")


def test_fused_weights(tmp_path):
    """An adapter on Phi-3's fused weights (qkv_proj: [q; k; v], gate_up_proj: [gate; up]; as Phi-4-multimodal's
    vision-lora and speech-lora target them) and its unfused o_proj: each part of a fused weight adds its columns of the
    update, the plain forward within 1e-4 of the adapted model in ONNX Runtime, the adapter shown to move the logits."""
    import transformers

    def phi3():
        torch.manual_seed(0)
        config = transformers.Phi3Config(**CONFIG, pad_token_id=0)
        return transformers.Phi3ForCausalLM._from_config(config, attn_implementation="eager").eval()
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    phi3().save_pretrained(ckpt)
    model = inject_lora(phi3(), ckpt, target_modules=["qkv_proj", "gate_up_proj", "o_proj"])
    proc = run_hfx(["export", ckpt, out, "--format", "onnx", "--dynamic"])
    assert proc.returncode == 0, describe(proc)
    _assert_adapted("onnx", out, model, phi3(), "LoRA on Phi-3's fused weights")


def test_quantized(tmp_path):
    """The adapter survives int8 weights (its A and B quantized like any linear): the logits stay near the adapted
    model's (int8's error here is under 0.01) and far from the base model's (0.6 away), which a dropped adapter
    gives."""
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

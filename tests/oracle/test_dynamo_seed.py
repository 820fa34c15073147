"""The Python system's I/O profile for torch.export ("export_format": "dynamo", "io": "seed"):
hfx's prefill.pt2 / decode.pt2 are called the way transformers.exporters' own DynamoExporter
programs are — keyword arguments, the cache a transformers StaticCache or DynamicCache object
(flattened by transformers' pytree registration), the result a ModelOutput holding logits and
cache — with the same input and output specs, input names and types as a fresh export by the seed
of the same tiny model (made here), and sample inputs that make the same cache template.

The seed docs' Dynamo decode loop ("Decode-loop inference examples") then runs on hfx's
decode.pt2 as written, on the CPU, with the two changes torch 2.15 / transformers 5.24 need for
the seed's own artifact too (add_safe_globals before loading; the keyword named `cache`), and
gives transformers' greedy tokens; the same loop on the seed's own decode.pt2 gives the same."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

import decoders_encoders_models as W
from conftest import describe, run_hfx

from seedutil import (MAX_CACHE_LEN, MODES, hfx_seed_export, pt2_call, pt2_prefill_then_decode,  # noqa: F401
                      seed_exporter)


@pytest.fixture(scope="module")
def ckpt(checkpoints, tmp_path_factory):
    """A checkpoint by name: the decoder variants, or decoders_encoders_models.py's (Qwen3-MoE, GPT-2)."""
    others = W.Checkpoints(tmp_path_factory.mktemp("seed_dynamo_others"))

    def get(name):
        return others(name) if name in ("qwen3_moe", "gpt2") else checkpoints(name)
    return get


def _hfx_export(checkpoint, out, mode):
    return hfx_seed_export(checkpoint, out, "dynamo", mode)


@pytest.fixture(scope="module")
def seed_exports(tmp_path_factory, ckpt):
    """transformers.exporters' own DynamoExporter export of a checkpoint, per mode (made once)."""
    return seed_exporter(tmp_path_factory, ckpt, "dynamo")


# Qwen3 declares layer_types (a static cache's mask is a dict per type); Qwen3-MoE and GPT-2 return
# other ModelOutput classes (Qwen3-MoE: MoeCausalLMOutputWithPast, CausalLMOutputWithCrossAttentions)
@pytest.mark.parametrize("name,mode", [("llama_default", m) for m in sorted(MODES)] +
                         [("qwen3", "static"), ("qwen3", "dynamic"), ("qwen3_moe", "dynamic"), ("gpt2", "static")])
def test_call_equals_the_seeds(ckpt, seed_exports, tmp_path, name, mode):
    seed = seed_exports(name, mode)
    ours = _hfx_export(ckpt(name), tmp_path / "hfx", mode)
    assert sorted(p.name for p in ours.glob("*.pt2")) == sorted(p.name for p in seed.glob("*.pt2")) == \
        ["decode.pt2", "prefill.pt2"]
    for comp in ("prefill", "decode"):
        got, want = pt2_call(ours / f"{comp}.pt2"), pt2_call(seed / f"{comp}.pt2")
        for key in want:
            assert got[key] == want[key], f"{comp}: {key}"


def _seed_dynamo_loop(out, prompt_ids, new_tokens):
    """The seed docs' Dynamo decode loop, as written there, on the CPU (device="cuda" dropped),
    with add_safe_globals([StaticCache]) before loading and the cache keyword `cache`."""
    from transformers import StaticCache
    from transformers.exporters.exporter_dynamo import register_pytree_node

    register_pytree_node(StaticCache)
    torch.serialization.add_safe_globals([StaticCache])
    exported = torch.export.load(str(out / "decode.pt2"))
    decode = exported.module()

    _, example_kwargs = exported.example_inputs
    past_key_values = copy.deepcopy(example_kwargs["cache"])
    past_key_values.reset()
    max_cache_len = past_key_values.layers[0].max_cache_len

    def causal_mask(positions, cache_len):
        return (torch.arange(cache_len)[None, :] <= positions[:, None])[None, None]

    prompt_len = prompt_ids.shape[1]
    positions = torch.arange(prompt_len)
    logits = decode(input_ids=prompt_ids, attention_mask=causal_mask(positions, max_cache_len),
                    position_ids=positions[None], cache=past_key_values).logits
    next_token = logits[:, -1:].argmax(-1)
    tokens = [int(next_token)]

    input_ids = torch.empty((1, 1), dtype=torch.long)
    position_ids = torch.empty((1, 1), dtype=torch.long)
    attention_mask = torch.empty((1, 1, 1, max_cache_len), dtype=torch.bool)
    slots = torch.arange(max_cache_len)
    for position in range(prompt_len, prompt_len + new_tokens - 1):
        input_ids.copy_(next_token)
        position_ids.fill_(position)
        attention_mask[0, 0, 0].copy_(slots <= position)
        logits = decode(input_ids=input_ids, attention_mask=attention_mask,
                        position_ids=position_ids, cache=past_key_values).logits
        next_token = logits[:, -1:].argmax(-1)
        tokens.append(int(next_token))
    return tokens


def _greedy(checkpoint, prompt, new_tokens):
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(str(checkpoint)).eval()
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)
    return out[0, prompt.shape[1]:].tolist()


def _prompt(checkpoint, n, seed):
    vocab = json.loads((checkpoint / "config.json").read_text())["vocab_size"]
    return torch.from_numpy(np.random.default_rng(seed).integers(3, vocab, size=(1, n)).astype(np.int64))


@pytest.mark.parametrize("name", ["llama_default", "granite", "gemma"])
def test_seed_dynamo_loop_gives_transformers_tokens(ckpt, tmp_path, name):
    ck = ckpt(name)
    out = _hfx_export(ck, tmp_path / "hfx", "static-multi")
    prompt = _prompt(ck, 6, 7)
    assert _seed_dynamo_loop(out, prompt, 32) == _greedy(ck, prompt, 32)


def test_one_loop_serves_both(ckpt, seed_exports, tmp_path):
    """The same loop on the seed's own decode.pt2 and on hfx's gives the same tokens."""
    ck = ckpt("llama_default")
    prompt = _prompt(ck, 5, 11)
    ours = _seed_dynamo_loop(_hfx_export(ck, tmp_path / "hfx", "static-multi"), prompt, 24)
    assert ours == _seed_dynamo_loop(seed_exports("llama_default", "static-multi"), prompt, 24) == \
        _greedy(ck, prompt, 24)


@pytest.mark.parametrize("name,mode", [("llama_default", "static"), ("llama_default", "dynamic"), ("gpt2", "dynamic"),
                                       ("qwen3_moe", "static")])
def test_prefill_then_decode_through_cache_objects(ckpt, tmp_path, name, mode):
    """The two-program layout as a torch caller runs it (seedutil.pt2_prefill_then_decode)."""
    ck = ckpt(name)
    out = _hfx_export(ck, tmp_path / "hfx", mode)
    prompt = _prompt(ck, 5, 3)
    assert pt2_prefill_then_decode(out, prompt, 24, mode == "static") == _greedy(ck, prompt, 24)


def test_the_programs_are_real(ckpt, tmp_path):
    """The seed-profile static decode (its cache written in place) passes the verifier and
    decomposes to the core ATen opset."""
    out = _hfx_export(ckpt("llama_default"), tmp_path / "hfx", "static-multi")
    ep = torch.export.load(str(out / "decode.pt2"))
    ep.validate()
    core = ep.run_decompositions()
    kinds = {s.kind.name for s in core.graph_signature.output_specs}
    assert "USER_INPUT_MUTATION" in kinds and "USER_OUTPUT" in kinds


def test_sliding_window_layers_are_refused(ckpt, tmp_path):
    """transformers' DynamicSlidingWindowLayer pins its token count in the program's input spec:
    refused with a message, nothing written."""
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"export_format": "dynamo", "dynamic": True, "io": "seed"}))
    out = tmp_path / "out"
    proc = run_hfx(["export", ckpt("mistral_swa"), out, "--config", cfg, "--for-generation", "--quiet"])
    assert proc.returncode == 2, describe(proc)
    assert "sliding-window" in proc.stderr and "optimum" in proc.stderr
    assert not out.exists() or not any(out.glob("*.pt2"))

"""What the OpenVINO GenAI VLMPipeline tests share (test_vlm.py, test_vlm_gemma3n.py): a tokenizer.json for a tiny
vocabulary with the special tokens GenAI looks up by name, hfx's stateful OpenVINO export of a checkpoint in the
pipeline, the token ids the pipeline streams, and transformers' greedy tokens to compare them with (through generate(),
or at the positions GenAI's Gemma 3 / 3n loops feed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

import ovutil
from conftest import describe, run_hfx


def tiny_tokenizer(model_dir: Path, vocab: int, special: dict):
    """A tokenizer.json in model_dir for a vocabulary of `vocab` ids: `special` {id: text} as special tokens, a
    byte-level symbol for every other id ("\\n"'s first: GenAI writes newlines around an image's tokens). Returns it."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    newline = "\u010a"  # the byte-level symbol of "\n"
    symbols = iter([newline] + sorted(set(pre_tokenizers.ByteLevel.alphabet()) - {newline}))
    table = {special[i] if i in special else next(symbols): i for i in range(vocab)}
    tok = Tokenizer(models.BPE(vocab=table, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(special[i], special=True) for i in sorted(special)])
    tok.save(str(model_dir / "tokenizer.json"))
    return tok


def pipeline(checkpoint: Path, tmp_path: Path, vocab: int, special: dict):
    """hfx's stateful OpenVINO export of a copy of `checkpoint` given tiny_tokenizer's tokenizer, in OpenVINO GenAI's
    VLMPipeline (f32): (pipeline, tokenizer, export folder)."""
    import openvino_genai
    model_dir = tmp_path / "ckpt"
    shutil.copytree(checkpoint, model_dir)
    tok = tiny_tokenizer(model_dir, vocab, special)
    out = tmp_path / "out"
    proc = run_hfx(["export", model_dir, out, "--format", "openvino", "--dynamic", "--for-generation"])
    assert proc.returncode == 0, describe(proc)
    return openvino_genai.VLMPipeline(str(out), "CPU", **ovutil.OV_CONFIG), tok, out


def streamed(pipe, prompt: str, image, new_tokens: int = 32) -> list:
    """The token ids the pipeline streams from the prompt and one raw image [H, W, 3] uint8 (no chat template: the tiny
    tokenizer has none)."""
    import openvino as ov
    tokens = ovutil.token_streamer()
    pipe.generate(prompt, images=[ov.Tensor(image[None])], max_new_tokens=new_tokens, streamer=tokens,
                  apply_chat_template=False)
    return tokens.ids


def greedy_through_eos(model, ids: list, new_tokens: int, **inputs) -> list:
    """transformers' generate() tokens after ids (one prompt, no padding), through the EOS it stops at; not a constant
    run (else the comparison could not fail)."""
    ids_t = torch.tensor([ids])
    with torch.no_grad():
        want = model.generate(ids_t, attention_mask=torch.ones_like(ids_t), **inputs, max_new_tokens=new_tokens,
                              do_sample=False)[0, len(ids):].tolist()
    eos = model.generation_config.eos_token_id
    want = want[:want.index(eos) + 1] if eos in want else want
    assert len(set(want)) > 4, "the reference must not be a constant run of tokens"
    return want


def greedy_at_positions(model, ids: list, prompt_first: int, new_tokens: int, block_token=None, **media) -> list:
    """transformers' greedy tokens (eager forward with a cache, no EOS stop) when the prompt's positions start at
    `prompt_first` and each new token's position is the count of tokens before it (GenAI's Gemma 3 and 3n loops: a
    1-based prompt, as optimum-intel's, then positions from the attention mask's length). block_token: the media token
    whose runs token_type_ids marks (Gemma 3's), None: no token_type_ids."""
    from transformers import DynamicCache
    cache, got, n = DynamicCache(config=model.config), [], len(ids)
    ids_t = torch.tensor([ids])
    typed = block_token is not None  # (a new token's type is 0, as GenAI feeds it)
    with torch.no_grad():
        out = model(input_ids=ids_t, position_ids=torch.arange(n)[None] + prompt_first, past_key_values=cache,
                    attention_mask=torch.ones_like(ids_t), **media,
                    **({"token_type_ids": (ids_t == block_token).long()} if typed else {}))
        for _ in range(new_tokens):
            got.append(int(out.logits[0, -1].argmax()))
            n += 1
            step = torch.tensor([got[-1:]])
            out = model(input_ids=step, position_ids=torch.tensor([[n - 1]]), past_key_values=cache,
                        attention_mask=torch.ones(1, n, dtype=torch.long),
                        **({"token_type_ids": torch.zeros_like(step)} if typed else {}))
    return got

#!/usr/bin/env python3
"""Writes tests/alloc/tiny-qwen2.gguf, the GGUF file the allocation sweep exports: a tiny random Qwen2 (fixed seed,
hidden 32, two layers) in Q8_0 and Q4_0 blocks with F32 norms and biases, and the byte-level BPE tokenizer
tests/oracle/test_gguf.py trains (so the sweep also fails every allocation of the tokenizer files' conversion).
Run with the oracle venv's python; the file is committed."""
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "oracle"))
import gguf  # noqa: E402
import test_gguf  # noqa: E402
from transformers import AutoModelForCausalLM, Qwen2Config  # noqa: E402

tokens, merges = test_gguf._tokenizer()
cfg = Qwen2Config(vocab_size=len(tokens), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128, tie_word_embeddings=True,
                  bos_token_id=len(tokens) - 3, eos_token_id=len(tokens) - 1, pad_token_id=len(tokens) - 3)
torch.manual_seed(0)
model = AutoModelForCausalLM.from_config(cfg).eval()
w = gguf.GGUFWriter(str(HERE / "tiny-qwen2.gguf"), "qwen2")
w.add_name("tiny-qwen2")
w.add_context_length(128)
w.add_block_count(2)
w.add_feed_forward_length(64)
w.add_embedding_length(32)
w.add_rope_freq_base(1000000.0)
w.add_head_count(4)
w.add_head_count_kv(2)
w.add_layer_norm_rms_eps(1e-6)
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("qwen2")
w.add_token_list(tokens)
w.add_token_types([3 if t.startswith("<|") else 1 for t in tokens])
w.add_token_merges(merges)
w.add_eos_token_id(cfg.eos_token_id)
w.add_pad_token_id(cfg.pad_token_id)
w.add_chat_template(test_gguf.CHAT)
names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN2, 2)
for name, p in model.state_dict().items():
    if name == "lm_head.weight":
        continue
    stem, suffix = name.rsplit(".", 1)
    x = p.numpy().astype(np.float32)
    kind = gguf.GGMLQuantizationType.Q4_0 if ".mlp." in name else gguf.GGMLQuantizationType.Q8_0
    if x.ndim == 2:
        w.add_tensor(names.get_name(stem) + "." + suffix, gguf.quants.quantize(x, kind), raw_dtype=kind)
    else:
        w.add_tensor(names.get_name(stem) + "." + suffix, x)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()

#!/usr/bin/env python3
"""Writes tests/alloc/tiny-llama-w4a16, the pre-quantized checkpoint the allocation sweep exports: a tiny random Llama
(fixed seed, hidden 32, two layers) whose linears compressed-tensors packs as 4-bit groups of 16 with zero points,
written by tests/oracle/test_prequant.py's own writer. Run with the oracle venv's python; the folder is committed."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "oracle"))
import torch  # noqa: E402
import test_prequant  # noqa: E402

test_prequant.CT_CASES["tiny"] = (dict(num_bits=4, symmetric=False, strategy="group", group_size=16),
                                  "pack-quantized", torch.float32)
from transformers import LlamaConfig  # noqa: E402

config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=8, max_position_embeddings=128, bos_token_id=1, eos_token_id=2,
                     tie_word_embeddings=False, architectures=["LlamaForCausalLM"])
test_prequant._write_ct("tiny", HERE / "tiny-llama-w4a16", config=config)

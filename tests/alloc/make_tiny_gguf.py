#!/usr/bin/env python3
"""Writes tests/alloc/tiny-qwen2.gguf, the GGUF file the allocation sweep exports: a tiny random Qwen2 (fixed seed,
hidden 32, two layers) in Q8_0 and Q4_0 blocks with F32 norms and biases, and the byte-level BPE tokenizer
tests/oracle/test_gguf.py trains (so the sweep also fails every allocation of the tokenizer files' conversion),
written by that test's own writer. Run with the oracle venv's python; the file is committed."""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "oracle"))
import test_gguf  # noqa: E402
from transformers import Qwen2Config  # noqa: E402

vocab = len(test_gguf._tokenizer()[0])
config = Qwen2Config(vocab_size=vocab, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=2, max_position_embeddings=128, rope_theta=1000000.0, rms_norm_eps=1e-6,
                     tie_word_embeddings=True, bos_token_id=vocab - 3, eos_token_id=vocab - 1, pad_token_id=vocab - 3)
test_gguf._write("tiny-qwen2", HERE / "tiny-qwen2.gguf", spec=("qwen2", {"*": "Q8_0", "ffn": "Q4_0"}), config=config)

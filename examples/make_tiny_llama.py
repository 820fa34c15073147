#!/usr/bin/env python3
"""Write examples/tiny-llama/: a tiny random LlamaForCausalLM checkpoint for `make demo`.

hidden 32, 2 layers, 4 attention heads / 2 key-value heads (GQA), vocab 64, intermediate 64,
float32, transformers' own initialisation under torch.manual_seed(0). The result is ~90 KB:
config.json, generation_config.json and model.safetensors. Deterministic: running it again
rewrites byte-identical files.

Run with the oracle virtualenv (transformers + torch):
    ~/.cache/hfx/venv/bin/python examples/make_tiny_llama.py [OUT_DIR]
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, GenerationConfig, LlamaConfig, LlamaForCausalLM  # noqa: E402


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "tiny-llama"
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()

    config = LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        rms_norm_eps=1e-6,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        tie_word_embeddings=False,
        bos_token_id=1,
        eos_token_id=2,
        dtype="float32",
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(torch.float32).eval()

    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    GenerationConfig(bos_token_id=1, eos_token_id=2, max_new_tokens=16, do_sample=False).save_pretrained(str(out))

    # Check: transformers loads it back to the same model.
    ids = torch.tensor([[1, 5, 9, 17, 33, 60]])
    with torch.no_grad():
        want = model(input_ids=ids).logits
        got = AutoModelForCausalLM.from_pretrained(str(out), dtype=torch.float32)(input_ids=ids).logits
    assert torch.equal(want, got), "reloaded checkpoint differs"

    n_params = sum(p.numel() for p in model.parameters())
    total = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"wrote {out}: LlamaForCausalLM, {n_params} parameters, {total} bytes")
    for p in sorted(out.iterdir()):
        print(f"  {p.name} ({p.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
